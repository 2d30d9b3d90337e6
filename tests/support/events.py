"""A subscriber on a raw socket: subscribes, reads notifications, keeps every event in arrival order.

A real client of the real daemon, as an editor would write one: replies are matched by id, and
notifications that arrive while a reply is awaited are kept, never dropped.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from tests.support.harness import RawClient

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

Events = list[dict[str, Any]]


class Subscriber:
    def __init__(self, socket_path: Path, channel: str = "cli") -> None:
        self.client = RawClient(socket_path)
        self.events: Events = []  #: every event received, in arrival order
        self.by_subscription: dict[int, Events] = {}  #: the same, per subscription id
        self.frames = 0  #: subscription.events notifications received
        self.frame_sizes: list[int] = []  #: events in each
        self.dropped: dict[str, Any] | None = None  #: the params of subscription.dropped, once received
        self.closed = False  #: the daemon closed the connection
        self._id = 0
        self.request("hello", {"client": "subscriber", "version": "1", "channel": channel})

    def request(self, method: str, params: Any = None) -> dict[str, Any]:
        """Send a request and return its reply; notifications read meanwhile are kept."""
        self._id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self._id, "method": method, "params": params or {}}
        self.client.send_bytes(json.dumps(msg).encode() + b"\n")
        deadline = time.monotonic() + 30
        while True:
            message = self._next(deadline)
            if message is None:
                raise AssertionError(f"no reply to {method}")
            if message.get("id") == self._id:
                return message

    def call(self, method: str, params: Any = None) -> Any:
        reply = self.request(method, params)
        if "error" in reply:
            raise AssertionError(f"{method} failed: {reply['error']}")
        return reply["result"]

    def subscribe(self, **params: Any) -> dict[str, Any]:
        result: dict[str, Any] = self.call("subscribe", params)
        return result

    def _next(self, deadline: float) -> dict[str, Any] | None:
        """The next message, keeping notifications; None when the deadline passes or the peer closes."""
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        self.client.sock.settimeout(left)
        try:
            line = self.client.recv_line()
        except TimeoutError:
            return None
        except ConnectionError:
            self.closed = True
            return None
        message: dict[str, Any] = json.loads(line)
        if message.get("method") == "subscription.events":
            self.frames += 1
            self.frame_sizes.append(len(message["params"]["events"]))
            self.events.extend(message["params"]["events"])
            self.by_subscription.setdefault(message["params"]["subscription"], []).extend(message["params"]["events"])
        elif message.get("method") == "subscription.dropped":
            self.dropped = message["params"]
        return message

    def read_until(self, done: Callable[[Events], object], timeout: float, what: str) -> Events:
        """Read until ``done(events)`` holds; fail naming ``what`` and what did arrive."""
        deadline = time.monotonic() + timeout
        while not done(self.events):
            if self._next(deadline) is None and (self.closed or time.monotonic() >= deadline):
                seen = [(e["kind"], e.get("path")) for e in self.events[-20:]]
                counts = Counter(e["kind"] for e in self.events)
                raise AssertionError(
                    f"gave up after {timeout} s waiting for {what}; dropped: {self.dropped}; events by kind: {dict(counts)};"
                    f" the last events: {seen}"
                )
        return self.events

    def read_for(self, seconds: float) -> Events:
        """Everything that arrives within ``seconds`` (to show that nothing more comes)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self.closed:
            self._next(deadline)
        return self.events

    def close(self) -> None:
        self.client.close()


def of_kind(events: Events, kind: str) -> Events:
    return [e for e in events if e["kind"] == kind]


def has(kind: str, **fields: Any) -> Callable[[Events], bool]:
    """A predicate: some event is of ``kind`` with these field values."""
    return lambda events: any(e["kind"] == kind and all(e.get(k) == v for k, v in fields.items()) for e in events)


def sequence(event: dict[str, Any]) -> tuple[str, int]:
    instance, _, seq = event["clock"].partition(":")
    return instance, int(seq)
