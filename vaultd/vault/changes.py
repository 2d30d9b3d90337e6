"""Which notes a refresh of the index changes, as the note events subscribers receive.

The watcher reports paths, not what happened to them; the index knows what each note was before
and what it is now. So a refresh's events are derived from the index: a path it did not hold as
a note is created, one whose bytes differ is changed, one it holds no more is removed. A note
gone from one path while a note with identical bytes appears at another, in the same refresh,
is one rename (the same file when its inode says so, which picks among identical twins). A note
whose bytes did not change (a touch, or vaultd's own write seen again by the watcher) is nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.methods.events import Event, NoteChanged, NoteCreated, NoteRemoved, NoteRenamed
from vaultd.vault.note_table import NoteTable

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from vaultd.vault.model import NoteRecord
    from vaultd.vault.reading import Updates


def refresh_changes(known: Mapping[str, NoteRecord], updates: Updates) -> list[Event]:
    """The note events of ``updates``, computed before they are applied to an index whose notes
    are ``known``."""
    removed = [known[p] for p in (*updates.gone, *(s.path for s in updates.skipped), *(a.path for a in updates.attachments)) if p in known]
    created: list[NoteRecord] = []
    changed: list[str] = []
    for record, _doc in updates.notes:
        before = known.get(record.path)
        if before is None:
            created.append(record)
        elif before.sha256 != record.sha256:
            changed.append(record.path)
    return note_events(removed, created, changed)


def index_changes(before: Mapping[str, NoteRecord], after: Mapping[str, NoteRecord]) -> list[Event]:
    """The note events that take an index holding ``before`` to one holding ``after``."""
    removed = [before[p] for p in before if p not in after]
    created = [after[p] for p in after if p not in before]
    changed = [p for p in after if p in before and not _same_bytes(before, after, p)]
    return note_events(removed, created, changed)


def _same_bytes(before: Mapping[str, NoteRecord], after: Mapping[str, NoteRecord], path: str) -> bool:
    """Whether a note's bytes are the same on both sides; two tables holding the same encoded
    record answer without decoding either (a rebuild of an unchanged vault: every note)."""
    if isinstance(before, NoteTable) and isinstance(after, NoteTable) and before.same(after, path):
        return True
    return before[path].sha256 == after[path].sha256


def note_events(removed: Iterable[NoteRecord], created: Iterable[NoteRecord], changed: Iterable[str]) -> list[Event]:
    """Renames first (pairs of a removed and a created note with identical bytes), then the
    removed, created and changed notes left, each in path order."""
    gone = {r.path: r for r in removed}
    new = {r.path: r for r in created}
    renames: list[Event] = []
    by_sha: dict[str, list[NoteRecord]] = {}
    for record in gone.values():
        by_sha.setdefault(record.sha256, []).append(record)
    for record in sorted(new.values(), key=lambda r: r.path):
        twins = by_sha.get(record.sha256)
        if not twins:
            continue
        same_file = [t for t in twins if t.ino == record.ino]
        if same_file:
            source = same_file[0]
        elif len(twins) == 1 and sum(1 for r in new.values() if r.sha256 == record.sha256) == 1:
            source = twins[0]
        else:
            continue  # identical twins on both sides and no inode to tell them apart
        twins.remove(source)
        del gone[source.path], new[record.path]
        renames.append(NoteRenamed(path=record.path, old_path=source.path))
    events: list[Event] = renames
    events += [NoteRemoved(path=p) for p in sorted(gone)]
    events += [NoteCreated(path=p) for p in sorted(new)]
    events += [NoteChanged(path=p) for p in sorted(changed)]
    return events
