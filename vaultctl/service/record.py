"""The record of an installed service, kept so that uninstall can put every file back exactly.

It is also the mark the client looks for: while ``<vaultd home>/service/record.json`` exists, a
service manager owns the daemon of that home, and ``vaultctl`` never starts a second daemon beside
it (it says how to start the managed one instead). Read only when no daemon answers, so it costs a
running client nothing.

An install before the record had its name wrote ``service/receipt.json``: that file is still read
(and the next install or uninstall takes it away), so an installed service stays known.
"""

from __future__ import annotations

import enum
import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from pathlib import Path

RECORD_VERSION = 1


class Manager(enum.StrEnum):
    SYSTEMD = "systemd"
    LAUNCHD = "launchd"


class WrittenFile(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    path: str  #: absolute
    sha256: str  #: of the bytes install wrote; uninstall acts only while the file still has them
    prior: str | None = None  #: the file's text before install; None: install created it


class ServiceRecord(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    version: int = RECORD_VERSION
    manager: Manager
    socket: str  #: where the manager listens
    files: list[WrittenFile]
    started: bool  #: the manager was asked to run it (not --no-start)
    start_command: list[str]  #: what starts it by hand, for messages
    installed_at: str = ""


def record_path(home: Path) -> Path:
    return home / "service" / "record.json"


def earlier_record_path(home: Path) -> Path:
    """Where an earlier version kept the record: read when :func:`record_path` is absent, never written."""
    return home / "service" / "receipt.json"


def record_in_use(home: Path) -> Path:
    """The record file that stands for the home's service: the current name, else the earlier one."""
    current = record_path(home)
    earlier = earlier_record_path(home)
    return earlier if not current.exists() and earlier.exists() else current


class BadRecord(Exception):
    """The record is unreadable; the message names the file."""


def load_record(home: Path) -> ServiceRecord | None:
    """The home's service record, or None when no service was installed.

    Raises:
        BadRecord: the file exists but is not a record this version wrote.
    """
    where = record_in_use(home)
    try:
        data = where.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BadRecord(f"cannot read the service record {where}: {exc.strerror}") from exc
    try:
        return msgspec.json.decode(data, type=ServiceRecord)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise BadRecord(f"the service record {where} is unreadable ({exc}); remove the service files by hand, then delete it") from exc


def stamped(record: ServiceRecord) -> bytes:
    now = datetime.now(UTC).isoformat(timespec="seconds")
    return msgspec.json.format(msgspec.json.encode(msgspec.structs.replace(record, installed_at=now))) + b"\n"


def managed_refusal(home: Path, socket_path: Path) -> str | None:
    """Why the client must not start a daemon for ``home`` itself, or None when it may.

    A service manager that owns the home's daemon would otherwise find the home locked by the
    client's daemon, or its socket taken.
    """
    try:
        record = load_record(home)
    except BadRecord as exc:
        return f"{exc}; vaultctl does not start a daemon while it cannot tell whether a service manager owns it"
    if record is None:
        return None
    where = "" if os.path.abspath(record.socket) == os.path.abspath(socket_path) else f" (it listens on {record.socket})"
    return (
        f"no daemon answers on {socket_path}, and {record.manager} runs vaultd for this home{where}; "
        f"start it with '{' '.join(record.start_command)}', or give the daemon back to vaultctl with 'vaultctl daemon uninstall'"
    )
