"""Name rules: names and titles several notes share (L07), and tags spelled several ways (L11).

A name clash is what makes ``[[Name]]`` ambiguous: two files whose link names (a note's stem,
an attachment's file name) are equal after NFC and case folding. Each file of a clash gets a
finding naming the others and how many links by that bare name are now ambiguous; those links
are L02 findings, fixed by ``lint.fix`` where Obsidian's choice is clear. A title shared by
notes of different names breaks no link but makes search and the graph view confusing.

A tag's spellings are twins when they differ only by letter case (Obsidian treats them as one
tag, and shows whichever it met first) or when a tag is used both on its own and nested under
another (``#method`` and ``#pkm/method``). Each note using a spelling other than the most used
one gets a finding that names the spellings with their counts.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from protocol.methods.lint import LintCode
from vaultd.lint.model import Finding, LintInput
from vaultd.vault.index import note_key
from vaultd.vault.link_targets import ResolutionStatus, name_key

if TYPE_CHECKING:
    from collections.abc import Iterator

MAX_NAMED = 5
_AMBIGUOUS = ResolutionStatus.AMBIGUOUS


def _others(paths: list[str], path: str) -> str:
    others = [p for p in paths if p != path]
    more = f" and {len(others) - MAX_NAMED} more" if len(others) > MAX_NAMED else ""
    return ", ".join(others[:MAX_NAMED]) + more


def clash_findings(inp: LintInput) -> Iterator[Finding]:
    snap = inp.snap
    by_name: dict[str, list[str]] = {}
    for path in snap.notes:
        by_name.setdefault(note_key(path), []).append(path)
    for path in snap.attachments:
        by_name.setdefault(name_key(path.rpartition("/")[2]), []).append(path)
    ambiguous: Counter[str] = Counter()
    for path, marks in snap.flagged.items():
        inp.deadline.tick()
        written, answers = snap.notes[path].links, snap.answers[path]
        for i in marks:
            if answers[i][0] is _AMBIGUOUS and "/" not in written[i].target:
                ambiguous[note_key(written[i].target.strip())] += 1
    for key, paths in sorted(by_name.items()):
        if len(paths) < 2:
            continue
        paths.sort()
        count = ambiguous.get(key, 0)
        links = f"; {count} link{'s' if count != 1 else ''} by that bare name {'are' if count != 1 else 'is'} ambiguous" if count else ""
        for path in paths:
            name = path.rpartition("/")[2]
            name = name[:-3] if name.lower().endswith(".md") else name
            yield Finding(LintCode.L07, path, f"the name {name!r} is also taken by {_others(paths, path)}{links}")
    by_title: dict[str, list[str]] = {}
    for path, record in snap.notes.items():
        inp.deadline.tick()
        by_title.setdefault(record.title.strip().casefold(), []).append(path)
    for _title, paths in sorted(by_title.items()):
        names = {note_key(p) for p in paths}
        if len(paths) < 2 or len(names) < 2:
            continue  # one name in several folders is a clash, reported above
        paths.sort()
        for path in paths:
            yield Finding(LintCode.L07, path, f"the title {snap.notes[path].title!r} is also the title of {_others(paths, path)}")


def tag_findings(inp: LintInput) -> Iterator[Finding]:
    snap = inp.snap
    uses: dict[str, set[str]] = {}  #: spelling -> notes using it
    for path, record in snap.notes.items():
        inp.deadline.tick()
        for tag in record.tags:
            uses.setdefault(tag.name, set()).add(path)
    groups: dict[str, set[str]] = {}  #: twin key -> spellings
    for spelling in uses:
        folded = spelling.casefold()
        groups.setdefault(folded, set()).add(spelling)
    leaves: dict[str, set[str]] = {}
    for folded in groups:
        leaves.setdefault(folded.rpartition("/")[2], set()).add(folded)
    reported: set[tuple[str, str]] = set()
    for _folded, spellings in sorted(groups.items()):
        if len(spellings) > 1:
            yield from _twins(uses, sorted(spellings), "letter case", reported)
    for leaf, forms in sorted(leaves.items()):
        if leaf in forms and len(forms) > 1:  # used on its own and nested under another tag
            yield from _twins(uses, sorted(s for f in forms for s in groups[f]), "nesting", reported)


def _twins(uses: dict[str, set[str]], spellings: list[str], how: str, reported: set[tuple[str, str]]) -> Iterator[Finding]:
    counts = sorted(((len(uses[s]), s) for s in spellings), key=lambda c: (-c[0], c[1]))
    main = counts[0][1]
    listed = ", ".join(f"#{s} ({n} note{'s' if n != 1 else ''})" for n, s in counts)
    for _, spelling in counts[1:]:
        for path in sorted(uses[spelling]):
            if (path, spelling) in reported:
                continue
            reported.add((path, spelling))
            yield Finding(LintCode.L11, path, f"#{spelling} is one tag spelled several ways ({how}): {listed}; the most used is #{main}")
