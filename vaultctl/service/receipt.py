"""The record of an installed service, kept so that uninstall can put every file back exactly.

It is also the mark the client looks for: while ``<vaultd home>/service/receipt.json`` exists, a
service manager owns the daemon of that home, and ``vaultctl`` never starts a second daemon beside
it (it says how to start the managed one instead). Read only when no daemon answers, so it costs a
running client nothing.
"""

from __future__ import annotations

import enum
import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from pathlib import Path

RECEIPT_VERSION = 1


class Manager(enum.StrEnum):
    SYSTEMD = "systemd"
    LAUNCHD = "launchd"


class WrittenFile(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    path: str  #: absolute
    sha256: str  #: of the bytes install wrote; uninstall acts only while the file still has them
    prior: str | None = None  #: the file's text before install; None: install created it


class ServiceReceipt(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    version: int = RECEIPT_VERSION
    manager: Manager
    socket: str  #: where the manager listens
    files: list[WrittenFile]
    started: bool  #: the manager was asked to run it (not --no-start)
    start_command: list[str]  #: what starts it by hand, for messages
    installed_at: str = ""


def receipt_path(home: Path) -> Path:
    return home / "service" / "receipt.json"


class BadReceipt(Exception):
    """The receipt is unreadable; the message names the file."""


def load_receipt(home: Path) -> ServiceReceipt | None:
    """The home's service receipt, or None when no service was installed.

    Raises:
        BadReceipt: the file exists but is not a receipt this version wrote.
    """
    where = receipt_path(home)
    try:
        data = where.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BadReceipt(f"cannot read the service receipt {where}: {exc.strerror}") from exc
    try:
        return msgspec.json.decode(data, type=ServiceReceipt)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise BadReceipt(f"the service receipt {where} is unreadable ({exc}); remove the service files by hand, then delete it") from exc


def stamped(receipt: ServiceReceipt) -> bytes:
    now = datetime.now(UTC).isoformat(timespec="seconds")
    return msgspec.json.format(msgspec.json.encode(msgspec.structs.replace(receipt, installed_at=now))) + b"\n"


def managed_refusal(home: Path, socket_path: Path) -> str | None:
    """Why the client must not start a daemon for ``home`` itself, or None when it may.

    A service manager that owns the home's daemon would otherwise find the home locked by the
    client's daemon, or its socket taken.
    """
    try:
        receipt = load_receipt(home)
    except BadReceipt as exc:
        return f"{exc}; vaultctl does not start a daemon while it cannot tell whether a service manager owns it"
    if receipt is None:
        return None
    where = "" if os.path.abspath(receipt.socket) == os.path.abspath(socket_path) else f" (it listens on {receipt.socket})"
    return (
        f"no daemon answers on {socket_path}, and {receipt.manager} runs vaultd for this home{where}; "
        f"start it with '{' '.join(receipt.start_command)}', or give the daemon back to vaultctl with 'vaultctl daemon uninstall'"
    )
