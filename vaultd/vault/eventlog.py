"""The vault's append-only log, ``log.md`` at the vault root.

One event per line: ``YYYY-MM-DD HH:MM  TYPE  project  source → dest  —  note`` (local time, two
spaces between fields, LF). Appends take their own lock, are one O_APPEND write and are fsynced;
an existing line is never rewritten, and an incomplete last line (a torn earlier append) stops
further appends until a person looks at it.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import os
import re
import stat
from pathlib import Path

from protocol.errors import Issue
from protocol.methods.writes import LogEvent, LogType
from vaultd.content_mode import new_file_mode
from vaultd.errors import Conflict, InvalidParams, ValidationFailed
from vaultd.fsio import fsync_dir

LOG_NAME = "log.md"
MAX_LINE_BYTES = 1000
MAX_READ_BYTES = 32 * 1024 * 1024
MAX_HISTORIC_LINE = 4096
AGENT_MARK = " (vaultd:agent)"
_LINE_RE = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}  ([A-Z]+)  ")
_BAD_FIELD = re.compile(r"[\x00-\x1f\x7f\u2028\u2029|]| {2}|→|—")


def _check_field(name: str, value: str) -> None:
    if _BAD_FIELD.search(value) or value != value.strip():
        raise ValidationFailed(f"log field {name} has a control character, a pipe, a double space or a separator",
                               issues=[Issue(code="V09", message=f"invalid log field {name}", path=LOG_NAME)])


def format_line(event: LogEvent, when: dt.datetime, *, agent: bool) -> str:
    for name in ("project", "source", "note", "dest"):
        value = getattr(event, name)
        if value is not None:
            _check_field(name, value)
    route = event.source + (f" → {event.dest}" if event.dest else "")
    line = f"{when:%Y-%m-%d %H:%M}  {event.type}  {event.project}  {route}  —  {event.note}"
    line += (AGENT_MARK if agent else "") + "\n"
    if len(line.encode("utf-8")) > MAX_LINE_BYTES:
        raise ValidationFailed(f"the log line would be over {MAX_LINE_BYTES} bytes; shorten the note",
                               issues=[Issue(code="V09", message="log line too long", path=LOG_NAME)])
    return line


def append(root: Path, line: str) -> None:
    """Append one whole line durably; refuses after an incomplete last line."""
    lock_path = root / ".vaultd" / "log.lock"
    lock_fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        path = root / LOG_NAME
        created = not path.exists()
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise Conflict(f"{LOG_NAME} is not a regular file")
            if created:
                os.fchmod(fd, new_file_mode())  # vault content: the user's umask, not the daemon's 077
            if st.st_size:
                with open(path, "rb") as fh:
                    fh.seek(st.st_size - 1)
                    if fh.read(1) != b"\n":
                        raise Conflict(f"{LOG_NAME} ends with an incomplete line; repair it by hand, then retry")
            data = line.encode("utf-8")
            written = os.write(fd, data)
            if written != len(data):
                raise OSError(f"short write to {LOG_NAME} ({written} of {len(data)} bytes)")
            os.fdatasync(fd)  # the data and the new size; a timestamp is not worth a second flush
        finally:
            os.close(fd)
        if created:
            fsync_dir(root)
    finally:
        os.close(lock_fd)


def _lines(root: Path) -> tuple[list[str], list[str]]:
    path = root / LOG_NAME
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return [], []
    warnings: list[str] = []
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - MAX_READ_BYTES)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            fh.seek(start)
            data = fh.read(MAX_READ_BYTES)
    finally:
        os.close(fd)
    if start:
        data = data[data.find(b"\n") + 1:]
        warnings.append(f"only the last {MAX_READ_BYTES} bytes of {LOG_NAME} were read")
    chunks = data.split(b"\n")
    if chunks and chunks[-1]:
        warnings.append("the last line is incomplete and was skipped")
    out = []
    for raw in chunks[:-1]:
        if len(raw) > MAX_HISTORIC_LINE:
            warnings.append("a line over 4096 bytes was skipped")
            continue
        text = raw.decode("utf-8", "replace")
        if text.strip() and not text.startswith("#"):
            out.append(text)
    return out, warnings


def _of_type(lines: list[str], type_: LogType | None) -> list[str]:
    if type_ is None:
        return lines
    return [ln for ln in lines if (m := _LINE_RE.match(ln)) and m.group(1) == type_]


def tail(root: Path, limit: int, type_: LogType | None) -> tuple[list[str], list[str]]:
    lines, warnings = _lines(root)
    return _of_type(lines, type_)[-limit:], warnings


_UNSAFE = re.compile(r"\\[1-9]|[(){}]|\\[pPkgN]")


def grep(root: Path, pattern: str, limit: int, type_: LogType | None) -> tuple[list[str], list[str]]:
    """Lines matching a safe regex subset: no groups, backreferences or brace quantifiers, so a
    pattern cannot be made exponential and every line is bounded."""
    if _UNSAFE.search(pattern):
        raise InvalidParams("the pattern may not use groups, backreferences or {} quantifiers")
    try:
        rx = re.compile(pattern)
    except re.error as exc:
        raise InvalidParams(f"bad pattern: {exc.msg}") from exc
    lines, warnings = _lines(root)
    return [ln for ln in _of_type(lines, type_) if rx.search(ln)][-limit:], warnings
