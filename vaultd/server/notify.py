"""Telling systemd how the daemon is doing (``sd_notify(3)``), for ``Type=notify`` units.

The unit is ``Type=notify`` so that a start counts as done only once the daemon has read its
registry and taken its vaults' locks: a start that fails there (the home held by a stray daemon,
say) is a failed start, not a started service that dies a moment later. Clients never wait for
it; the socket listened before the daemon ran.

The protocol is one datagram per message on the Unix socket named by ``$NOTIFY_SOCKET`` (a path,
or ``@name`` in the abstract namespace). Without that variable every call is a no-op, which is
how the daemon runs when vaultctl starts it. Sending never raises: a service manager that went
away must not take the daemon with it.
"""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING

import structlog

if TYPE_CHECKING:
    from collections.abc import MutableMapping

log = structlog.get_logger("vaultd.notify")

NOTIFY_VARIABLE = "NOTIFY_SOCKET"


class Notifier:
    """Where to send state changes; read once at start, and the variable removed for children."""

    def __init__(self, address: str | None) -> None:
        self.address = address

    @classmethod
    def from_environment(cls, environ: MutableMapping[str, str] | None = None) -> Notifier:
        env = os.environ if environ is None else environ
        address = env.pop(NOTIFY_VARIABLE, None) or None
        if address is not None and not address.startswith(("/", "@")):
            log.warning("NOTIFY_SOCKET is neither a path nor an abstract name; not notifying", address=address[:64])
            address = None
        return cls(address)

    def ready(self, status: str) -> None:
        self.send(f"READY=1\nSTATUS={status}")

    def stopping(self, status: str) -> None:
        self.send(f"STOPPING=1\nSTATUS={status}")

    def status(self, status: str) -> None:
        self.send(f"STATUS={status}")

    def send(self, message: str) -> None:
        if self.address is None:
            return
        target = "\0" + self.address[1:] if self.address.startswith("@") else self.address
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
                sock.sendto(message.encode("utf-8"), target)
        except OSError as exc:
            log.warning("could not notify the service manager", error=exc.strerror or str(exc))
