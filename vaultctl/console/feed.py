"""``GET /api/events``: a vault's events, live, as Server-Sent Events.

Each page that follows a vault gets a daemon connection of its own with one ``subscribe`` on it,
so the page's views change without a reload when a note, a proposal, an operation or the index
changes. Each event goes out as one SSE message whose ``id`` is the vault's clock: when the
browser reconnects it sends that id back (``Last-Event-ID``) and the subscription resumes after
it (``since``); when the clock cannot be resumed the page is told to re-read everything.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import anyio
import msgspec

from protocol.methods.subscriptions import DROPPED, EVENTS, ClockToken, DroppedParams, EventsParams, SubscribeParams, SubscribeResult
from vaultctl.client import CallError, DaemonUnavailable

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from vaultctl.console.daemon_connection import DaemonConnection

MAX_FEEDS = 8  #: pages following a vault at once; one more is refused (429)
KEEPALIVE_S = 15.0  #: a comment line this often, so a dead page is noticed and proxies stay quiet
_VAULT = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
_CLOCK = re.compile(r"^[0-9a-f]{8}:[0-9]{1,15}$")
_events = msgspec.json.Decoder(EventsParams)
_dropped = msgspec.json.Decoder(DroppedParams)
_subscribed = msgspec.json.Decoder(SubscribeResult)
_encode = msgspec.json.Encoder().encode


def valid_vault(vault: str | None) -> bool:
    return vault is not None and _VAULT.fullmatch(vault) is not None


def _message(data: bytes, event: str | None = None, id: str | None = None) -> bytes:
    head = (f"event: {event}\n" if event else "") + (f"id: {id}\n" if id else "")
    return head.encode() + b"data: " + data + b"\n\n"


class Feeds:
    """Counts the open feeds, so they stay bounded."""

    def __init__(self, daemon: DaemonConnection) -> None:
        self.daemon = daemon
        self.open = 0

    def full(self) -> bool:
        return self.open >= MAX_FEEDS

    async def stream(self, vault: str, last_clock: str | None) -> AsyncIterator[bytes]:
        """The SSE bytes of one page's feed; ends when the page leaves or the daemon ends it."""
        self.open += 1
        try:
            async for chunk in self._stream(vault, last_clock):
                yield chunk
        finally:
            self.open -= 1

    async def _stream(self, vault: str, last_clock: ClockToken | None) -> AsyncIterator[bytes]:
        since = {vault: last_clock} if last_clock and _CLOCK.fullmatch(last_clock) else {}
        try:
            async with self.daemon.feed() as conn:
                try:
                    answer = _subscribed.decode(await conn.call("subscribe", SubscribeParams(vaults=[vault], since=since)))
                except CallError as exc:
                    yield _message(_encode({"message": exc.data.message}), event="refused")
                    return
                clock = next((c for c in answer.vaults if c.vault == vault), None)
                fresh = clock is None or clock.fresh_instance or not since
                yield _message(_encode({"clock": clock.clock if clock else "", "fresh": fresh}), event="subscribed")
                while True:
                    incoming = None
                    with anyio.move_on_after(KEEPALIVE_S):  # never across a yield: the scope ends first
                        incoming = await conn.receive()
                    if incoming is None:
                        yield b": keepalive\n\n"
                    elif incoming.method == EVENTS.name:
                        for event in _events.decode(incoming.params).events:
                            yield _message(_encode(event), id=event.clock or None)
                    elif incoming.method == DROPPED.name:
                        dropped = _dropped.decode(incoming.params)
                        yield _message(_encode({"reason": dropped.reason, "message": dropped.message}), event="dropped")
                        return
        except DaemonUnavailable as exc:
            yield _message(_encode({"message": str(exc)}), event="gone")
