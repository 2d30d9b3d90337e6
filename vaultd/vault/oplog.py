"""The vault's append-only log: ``log.md`` at the vault root, or the vault's ``log_path``.

One event per line: ``YYYY-MM-DD HH:MM  TYPE  project  source → dest  —  note`` (local time, two
spaces between fields, LF), below a header line that marks the file as vaultd's. Appends take
their own lock, are one O_APPEND write and are fsynced; an existing line is never rewritten.

The log never adopts a note: vaultd appends only to a file it created (the header) or to one
that already holds log lines (a log from before the header); any other file at the log path is
the user's, and appends are refused with the way to pick another path. A last line that lost its
newline (an editor that strips it) is ended with one before the next event.
"""

from __future__ import annotations

import enum
import os
import re
import stat
from typing import TYPE_CHECKING

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from vaultd.content_mode import new_file_mode
from vaultd.errors import Conflict, InvalidParams, ValidationFailed
from vaultd.fsio import fsync_dir, locked
from vaultd.vault.layout import LOG_HEAD_BYTES, LOG_HEADER, LOG_LOCK_NAME, SKIPPED_DIRS, STATE_DIR, is_operation_log

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Callable
    from pathlib import Path

    from protocol.methods.vaults import VaultEntry
    from protocol.methods.writes import LogEvent, LogType

LOG_NAME = "log.md"  #: the default log path
MAX_LINE_BYTES = 1000
MAX_READ_BYTES = 32 * 1024 * 1024
MAX_HISTORIC_LINE = 4096
AGENT_MARK = " (vaultd:agent)"
#: How long a proposal id is (``p`` + 14 digits + ``-`` + 8 hex digits): an agent's line keeps room
#: for the mark a person's approval adds, so a line screened when proposed fits when applied.
PROPOSAL_ID_CHARS = 24
_LINE_RE = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}  ([A-Z]+)  ")
_EVENT_RE = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}  [A-Z]+  \S+  .+  —  .*$")
_BAD_FIELD = re.compile(r"[\x00-\x1f\x7f\u2028\u2029|]| {2}|→|—")


class LogFile(enum.StrEnum):
    """What is at a vault's log path."""

    ABSENT = "absent"  #: nothing: the first append creates the log
    OURS = "ours"  #: a vaultd log (its header, or log lines from before the header)
    FOREIGN = "foreign"  #: anything else: a user's note, never appended to


def log_name(entry: VaultEntry) -> str:
    """The vault-relative path of the vault's log."""
    return entry.log_path or LOG_NAME


def _kind_of(head: bytes) -> LogFile:
    if is_operation_log(head):
        return LogFile.OURS
    first = head.split(b"\n", 1)[0].decode("utf-8", "replace").rstrip("\r")
    return LogFile.OURS if _EVENT_RE.match(first) else LogFile.FOREIGN  # a log from before the header


def log_file_kind(root: Path, rel: str) -> LogFile:
    """Whether the log path is free, vaultd's log, or a file of the user's (never appended to)."""
    try:
        fd = os.open(root / rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return LogFile.ABSENT
    except OSError:
        return LogFile.FOREIGN  # a link, or unreadable: not ours to write
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return LogFile.FOREIGN
        return _kind_of(os.pread(fd, LOG_HEAD_BYTES, 0))
    finally:
        os.close(fd)


def foreign_message(rel: str, vault_id: str, path: str) -> str:
    return (
        f"{rel} is not a vaultd log (it does not start with '{LOG_HEADER.rstrip()}'), so vaultd never "
        f"appends to it; give the vault another log path: 'vaultctl vault add {vault_id} {path} "
        f"--log-path vaultd-log.md'"
    )


def _check_field(name: str, value: str) -> None:
    """A log field must not break the line's format: one line, its fields set apart by separators a
    field may not hold.

    Raises:
        ValidationFailed: VALIDATION (V09), the field holds a control character, a pipe, a double
            space or a separator.
    """
    if _BAD_FIELD.search(value) or value != value.strip():
        raise ValidationFailed(
            f"log field {name} has a control character, a pipe, a double space or a separator",
            issues=[Issue(code=IssueCode.V09, message=f"invalid log field {name}", path=LOG_NAME)],
        )


def agent_mark(proposal: str | None = None) -> str:
    """What ends an agent's line: `` (vaultd:agent)``, and for an agent's proposal a person
    applied, `` (vaultd:agent, proposal ID)``: the line stays the agent's, whoever approved it."""
    return AGENT_MARK if proposal is None else f" (vaultd:agent, proposal {proposal})"


_AGENT_MARK_ROOM = len(agent_mark("p" * PROPOSAL_ID_CHARS))


def format_line(event: LogEvent, when: dt.datetime, *, agent: bool, proposal: str | None = None) -> str:
    """The event's line; ``agent``: it is an agent's (its own write, or its ``proposal`` applied).

    Raises:
        ValidationFailed: VALIDATION (V09), the line would be over ``MAX_LINE_BYTES``.
    """
    for name in ("project", "source", "note", "dest"):
        value = getattr(event, name)
        if value is not None:
            _check_field(name, value)
    route = event.source + (f" → {event.dest}" if event.dest else "")
    line = f"{when:%Y-%m-%d %H:%M}  {event.type}  {event.project}  {route}  —  {event.note}"
    mark = agent_mark(proposal) if agent else ""
    room = max(len(mark), _AGENT_MARK_ROOM) if agent else 0  # the mark is ASCII: its length is its bytes
    if len(line.encode("utf-8")) + room + 1 > MAX_LINE_BYTES:
        raise ValidationFailed(
            f"the log line would be over {MAX_LINE_BYTES} bytes; shorten the note",
            issues=[Issue(code=IssueCode.V09, message="log line too long", path=LOG_NAME)],
        )
    return line + mark + "\n"


def _open_log(root: Path, rel: str) -> tuple[int, bool]:
    """Open the log for appending, creating it if absent; (fd, created).

    Raises:
        Conflict: CONFLICT, the log path is in a folder vaultd skips, or a folder on the way is a
            link.
    """
    if any(part in SKIPPED_DIRS for part in rel.split("/")[:-1]):
        raise Conflict(f"the log path {rel} is inside a folder vaultd keeps out of the vault's notes")
    path = root / rel
    parent = path.parent
    if parent != root:
        parent.mkdir(parents=True, exist_ok=True)
        if os.path.realpath(parent) != os.path.normpath(parent):
            raise Conflict(f"a folder on the way to {rel} is a symbolic link; vaultd does not follow it")
    flags = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW
    try:
        return os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o600), True
    except FileExistsError:
        return os.open(path, flags), False


def append(root: Path, line: str, rel: str = LOG_NAME) -> None:
    """Append one whole line durably to the vault's own log; never to a file that is not one.

    Raises:
        Conflict: CONFLICT, the file is not a regular file, or is not a vaultd log.
    """
    lock_path = root / STATE_DIR / LOG_LOCK_NAME
    with locked(lock_path):
        path = root / rel
        fd, created = _open_log(root, rel)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise Conflict(f"{rel} is not a regular file")
            data = line.encode("utf-8")
            if created:
                os.fchmod(fd, new_file_mode())  # vault content: the user's umask, not the daemon's 077
                data = LOG_HEADER.encode("utf-8") + data
            else:
                with open(path, "rb") as fh:
                    if st.st_size == 0 or _kind_of(fh.read(LOG_HEAD_BYTES)) != LogFile.OURS:
                        raise Conflict(
                            f"{rel} is not a vaultd log, so vaultd does not append to it; register the vault with another --log-path"
                        )
                    fh.seek(st.st_size - 1)
                    if fh.read(1) != b"\n":
                        data = b"\n" + data  # the last line lost its newline: end it, never join it
            written = os.write(fd, data)
            if written != len(data):
                raise OSError(f"short write to {rel} ({written} of {len(data)} bytes)")
            os.fdatasync(fd)  # the data and the new size; a timestamp is not worth a second flush
        finally:
            os.close(fd)
        if created:
            fsync_dir(path.parent)


def _lines(root: Path, rel: str) -> tuple[list[str], list[str]]:
    path = root / rel
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return [], []
    warnings: list[str] = []
    try:
        size = os.fstat(fd).st_size
        if _kind_of(os.pread(fd, LOG_HEAD_BYTES, 0)) != LogFile.OURS:
            return [], [f"{rel} is not a vaultd log; its lines are not read as events"]
        start = max(0, size - MAX_READ_BYTES)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            fh.seek(start)
            data = fh.read(MAX_READ_BYTES)
    finally:
        os.close(fd)
    if start:
        data = data[data.find(b"\n") + 1 :]
        warnings.append(f"only the last {MAX_READ_BYTES} bytes of {rel} were read")
    chunks = data.split(b"\n")
    if chunks and chunks[-1]:
        warnings.append("the last line is incomplete and was skipped")
    out = []
    for raw in chunks[:-1]:
        if len(raw) > MAX_HISTORIC_LINE:
            warnings.append(f"a line over {MAX_HISTORIC_LINE} bytes was skipped")
            continue
        text = raw.decode("utf-8", "replace")
        if text.strip() and not text.startswith("#"):
            out.append(text)
    return out, warnings


def _of_type(lines: list[str], type_: LogType | None, hide: Callable[[str], bool] | None) -> list[str]:
    """The lines of one type, without those ``hide`` holds back (before the limit is applied, so a
    caller who may not see some lines still gets up to ``limit`` of the others)."""
    if type_ is not None:
        lines = [ln for ln in lines if (m := _LINE_RE.match(ln)) and m.group(1) == type_]
    if hide is not None:
        lines = [ln for ln in lines if not hide(ln)]
    return lines


def tail(
    root: Path, limit: int, type_: LogType | None, rel: str = LOG_NAME, hide: Callable[[str], bool] | None = None
) -> tuple[list[str], list[str]]:
    lines, warnings = _lines(root, rel)
    return _of_type(lines, type_, hide)[-limit:], warnings


_UNSAFE = re.compile(r"\\[1-9]|[(){}]|\\[pPkgN]")


def grep_pattern(pattern: str) -> re.Pattern[str]:
    """The compiled pattern, or INVALID_PARAMS for one outside the safe subset.

    Raises:
        InvalidParams: INVALID_PARAMS, the pattern uses groups, backreferences or {} quantifiers, or
            does not compile.
    """
    if _UNSAFE.search(pattern):
        raise InvalidParams("the pattern may not use groups, backreferences or {} quantifiers")
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise InvalidParams(f"bad pattern: {exc.msg}") from exc


def grep(
    root: Path, pattern: str, limit: int, type_: LogType | None, rel: str = LOG_NAME, hide: Callable[[str], bool] | None = None
) -> tuple[list[str], list[str]]:
    """Lines matching a safe regex subset: no groups, backreferences or brace quantifiers, so a
    pattern cannot be made exponential and every line is bounded."""
    rx = grep_pattern(pattern)
    lines, warnings = _lines(root, rel)
    return [ln for ln in _of_type(lines, type_, hide) if rx.search(ln)][-limit:], warnings
