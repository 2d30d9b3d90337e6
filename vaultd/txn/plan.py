"""A planned operation: every file it writes, with the bytes before and after.

Plans are built in memory from files read once; nothing touches the disk until the engine
applies them. The SHA-256 of each file's bytes before is what the engine re-checks right before
writing, and what a two-step operation's fingerprint covers.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from protocol.limits import MAX_CAPTURE_BYTES as MAX_CAPTURE_BYTES  # a file that is not a note (a raw copy)
from protocol.limits import MAX_NOTE_BYTES as MAX_NOTE_BYTES  # the engine's bound is the protocol's
from protocol.limits import MAX_REPORT_BYTES as MAX_REPORT_BYTES  # a report may outgrow a note
from protocol.methods.reports import in_reports

if TYPE_CHECKING:
    from protocol.errors import Issue

#: Files one operation writes at most. A rename of a note linked from thousands of notes is one
#: operation (one journal, one undo); its memory is bounded by MAX_OP_BYTES whatever the count,
#: and its time grows with the count (measured in docs/performance.md, "Large renames").
MAX_OP_FILES = 10_000
MAX_OP_BYTES = 64 * 1024 * 1024


def over_bounds(files: int, total: int) -> str | None:
    """Why an operation writing ``files`` files of ``total`` bytes is refused, or None."""
    if files > MAX_OP_FILES:
        return f"the operation would write {files} files; the limit is {MAX_OP_FILES}"
    if total > MAX_OP_BYTES:
        return f"the operation would write {total} bytes; the limit is {MAX_OP_BYTES}"
    return None


class SizeClass(enum.StrEnum):
    """What the engine bounds a file as, by its path alone: the one place a file's bound is chosen."""

    NOTE = "note"
    REPORT = "report"  #: a note under ``reports/``, which a tool writes for a person to read
    FILE = "file"  #: anything else (an attachment, a raw copy, a canvas)


FILE_BOUNDS: dict[SizeClass, int] = {
    SizeClass.NOTE: MAX_NOTE_BYTES,
    SizeClass.REPORT: MAX_REPORT_BYTES,
    SizeClass.FILE: MAX_CAPTURE_BYTES,
}


def size_class(path: str) -> SizeClass:
    if path[-3:].lower() != ".md":
        return SizeClass.FILE
    return SizeClass.REPORT if in_reports(path) else SizeClass.NOTE


def file_bound(path: str) -> int:
    """The most bytes ``path`` may hold when written, and the most the engine reads of it when it
    checks, re-checks, journals or restores it: a note's bound for a note, a report's for a report,
    a raw copy's for any other file. Nothing else chooses a file's bound."""
    return FILE_BOUNDS[size_class(path)]


def over_file_bound(path: str, size: int) -> str | None:
    """Why a file of ``size`` bytes at ``path`` may not be written, or None."""
    kind = size_class(path)
    bound = FILE_BOUNDS[kind]
    return None if size <= bound else f"{path} would be {size} bytes; a {kind} may be {bound}"


read_limit = file_bound  #: what the engine reads of a target is what it may write there


def sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


class Action(enum.StrEnum):
    CREATE = "create"
    MODIFY = "modify"
    DELETE = "delete"


@dataclass(slots=True)
class Change:
    path: str  #: vault-relative, POSIX separators
    before: bytes | None  #: None: the file must not exist
    after: bytes | None  #: None: the file is removed
    #: Permission bits for a file this change creates (a move's destination and a trashed note
    #: take their source's); None: the user's new-file mode. A rewrite keeps the file's own mode.
    mode: int | None = None
    before_mode: int | None = None  #: the file's bits when the engine checked it (journaled for rollback)

    @property
    def action(self) -> Action:
        if self.before is None:
            return Action.CREATE
        return Action.DELETE if self.after is None else Action.MODIFY

    @property
    def before_sha(self) -> str | None:
        return sha256(self.before)

    @property
    def after_sha(self) -> str | None:
        return sha256(self.after)


@dataclass(slots=True)
class Plan:
    op: str
    changes: list[Change]
    summary: str  #: what the log line says about it (paths and the operation, never note text)
    warnings: list[Issue] = field(default_factory=list)
    log_type: str = "EXTRACT"
    log_dest: str | None = None
    #: Who it is by, journaled with it: the agent session, and for an applied proposal its id and proposer.
    session: str | None = None
    proposal: str | None = None
    proposed_by: str | None = None
    #: What the planner found for the receipt's detail (read by the operation's detail function).
    detail: Any = None

    @property
    def paths(self) -> list[str]:
        return [c.path for c in self.changes]

    def effective(self) -> list[Change]:
        """The changes that change something (a write of identical bytes is dropped)."""
        return [c for c in self.changes if c.before != c.after]
