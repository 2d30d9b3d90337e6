"""A three-way merge of lines that never overwrites the person's text.

``base`` is what was checked out, ``ours`` the note as the person left it, ``theirs`` the copy the
agent edited. Each side's changes are found against the base; changes that touch different lines
both apply. Where both sides changed the same lines (or inserted at the same place) differently,
the person's lines stay and the overlap is reported: a checkout proposes, it never decides
between a person and an agent.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Hunk:
    start: int  #: first base line replaced
    end: int  #: past the last base line replaced (== start: an insertion before ``start``)
    lines: tuple[str, ...]  #: what the side has there


@dataclass(frozen=True, slots=True)
class Overlap:
    line: int  #: 0-based line of the merged text where the kept (person's) text starts
    ours: str
    theirs: str


@dataclass(frozen=True, slots=True)
class Merged:
    text: str
    overlaps: tuple[Overlap, ...]


def hunks(base: list[str], side: list[str]) -> list[Hunk]:
    """Where ``side`` differs from ``base``, as replacements of base line ranges."""
    matcher = difflib.SequenceMatcher(None, base, side, autojunk=False)
    return [Hunk(i1, i2, tuple(side[j1:j2])) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _touch(a: Hunk, b: Hunk) -> bool:
    """Whether two hunks of different sides change the same place: overlapping ranges, the same
    insertion point, or an insertion inside (or at an edge of) the other's range."""
    if a.start < b.end and b.start < a.end:
        return True
    if a.start == b.start:
        return True
    if a.start == a.end and b.start <= a.start <= b.end:
        return True
    return b.start == b.end and a.start <= b.start <= a.end


def _region(base: list[str], start: int, end: int, side: list[Hunk]) -> list[str]:
    """Base lines ``start..end`` with one side's hunks (all inside the range) applied."""
    out: list[str] = []
    at = start
    for h in sorted(side, key=lambda h: (h.start, h.end)):
        out += base[at : h.start]
        out += h.lines
        at = max(at, h.end)
    out += base[at:end]
    return out


def merge(base: str, ours: str, theirs: str) -> Merged:
    """The merged text and the overlaps, where the person's text was kept (see the module)."""
    if ours == theirs or theirs == base:
        return Merged(ours, ())
    if ours == base:
        return Merged(theirs, ())
    b = base.splitlines(keepends=True)
    tagged = sorted(
        [(h, 0) for h in hunks(b, ours.splitlines(keepends=True))] + [(h, 1) for h in hunks(b, theirs.splitlines(keepends=True))],
        key=lambda t: (t[0].start, t[0].end, t[1]),
    )
    groups: list[list[tuple[Hunk, int]]] = []
    for item in tagged:
        if groups and any(_touch(item[0], other) for other, _ in groups[-1]):
            groups[-1].append(item)
        elif groups and max(h.end for h, _ in groups[-1]) > item[0].start:
            groups[-1].append(item)
        else:
            groups.append([item])
    out: list[str] = []
    overlaps: list[Overlap] = []
    at = 0
    for group in groups:
        start = min(h.start for h, _ in group)
        end = max(h.end for h, _ in group)
        out += b[at:start]
        mine = [h for h, side in group if side == 0]
        other = [h for h, side in group if side == 1]
        ours_text = _region(b, start, end, mine)
        theirs_text = _region(b, start, end, other)
        if not other:
            out += ours_text
        elif not mine:
            out += theirs_text
        else:
            if ours_text != theirs_text:
                overlaps.append(Overlap(line=len(out), ours="".join(ours_text), theirs="".join(theirs_text)))
            out += ours_text
        at = end
    out += b[at:]
    return Merged("".join(out), tuple(overlaps))
