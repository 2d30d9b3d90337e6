"""The shim's one connection to the daemon: opened lazily, reopened when it drops.

The handshake never waits for it: the first call that needs the daemon opens it (starting the
daemon when none answers, exactly as ``vaultctl`` does), on the ``mcp`` channel so the vault's write
policy for agents applies. A dropped connection is reopened once for a call that is safe to
repeat; a write is never silently repeated, since it may have landed before the drop.
"""

from __future__ import annotations

import logging
import os
import re
import select
import socket
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from protocol.methods.common import Channel, Params
from vaultctl.client import BadSetting, Client, DaemonUnavailable, ReplyTimeout, connect
from vaultctl.mcp.errors import unavailable

if TYPE_CHECKING:
    from protocol.methods.spec import AnySpec

log = logging.getLogger("vaultctl.mcp")

CLIENT_NAME = "vaultctl-mcp"
SESSION_ENV = "VAULTD_SESSION"  #: a host may name its session; else each shim process is one
_SESSION_RE = re.compile(r"[A-Za-z0-9_.:-]{1,64}")

Connector = Callable[[], Client]


def agent_session(environ: Mapping[str, str] | None = None) -> str:
    """The id this shim's operations carry: what the agent may undo as its own, as a unit.

    One per shim process (a host starts one per agent session), kept across reconnects, so a
    daemon restart does not turn the session's earlier operations into someone else's.
    """
    named = (os.environ if environ is None else environ).get(SESSION_ENV, "")
    if _SESSION_RE.fullmatch(named):
        return named
    return _PROCESS_SESSION


_PROCESS_SESSION = f"mcp-{uuid.uuid4().hex[:16]}"


def _default_connector() -> Client:
    return connect(Channel.MCP, client_name=CLIENT_NAME, session=agent_session())


class DaemonConnection:
    """Calls the daemon for the shim; used from one thread at a time (the call worker)."""

    def __init__(self, connector: Connector = _default_connector) -> None:
        self._connector = connector
        self._client: Client | None = None

    def call(self, spec: AnySpec, params: Params | dict[str, Any]) -> bytes:
        """Call ``spec``'s method and return the raw JSON result.

        Raises:
            CallError: the daemon refused (its stable error name is in ``data.code``).
            ToolFailure: UNAVAILABLE, the daemon could not be reached or dropped the call.
        """
        repeatable = spec.read_only or spec.idempotent
        for attempt in (1, 2):
            client = self._open()
            try:
                return client.call_raw(spec.name, params)
            except (DaemonUnavailable, OSError) as exc:
                self.close()
                if attempt == 1 and repeatable:
                    log.info("daemon connection dropped during %s; reconnecting", spec.name)
                    continue
                raise unavailable(_reason(exc), maybe_applied=not spec.read_only) from exc
        raise AssertionError("unreachable: the second attempt returns or raises")

    def close(self) -> None:
        if self._client is not None:
            try:
                self._client.close()
            finally:
                self._client = None

    def _open(self) -> Client:
        if self._client is not None and not _peer_closed(self._client):
            return self._client
        self.close()
        try:
            self._client = self._connector()
        except (DaemonUnavailable, BadSetting) as exc:  # UnsafeSocket too: nothing was sent
            raise unavailable(str(exc).rstrip(".")) from exc
        except OSError as exc:
            raise unavailable(f"cannot reach the daemon: {_reason(exc)}") from exc
        return self._client


def _peer_closed(client: Client) -> bool:
    """Whether the daemon hung up while the connection sat idle (it restarted, say).

    Checked before each call so that a write after a daemon restart goes out on a fresh connection
    instead of failing as "may have been applied". The peek reads nothing from the stream.
    """
    sock: socket.socket = client._sock  # private, but the client exposes no liveness check
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except (OSError, ValueError):
        return True


def _reason(exc: BaseException) -> str:
    if isinstance(exc, (TimeoutError, ReplyTimeout)):
        return "the daemon did not answer in time"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc) or type(exc).__name__
