"""Resource updates: a host that subscribes to ``vault://{vault}/{path}`` hears when that note changes.

MCP's ``resources/subscribe`` (handshake era; 2026-07-28 replaced it with a listen stream) asks the
server to send ``notifications/resources/updated`` with the URI whenever the resource changes. The
daemon already tells subscribers what happens in its vaults (``subscribe``, on a connection of
its own), so the shim opens one such stream on the ``mcp`` channel when the host first
subscribes, for the note events of every vault, and relays those that name a subscribed note.
The daemon's filter for the channel never sends an event naming a path private to agents.

- A note is subscribed by its canonical path (the URI is resolved as ``resources/read`` resolves
  it); the notification carries the URI as the host wrote it.
- Created, changed, removed and renamed (either side) all count as an update: the host reads the
  URI again and learns which.
- Where the daemon cannot say which notes changed (a bulk change that listed only some of its
  notes, a vault whose clock restarted or that was unregistered, a stream that dropped and was
  opened again) every subscribed note of that vault, or of every vault, is reported updated:
  a host re-reads a note too often rather than miss a change.
- At most :data:`MAX_SUBSCRIPTIONS` URIs per session: one more is refused -32602 until the host
  unsubscribes one.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any

import msgspec

from protocol.methods.common import Channel
from protocol.methods.events import NOTE_KINDS, EventKind
from protocol.methods.subscriptions import SUBSCRIBE, SubscribeParams
from vaultctl.client import BadSetting, CallError, DaemonUnavailable, connect
from vaultctl.mcp import wire
from vaultctl.mcp.daemon_connection import CLIENT_NAME, agent_session
from vaultctl.mcp.errors import McpError, RpcCode, invalid_params

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from vaultctl.client import Client

log = logging.getLogger("vaultctl.mcp")

MAX_SUBSCRIPTIONS = 64  #: resource URIs one session may follow at once
UPDATED = "notifications/resources/updated"
KINDS = sorted({*NOTE_KINDS, EventKind.STATE_LEAVE})  #: what the stream asks for (fresh_instance and vault.removed always come)
_REOPEN_WAITS_S = (0.2, 0.5, 1.0, 2.0, 5.0, 10.0)  #: between attempts to open a dropped stream again

Note = tuple[str, str]  #: (vault, canonical path)

_events_decoder = msgspec.json.Decoder(dict[str, Any])


def _stream_connector() -> Client:
    # Its own connection: the call worker's answers replies, this one only carries notifications.
    return connect(Channel.MCP, client_name=f"{CLIENT_NAME}-updates", session=agent_session(), timeout=30.0)


class ResourceUpdates:
    """The URIs this session follows, and the daemon stream that says when their notes change."""

    def __init__(self, send: Callable[[bytes], None], connector: Callable[[], Client] = _stream_connector) -> None:
        self._send = send
        self._connector = connector
        self._lock = threading.Lock()
        self._by_uri: dict[str, Note] = {}
        self._stream: Client | None = None
        self._reader: threading.Thread | None = None
        self._closed = False

    def subscribe(self, uri: str, note: Note) -> None:
        """Follow ``uri`` (naming ``note``); the stream is open before this returns, so a change made
        after the host's subscribe is answered is reported.

        Raises:
            McpError: -32602 past :data:`MAX_SUBSCRIPTIONS`; -32603 when the daemon cannot stream.
        """
        with self._lock:
            if uri in self._by_uri:
                self._by_uri[uri] = note
                return
            if len(self._by_uri) >= MAX_SUBSCRIPTIONS:
                message = f"this session follows {MAX_SUBSCRIPTIONS} resources, the most it may; unsubscribe one first"
                raise invalid_params(message, "$.params.uri")
            self._by_uri[uri] = note
            running = self._reader is not None
        if running:
            return
        try:
            self._open()
        except McpError:
            with self._lock:
                self._by_uri.pop(uri, None)
            raise

    def unsubscribe(self, uri: str) -> None:
        """Stop following ``uri``; a URI not followed is no error (the host's state is what it asked)."""
        with self._lock:
            self._by_uri.pop(uri, None)

    @property
    def followed(self) -> int:
        with self._lock:
            return len(self._by_uri)

    def close(self) -> None:
        """End the stream (the shim is exiting); nothing is sent after this."""
        with self._lock:
            self._closed = True
            stream, self._stream = self._stream, None
        if stream is not None:
            stream.close()

    def _open(self) -> None:
        stream = self._subscribe()
        with self._lock:
            if self._closed:
                stream.close()
                return
            self._stream = stream
            self._reader = threading.Thread(target=self._read, args=(stream,), name="vaultd-mcp-updates", daemon=True)
            self._reader.start()

    def _subscribe(self) -> Client:
        """A new stream connection with its subscription made.

        Raises:
            McpError: -32603 when the daemon cannot be reached or refuses.
        """
        try:
            stream = self._connector()
        except (DaemonUnavailable, BadSetting, OSError) as exc:
            raise McpError(RpcCode.INTERNAL_ERROR, f"cannot follow resource changes: {exc}") from exc
        try:
            stream.call(SUBSCRIBE, SubscribeParams(kinds=list(KINDS)))
        except (CallError, DaemonUnavailable, OSError) as exc:
            stream.close()
            raise McpError(RpcCode.INTERNAL_ERROR, f"cannot follow resource changes: {exc}") from exc
        return stream

    def _read(self, stream: Client) -> None:
        """Relay the stream's events; when it ends, open it again and report every note updated."""
        while True:
            try:
                for method, raw in stream.notifications():
                    if method == "subscription.events":
                        self._relay(_events_decoder.decode(raw).get("events") or [])
                    elif method == "subscription.dropped":
                        log.info("the daemon dropped the resource stream: %s", raw[:200])
                        break
            except (DaemonUnavailable, OSError, msgspec.DecodeError) as exc:
                log.info("the resource stream ended: %s", exc)
            stream.close()
            reopened = self._reopen()
            if reopened is None:
                return
            stream = reopened
            self._relay_all(None)  # what changed while no stream was open is unknown

    def _reopen(self) -> Client | None:
        for wait in _REOPEN_WAITS_S:
            with self._lock:
                if self._closed:
                    self._reader = None
                    return None
            time.sleep(wait)
            try:
                stream = self._subscribe()
            except McpError as exc:
                log.info("opening the resource stream again failed: %s", exc.message)
                continue
            with self._lock:
                if self._closed:
                    stream.close()
                    self._reader = None
                    return None
                self._stream = stream
            return stream
        log.warning("the resource stream could not be opened again; the next resources/subscribe tries anew")
        self._relay_all(None)
        with self._lock:
            self._reader = None
            self._stream = None
        return None

    def _relay(self, events: Iterable[Any]) -> None:
        with self._lock:
            followed = dict(self._by_uri)
        self._notify(updated(events, followed))

    def _relay_all(self, vault: str | None) -> None:
        """Report every followed URI of ``vault`` (of every vault: None) updated."""
        with self._lock:
            uris = {u for u, (v, _) in self._by_uri.items() if vault is None or v == vault}
        self._notify(uris)

    def _notify(self, uris: set[str]) -> None:
        for uri in sorted(uris):
            with self._lock:
                if self._closed or uri not in self._by_uri:
                    continue
            self._send(wire.notification_frame(UPDATED, {"uri": uri}))


def updated(events: Iterable[Any], followed: dict[str, Note]) -> set[str]:
    """The followed URIs (``followed``: URI -> its note) that ``events`` (a ``subscription.events``
    batch, as decoded JSON) report changed.

    A note event names its note (and a rename its old path too); an event after which the daemon
    cannot say which notes changed (a bulk change that listed fewer notes than it changed, a
    restarted clock, an unregistered vault) names every followed note of its vault.
    """
    touched: set[str] = set()
    for event in events:
        if not isinstance(event, dict):
            continue
        kind, vault = event.get("kind"), event.get("vault")
        if kind in NOTE_KINDS:
            paths = {event.get("path"), event.get("old_path")}
            touched.update(uri for uri, (v, path) in followed.items() if v == vault and path in paths)
        elif kind in (EventKind.FRESH_INSTANCE, EventKind.VAULT_REMOVED) or (
            kind == EventKind.STATE_LEAVE and event.get("listed", 0) < event.get("changes", 0)
        ):
            touched.update(uri for uri, (v, _) in followed.items() if v == vault)
    return touched
