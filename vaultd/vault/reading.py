"""Reading notes from disk into records: what a refresh or a build found, and how one note is read.

Kept apart from the index (which holds the records) so a parsing process can import it without
the in-memory maps, and the index's rules about threads do not apply here: every function is
pure over the files it is given.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from protocol.issue_codes import IssueCode
from vaultd.fsio import ReadRefused, Refusal, opened_regular, read_bounded
from vaultd.vault.layout import LOG_HEAD_BYTES, is_operation_log
from vaultd.vault.note import MAX_NOTE_BYTES, Skipped, log_note, parse_note, too_big
from vaultd.vault.walk import LINK_REASON, NOT_REGULAR_REASON, FileStat, SkippedFile

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path

    from vaultd.vault.cache import SearchDoc
    from vaultd.vault.model import NoteRecord


@dataclass(slots=True)
class Updates:
    """What a refresh found: parsed notes, attachments, skipped files, and paths now gone."""

    notes: list[tuple[NoteRecord, SearchDoc]] = field(default_factory=list)
    attachments: list[FileStat] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.notes or self.attachments or self.skipped or self.gone)


#: A file at least this long has its first bytes read on their own, so vaultd's operation log,
#: which grows by a line with every write, is recognised without reading its lines. Below it a
#: note is read in one call, as most are.
HEAD_FIRST_BYTES = 64 * 1024


def read_note(root: Path, fs: FileStat) -> tuple[NoteRecord, SearchDoc] | SkippedFile:
    """Read and parse one note without following symlinks; a file that changed type is skipped.

    vaultd's operation log is indexed from its first line and its status at any length (see
    :mod:`vaultd.vault.note`): its lines are never read here.
    """
    try:
        with opened_regular(os.path.join(root, fs.path)) as (fd, st):
            if st.st_size >= HEAD_FIRST_BYTES and is_operation_log(os.pread(fd, LOG_HEAD_BYTES, 0)):
                return log_note(fs.path, size=st.st_size, mtime_ns=st.st_mtime_ns, ino=st.st_ino)
            raw = read_bounded(fd, st, MAX_NOTE_BYTES)
    except ReadRefused as exc:
        if exc.refusal is Refusal.LINK:
            return SkippedFile(fs.path, IssueCode.S04, LINK_REASON)
        if exc.refusal is Refusal.NOT_REGULAR:
            return SkippedFile(fs.path, IssueCode.S06, NOT_REGULAR_REASON)
        refused = too_big(exc.size)
        return SkippedFile(fs.path, refused.code, refused.reason)
    except OSError as exc:
        return SkippedFile(fs.path, IssueCode.S05, f"cannot read: {exc.strerror}")
    if is_operation_log(raw):
        return log_note(fs.path, size=st.st_size, mtime_ns=st.st_mtime_ns, ino=st.st_ino)
    try:
        return parse_note(fs.path, raw, size=st.st_size, mtime_ns=st.st_mtime_ns, ino=st.st_ino)
    except Skipped as exc:
        return SkippedFile(fs.path, exc.code, exc.reason)


def same_stat(record: NoteRecord, fs: FileStat) -> bool:
    return (record.size, record.mtime_ns, record.ino) == (fs.size, fs.mtime_ns, fs.ino)


def compute_updates(
    root: Path, found: Iterable[FileStat | SkippedFile], known: Mapping[str, NoteRecord], gone: Iterable[str] = ()
) -> Updates:
    """Parse what changed among ``found``; ``known`` holds current records to skip unchanged notes."""
    updates = Updates(gone=list(gone))
    for item in found:
        if isinstance(item, SkippedFile):
            updates.skipped.append(item)
        elif not item.is_note:
            updates.attachments.append(item)
        else:
            record = known.get(item.path)
            if record is not None and same_stat(record, item):
                continue
            parsed = read_note(root, item)
            if isinstance(parsed, SkippedFile):
                updates.skipped.append(parsed)
            else:
                updates.notes.append(parsed)
    return updates
