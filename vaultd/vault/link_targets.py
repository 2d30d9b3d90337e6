"""Obsidian link resolution: which file a link names, whether its anchor exists, and what a dead
link probably meant.

Rules (kept in this one module so the index, lint and the writers agree on which links are
dead):

- Names compare after NFC normalization and case folding, so a note saved under an NFD name by
  another tool is found from an NFC link, and ``[[alpha]]`` finds ``Alpha.md``.
- ``.md`` is optional for notes (``[[t.md]]`` is ``[[t]]``); an attachment link must carry its
  extension (``[[diagram.png]]``).
- A bare name resolves when exactly one file has it (the stem for notes, the whole name for
  attachments). Two files whose names differ only by case or Unicode normalization, or one name in
  two folders, make the bare link **ambiguous**: Obsidian would pick one silently; we name the
  candidates so a person or agent can add the folder.
- A link with a folder part resolves, in order, by vault-relative path, by path relative to the
  source note's folder (as Markdown links are often written), then by unique path suffix
  (``[[sub/t]]`` finds ``a/sub/t.md``). A link starting ``./`` or ``../`` is relative to the
  source note's folder only; a leading ``/`` means the vault root only.
- Target ``""`` (``[[#Heading]]``) is the source note itself.
- Aliases are not link targets, as in Obsidian; the index keeps a separate alias map for reads.
"""

from __future__ import annotations

import enum
import functools
import posixpath
import re
import sys
import unicodedata
from typing import TYPE_CHECKING

import msgspec

from vaultd.vault.path_bags import PathBag, added, members, removed

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from vaultd.vault.model import Block, Heading

__all__ = [
    "SUGGEST_MIN_SCORE",
    "LinkResolver",
    "Resolution",
    "ResolutionStatus",
    "Suggester",
    "check_anchor",
    "name_key",
    "suggest",
]


class ResolutionStatus(enum.StrEnum):
    RESOLVED = "resolved"  #: exactly one file matches; ``path`` names it
    MISSING = "missing"  #: no file matches (a dead link)
    AMBIGUOUS = "ambiguous"  #: several files match; ``candidates`` lists them


class Resolution(msgspec.Struct, frozen=True):
    """What a link target resolves to, and why."""

    status: ResolutionStatus
    path: str | None = None  #: the resolved file, vault-relative and spelled as on disk
    candidates: list[str] = []  #: sorted, for AMBIGUOUS
    reason: str = ""  #: one sentence for people: what matched, or what to do


def name_key(s: str) -> str:
    """The form names are compared in: NFC, then case-folded.

    An ASCII name is its own NFC form and folds as it lowers, which costs less than a cache
    lookup; only other names go through the cache (it held every link target of a vault, 5 MB
    at 10,000 notes, when ASCII names went through it too).
    """
    if s.isascii():
        return s.lower()
    return _wide_name_key(s)


@functools.lru_cache(maxsize=4096)
def _wide_name_key(s: str) -> str:
    return unicodedata.normalize("NFC", s).casefold()


def _is_note(path: str) -> bool:
    return path[-3:].lower() == ".md"


class LinkResolver:
    """Resolves link targets against the vault's files, updated one path at a time.

    Holds two maps of path groups (:mod:`~vaultd.vault.path_bags`, ordered: one path alone, or
    a tuple): file *name* key (note stem, attachment full name) -> paths, and *path* key
    (vault-relative, ``.md`` dropped for notes) -> paths. A group of more than one is what makes
    a link ambiguous. Both maps are built from every file, notes and attachments alike.

    A group is never changed once in a map, only replaced, so :meth:`copy` copies the maps and
    shares the groups: a copy of a 20,000-note vault's resolver costs a millisecond or two, where
    copying each list cost about a hundred (a vault-wide reader takes one and lets the index go).
    """

    def __init__(self, paths: Iterable[str] = ()) -> None:
        self._by_name: dict[str, PathBag] = {}
        self._by_path: dict[str, PathBag] = {}
        self._path_key: dict[str, str] = {}
        self._attachment_stems: dict[str, int] = {}  # only to say "add the extension"
        for path in paths:
            self.add(path)

    def __contains__(self, path: object) -> bool:
        return path in self._path_key

    def __len__(self) -> int:
        return len(self._path_key)

    @staticmethod
    def _keys(path: str) -> tuple[str, str]:
        key = name_key(path)
        if _is_note(path):
            key = key[:-3]
        return key.rpartition("/")[2], key

    def add(self, path: str) -> None:
        """Add one vault-relative file path (POSIX separators, spelled as on disk)."""
        if path in self._path_key:
            return
        name, key = self._keys(path)
        # Interned: the backlink map's keys are these names, one string for both.
        shared = sys.intern(name)
        name, key = shared, (shared if name is key else key)
        self._path_key[path] = key
        self._by_name[name] = added(self._by_name.get(name), path, ordered=True)
        self._by_path[key] = added(self._by_path.get(key), path, ordered=True)
        if not _is_note(path) and "." in name:
            stem = name.rpartition(".")[0]
            self._attachment_stems[stem] = self._attachment_stems.get(stem, 0) + 1

    def remove(self, path: str) -> None:
        """Forget one path; unknown paths are ignored, so a replayed delete is harmless."""
        key = self._path_key.pop(path, None)
        if key is None:
            return
        for table, k in ((self._by_name, key.rpartition("/")[2]), (self._by_path, key)):
            entries = removed(table[k], path)
            if entries is not None:
                table[k] = entries
            else:
                del table[k]
        name = key.rpartition("/")[2]
        if not _is_note(path) and "." in name:
            stem = name.rpartition(".")[0]
            left = self._attachment_stems.pop(stem) - 1
            if left:
                self._attachment_stems[stem] = left

    def copy(self) -> LinkResolver:
        """A resolver of the same files that later changes to this one leave alone."""
        twin = LinkResolver()
        twin._by_name = dict(self._by_name)
        twin._by_path = dict(self._by_path)
        twin._path_key = dict(self._path_key)
        twin._attachment_stems = dict(self._attachment_stems)
        return twin

    def paths(self) -> list[str]:
        """Every file, in the order added: ``LinkResolver(r.paths())`` resolves as ``r`` does,
        ambiguous candidates in the same order (each name's list keeps that order)."""
        return list(self._path_key)

    def same_key(self, path: str) -> list[str]:
        """Existing files whose path equals ``path`` after NFC and case folding (a collision)."""
        return [p for p in members(self._by_path.get(self._keys(path)[1])) if p != path]

    def resolve(self, target: str, source_path: str) -> Resolution:
        """Resolve one link target (the path part, no anchor) written in ``source_path``."""
        target = target.strip()
        if not target:
            return Resolution(ResolutionStatus.RESOLVED, source_path, reason="a link to the note itself")
        if "/" in target:
            return self._resolve_path(target, source_path)
        key = name_key(target)
        found = self._lookup(self._by_name, key)
        if not found and key in self._attachment_stems:
            return Resolution(
                ResolutionStatus.MISSING,
                reason=f"no note is named {target!r}; an attachment is: links to attachments need the extension",
            )
        return self._finish(found, target, by_name=True)

    @staticmethod
    def _lookup(table: dict[str, PathBag], key: str) -> list[str]:
        """Entries for ``key``; a key ending in ``.md`` matches notes only, by their stem."""
        if key.endswith(".md"):
            return [p for p in members(table.get(key[:-3])) if _is_note(p)]
        return list(members(table.get(key)))

    def _resolve_path(self, target: str, source_path: str) -> Resolution:
        rooted = target.startswith("/")
        rel = target.lstrip("/")
        from_vault = posixpath.normpath(rel)
        from_source = posixpath.normpath(posixpath.join(posixpath.dirname(source_path), rel))
        explicit = target.startswith(("./", "../"))
        tries = [from_vault] if rooted else [from_source] if explicit else [from_vault, from_source]
        for candidate in tries:
            if candidate == ".." or candidate.startswith("../"):
                continue  # outside the vault
            found = self._lookup(self._by_path, name_key(candidate))
            if found:
                return self._finish(found, target, by_name=False)
        if rooted or explicit or ".." in from_vault.split("/"):
            return self._finish([], target, by_name=False)  # explicit paths get no suffix search
        key = name_key(from_vault.removeprefix("./"))
        name = key.rpartition("/")[2]
        suffix_key = key.removesuffix(".md")
        found = [p for p in self._lookup(self._by_name, name) if self._path_key[p].endswith("/" + suffix_key)]
        return self._finish(found, target, by_name=False)

    @staticmethod
    def _finish(found: list[str], target: str, *, by_name: bool) -> Resolution:
        if len(found) == 1:
            return Resolution(ResolutionStatus.RESOLVED, found[0], reason="matched by " + ("name" if by_name else "path"))
        if not found:
            what = "name" if by_name else "path"
            return Resolution(ResolutionStatus.MISSING, reason=f"no note or file has the {what} {target!r}")
        folders = {posixpath.dirname(p) for p in found}
        why = (
            "names that differ only by letter case or Unicode normalization"
            if len(folders) < len(found)
            else "the same name in several folders"
        )
        return Resolution(
            ResolutionStatus.AMBIGUOUS,
            candidates=sorted(found),
            reason=f"{target!r} matches {len(found)} files ({why}); write the link with the folder path",
        )


# -- anchors ------------------------------------------------------------------------------------

_HEADING_NOISE_RE = re.compile(r"[\s#^|\[\]:\\]+")


def heading_key(text: str) -> str:
    """Headings compare as Obsidian links them: trimmed, case-insensitive, and with the characters
    a link cannot carry (``# ^ | [ ] : \\``) read as spaces, since Obsidian writes them so."""
    return _HEADING_NOISE_RE.sub(" ", unicodedata.normalize("NFC", text)).strip().casefold()


def check_anchor(anchor: str, headings: Sequence[Heading], blocks: Sequence[Block]) -> str | None:
    """None when the anchor exists in a note with these headings and blocks, else the reason.

    ``^id`` names a block id (case-insensitive). ``H1#H2`` names nested headings: each part after
    the first must be found below the previous one, inside its section and at a deeper level.
    """
    anchor = anchor.strip()
    if anchor.startswith("^"):
        want = anchor[1:].strip().casefold()
        if any(b.id.casefold() == want for b in blocks):
            return None
        return f"no block ^{anchor[1:].strip()} in the note"
    parts = [k for k in (heading_key(p) for p in anchor.split("#")) if k]
    if not parts:
        return None
    keys = [heading_key(h.text) for h in headings]
    if _match_nested(parts, headings, keys, 0, len(headings), 0):
        return None
    if len(parts) == 1 or not any(k == parts[0] for k in keys):
        return f"no heading {anchor.split('#')[0].strip() or anchor!r} in the note"
    return f"no heading path {anchor!r} in the note (each part must be nested under the one before)"


def _match_nested(parts: list[str], headings: Sequence[Heading], keys: list[str], lo: int, hi: int, level: int) -> bool:
    """True when ``parts`` can be found nested inside ``headings[lo:hi]`` deeper than ``level``."""
    for i in range(lo, hi):
        if headings[i].level <= level:
            return False  # left the parent's section
        if keys[i] != parts[0]:
            continue
        if len(parts) == 1:
            return True
        end = next((j for j in range(i + 1, hi) if headings[j].level <= headings[i].level), hi)
        if _match_nested(parts[1:], headings, keys, i + 1, end, headings[i].level):
            return True
    return False


# -- suggestions --------------------------------------------------------------------------------

#: The lowest score (0..100, rapidfuzz ``ratio`` over lower-cased, punctuation-free text) for a
#: suggestion. At 85, ``project-alpah`` still finds ``Project Alpha`` and a one-letter slip in a
#: two-word title passes, while titles that merely share a word stay below it.
SUGGEST_MIN_SCORE = 85.0


def _default_process(text: str) -> str:
    """rapidfuzz's normalization (lower case, punctuation and ``-`` as spaces), loaded when first used."""
    from rapidfuzz import utils

    return str(utils.default_process(text))


class Suggester:
    """Dead-link suggestions over a changing set of titles, each normalized once.

    ``default_process`` (lower case, punctuation and ``-`` as spaces) costs more than the score
    itself; doing it when a title is added instead of on every lookup makes one lookup over
    100,000 titles about seven times faster (about 15 ms instead of about 110 ms). The titles
    are normalized at the first suggestion, not as they are added: a daemon that builds and
    reads an index and never suggests a title never loads rapidfuzz nor holds a second copy of
    every title.
    """

    def __init__(self, titles: Iterable[str] = ()) -> None:
        self._processed: dict[str, str | None] = {}  #: title -> normalized (None before the first suggestion)
        self._normalized = False  #: whether every value is there (and is kept there as titles are added)
        for title in titles:
            self.add(title)

    def __len__(self) -> int:
        return len(self._processed)

    def __contains__(self, title: object) -> bool:
        return title in self._processed

    def add(self, title: str) -> None:
        self._processed[title] = _default_process(title) if self._normalized else None

    def remove(self, title: str) -> None:
        self._processed.pop(title, None)

    def copy(self) -> Suggester:
        """A suggester over the same titles that later changes to this one leave alone."""
        twin = Suggester()
        twin._processed = dict(self._processed)
        twin._normalized = self._normalized
        return twin

    def titles(self) -> list[str]:
        """Every title, in the order added: ``Suggester(s.titles())`` breaks ties as ``s`` does."""
        return list(self._processed)

    def suggest(self, text: str) -> tuple[str, float] | None:
        """The one title ``text`` most likely meant, with its score; None below the threshold."""
        from rapidfuzz import fuzz, process, utils  # loaded with the first suggestion

        query = utils.default_process(text)
        if not query.strip():
            return None
        if not self._normalized:
            self._processed = {title: utils.default_process(title) for title in self._processed}
            self._normalized = True
        best = process.extractOne(query, self._processed, scorer=fuzz.ratio, processor=None, score_cutoff=SUGGEST_MIN_SCORE)
        if best is None:
            return None
        return best[2], float(best[1])


def suggest(text: str, titles: Sequence[str]) -> tuple[str, float] | None:
    """The one title a dead link most likely meant, with its score; None below the threshold.

    Uses ``fuzz.ratio`` (a normalized edit distance, the cheapest rapidfuzz scorer) after
    ``default_process`` (lower case, punctuation and ``-`` as spaces), so ``alpha-beta`` and
    ``Alpha Beta`` score 100. It is a hint only; nothing rewrites a link from it. For repeated
    lookups over the same titles, keep a :class:`Suggester`.
    """
    from rapidfuzz import fuzz, process, utils  # loaded with the first suggestion

    query = utils.default_process(text)
    if not query.strip():
        return None
    best = process.extractOne(query, titles, scorer=fuzz.ratio, processor=utils.default_process, score_cutoff=SUGGEST_MIN_SCORE)
    if best is None:
        return None
    return best[0], float(best[1])
