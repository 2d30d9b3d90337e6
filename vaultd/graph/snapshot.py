"""One resolution of every link in the vault, shared by lint, the graph methods and the navigator.

The index resolves a link when it is read; a vault-wide question (lint, communities, hubs)
reads them all, so :func:`snapshot` resolves each link once, remembers the answer per index
generation, and every later question until the next change reuses it. A link's answer depends on
its target text and, for a target with a folder part, on the linking note's folder: the memo is
keyed by exactly that, so a 10,000-note vault resolves each distinct target about once.

What a caller sees is the snapshot restricted to what it may see (:meth:`LinkSnapshot.restricted`):
a private note is not a node, its links are not edges, and a visible note's link to it stays
resolved but names no path, as ``note.links`` shows it.

Threading: build it in a worker thread while the index is held still, or from a copy of the
index (:class:`~vaultd.vault.index.IndexCopy`) with the index released; a built snapshot is
immutable and may be read from any thread.
"""

from __future__ import annotations

import posixpath
import threading
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vaultd.graph.topics import Misnamed, parents_of
from vaultd.memory import collector_paused
from vaultd.vault import markdown
from vaultd.vault.index import IndexCopy
from vaultd.vault.link_targets import ResolutionStatus
from vaultd.vault.model import Link, LinkKind, NoteRecord
from vaultd.vault.note_table import subset
from vaultd.vault.walk import is_note_path

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

    from vaultd.vault.index import VaultIndex

#: What one link target resolves to: (status, path, candidates, reason, private). Shared by every
#: link with the same answer, so a snapshot of 100,000 links allocates per distinct target only.
Answer = tuple[ResolutionStatus, str | None, tuple[str, ...], str, bool]


@dataclass(frozen=True, slots=True)
class Resolved:
    """One link as the snapshot resolved it."""

    link: Link
    status: ResolutionStatus
    path: str | None  #: the file it names; None when missing, ambiguous, or private to the caller
    candidates: tuple[str, ...] = ()
    reason: str = ""
    private: bool = False  #: resolved, to a note the caller may not see


# Enum members read once: a class attribute lookup per link costs more than the rest of the loop.
_FRONTMATTER = LinkKind.FRONTMATTER
_EMBED = LinkKind.EMBED
_RESOLVED = ResolutionStatus.RESOLVED
_AMBIGUOUS = ResolutionStatus.AMBIGUOUS


def relation_of(link: Link, frontmatter_keys: Mapping[str, str]) -> str:
    """The relation an edge carries: the frontmatter key a header link sits in, else link or embed."""
    kind = link.kind
    if kind is _FRONTMATTER:
        return frontmatter_keys.get(link.target, "frontmatter")
    return "embed" if kind is _EMBED else "link"


def _frontmatter_keys(record: NoteRecord) -> dict[str, str]:
    """Each frontmatter link target mapped to the first key holding it."""
    keys: dict[str, str] = {}
    for key, value in (record.frontmatter or {}).items():
        values = value if isinstance(value, list) else [value]
        for v in values:
            if isinstance(v, str) and "[[" in v:
                for lk in markdown.links_in_value(v, 1):
                    keys.setdefault(lk.target, key)
    return keys


_LOCK = threading.Lock()


@dataclass(slots=True)
class LinkSnapshot:
    """The vault's notes and resolved links at one index generation."""

    notes: Mapping[str, NoteRecord]  #: the graph's notes (vaultd's own log left out), by path
    answers: dict[str, list[Answer]]  #: each note's link answers, aligned with its record's links
    #: Per note, the positions of the links lint must look at: not resolved, or with an anchor.
    flagged: dict[str, list[int]] = field(default_factory=dict)
    out: dict[str, dict[str, set[str]]] = field(default_factory=dict)  #: source -> target note -> relations
    into: dict[str, dict[str, set[str]]] = field(default_factory=dict)  #: target note -> source -> relations
    linked_files: dict[str, set[str]] = field(default_factory=dict)  #: attachment -> notes linking or embedding it
    parents: dict[str, list[str]] = field(default_factory=dict)  #: note -> its parents (topic map)
    misnamed: dict[str, list[Misnamed]] = field(default_factory=dict)
    attachments: list[str] = field(default_factory=list)  #: every non-note file, sorted
    skipped: dict[str, tuple[str, str]] = field(default_factory=dict)  #: path -> (code, reason)
    parent_keys: tuple[str, ...] = ()
    #: Answers derived from this snapshot (communities, hubs), kept as long as it is current.
    derived: dict[tuple[object, ...], object] = field(default_factory=dict)

    @property
    def paths(self) -> list[str]:
        return sorted(self.notes)

    def title(self, path: str) -> str:
        record = self.notes.get(path)
        return record.title if record is not None else posixpath.basename(path)

    def resolved(self, path: str) -> Iterator[Resolved]:
        """Each link of the note with its answer, in the record's order."""
        for link, (status, target, candidates, reason, private) in zip(self.notes[path].links, self.answers.get(path, ()), strict=False):
            yield Resolved(link, status, target, candidates, reason, private)

    def neighbours(self, path: str) -> set[str]:
        """Notes linked with ``path`` either way (itself excluded)."""
        return (self.out.get(path, {}).keys() | self.into.get(path, {}).keys()) - {path}

    def restricted(self, hidden: Callable[[str], bool]) -> LinkSnapshot:
        """The snapshot as a caller who may not see ``hidden`` paths sees it."""
        notes = subset(self.notes, lambda p: not hidden(p))
        answers: dict[str, list[Answer]] = {}
        # A name a private note shares with a visible one names the visible one, for a caller
        # who cannot see the other: the link is resolved, not ambiguous (source, target, link).
        disambiguated: list[tuple[str, str, Link]] = []
        for path in notes:
            shown: list[Answer] = []
            for i, answer in enumerate(self.answers[path]):
                status, target, candidates, reason, _ = answer
                if target is not None and hidden(target):
                    answer = (_RESOLVED, None, (), reason, True)
                elif candidates:
                    kept = tuple(c for c in candidates if not hidden(c))
                    if status is _AMBIGUOUS and len(kept) == 1:
                        answer = (_RESOLVED, kept[0], (), "", False)
                        disambiguated.append((path, kept[0], self.notes[path].links[i]))
                    elif status is _AMBIGUOUS and not kept:
                        answer = (_RESOLVED, None, (), "", True)
                    else:
                        answer = (status, target, kept, reason, False)
                shown.append(answer)
            answers[path] = shown
        view = LinkSnapshot(
            notes=notes,
            answers=answers,
            flagged={p: marks for p, marks in self.flagged.items() if p in notes},
            attachments=[a for a in self.attachments if not hidden(a)],
            skipped={p: s for p, s in self.skipped.items() if not hidden(p)},
            parent_keys=self.parent_keys,
        )
        for source in notes:
            for target, relations in self.out.get(source, {}).items():
                if target in notes:
                    view.out.setdefault(source, {})[target] = set(relations)
                    view.into.setdefault(target, {})[source] = set(relations)
        for file, sources in self.linked_files.items():
            if not hidden(file):
                seen = {s for s in sources if s in notes}
                if seen:
                    view.linked_files[file] = seen
        for source, target, link in disambiguated:
            if target == source:
                continue
            if target in notes:
                relation = relation_of(link, _frontmatter_keys(notes[source]) if notes[source].frontmatter else {})
                rels = view.out.setdefault(source, {}).setdefault(target, set())
                view.into.setdefault(target, {})[source] = rels
                rels.add(relation)
            elif not is_note_path(target):
                view.linked_files.setdefault(target, set()).add(source)
        for path in notes:
            view.parents[path] = [p for p in self.parents.get(path, []) if p in notes]
            if path in self.misnamed:
                view.misnamed[path] = self.misnamed[path]
        return view


def build(index: VaultIndex | IndexCopy, parent_keys: tuple[str, ...], leave_out: frozenset[str] = frozenset()) -> LinkSnapshot:
    """Resolve every link of every note in ``index`` (worker thread, index held still or copied)."""
    with collector_paused():
        return _build(index, parent_keys, leave_out)


def _build(index: VaultIndex | IndexCopy, parent_keys: tuple[str, ...], leave_out: frozenset[str]) -> LinkSnapshot:
    resolver = index.resolver
    bare: dict[str, Answer] = {}  #: a target without a folder part resolves the same from every note
    pathed: dict[tuple[str, str], Answer] = {}  #: one with a folder part depends on the note's folder

    def resolve_full(target: str, source: str) -> Answer:
        found = bare.get(target)
        if found is not None:
            return found
        stripped = target.strip()
        if not stripped:
            return (_RESOLVED, source, (), "a link to the note itself", False)
        if "/" in stripped:
            key = (stripped, posixpath.dirname(source))
            found = pathed.get(key)
            if found is None:
                res = resolver.resolve(stripped, source)
                found = pathed[key] = (res.status, res.path, tuple(res.candidates), res.reason, False)
            return found
        res = resolver.resolve(stripped, source)
        found = bare[target] = (res.status, res.path, tuple(res.candidates), res.reason, False)
        return found

    def resolve(target: str, source: str) -> tuple[ResolutionStatus, str | None]:
        answer = resolve_full(target, source)
        return answer[0], answer[1]

    notes = subset(index.notes, lambda p: p not in leave_out)
    snap = LinkSnapshot(
        notes=notes,
        answers={},
        attachments=sorted(index.attachments),
        skipped={p: (s.code, s.reason) for p, s in index.skipped.items() if p not in leave_out},
        parent_keys=parent_keys,
    )
    out, into, linked_files, answers = snap.out, snap.into, snap.linked_files, snap.answers
    for path in sorted(notes):
        record = notes[path]
        fm_keys = _frontmatter_keys(record) if record.frontmatter else {}
        mine: dict[str, set[str]] | None = None
        found = answers[path] = [resolve_full(link.target, path) for link in record.links]
        marks = [i for i, (link, answer) in enumerate(zip(record.links, found, strict=True)) if answer[0] is not _RESOLVED or link.anchor]
        if marks:
            snap.flagged[path] = marks
        for link, (status, target, _, _, _) in zip(record.links, found, strict=True):
            if status is not _RESOLVED or target is None or target == path:
                continue
            if target in notes:
                relation = relation_of(link, fm_keys)
                if mine is None:
                    mine = out[path] = {}
                rels = mine.get(target)
                if rels is None:
                    rels = mine[target] = set()
                    into.setdefault(target, {})[path] = rels
                rels.add(relation)
            elif not is_note_path(target):
                linked_files.setdefault(target, set()).add(path)
        if record.frontmatter and any(k in record.frontmatter for k in parent_keys):
            parents, misnamed = parents_of(path, record.frontmatter, parent_keys, resolve)
            snap.parents[path] = [p for p in parents if p in notes]
            if misnamed:
                snap.misnamed[path] = misnamed
    return snap


# -- the cache ------------------------------------------------------------------------------------


_CACHE: weakref.WeakKeyDictionary[VaultIndex, dict[tuple[object, ...], LinkSnapshot]] = weakref.WeakKeyDictionary()
MAX_VIEWS = 8  #: restricted views kept per index generation (one per set of private globs)


def snapshot(
    index: VaultIndex | IndexCopy,
    parent_keys: tuple[str, ...],
    leave_out: frozenset[str] = frozenset(),
    hidden: Callable[[str], bool] | None = None,
    view_key: tuple[str, ...] = (),
) -> LinkSnapshot:
    """The snapshot of ``index`` now, built once per generation (and per view of it).

    From a copy, the snapshot kept for the index it was copied from serves when it is of the
    copy's generation, and one built from the copy is kept for that index unless a newer one
    already is."""
    owner = index.origin if isinstance(index, IndexCopy) else index
    base_key: tuple[object, ...] = (index.generation, parent_keys, leave_out)
    with _LOCK:
        kept = _CACHE.get(owner)
        if kept is None or next(iter(kept))[:3] != base_key:
            kept = None
    if kept is None:
        built = build(index, parent_keys, leave_out)
        with _LOCK:
            kept = {(*base_key, ()): built}
            current = _CACHE.get(owner)
            if current is None or _generation(current) <= index.generation:
                _CACHE[owner] = kept
    base = kept[(*base_key, ())]
    if hidden is None or not view_key:
        return base
    key = (*base_key, view_key)
    view = kept.get(key)
    if view is None:
        view = base.restricted(hidden)
        with _LOCK:
            if len(kept) <= MAX_VIEWS:
                kept[key] = view
    return view


def _generation(kept: dict[tuple[object, ...], LinkSnapshot]) -> int:
    """The index generation the kept snapshots are of (the first item of every key)."""
    generation = next(iter(kept))[0]
    return generation if isinstance(generation, int) else -1
