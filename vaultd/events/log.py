"""One vault's event log: its clock, the events it keeps for ``since``, its bulk state.

Recording never waits and never fails for a follower's sake: an event is stamped with the vault's
next clock, encoded once (every subscriber sends the same bytes), kept while it is among the last
``RETAINED_EVENTS`` (and ``RETAINED_EVENT_BYTES``), and the followers are woken. A follower holds
only its position; one that falls behind what is kept finds its next events gone and is dropped
by its own sender. So a writer or the watcher records in constant time per event whatever the
subscribers do, and memory is bounded per vault, not per subscriber.

A clock is ``<instance>:<sequence>``. The instance is random and new for every log: the daemon
makes one when it takes a vault (start-up, ``vault.add``) and a successor when it takes a lost
vault folder back, so a clock of a previous daemon or of a vault before it was lost is never
mistaken for one of this log. Recording happens on the event loop's thread only.
"""

from __future__ import annotations

import secrets
import time
from collections import deque
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING

import anyio
import msgspec

from protocol.limits import RETAINED_EVENT_BYTES
from protocol.methods.events import (
    BULK_LISTED,
    BULK_MIN_CHANGES,
    BULK_QUIET_MS,
    Event,
    EventKind,
    FreshInstance,
    StateEnter,
    StateLeave,
    event_paths,
    kind_of,
)
from protocol.methods.subscriptions import RETAINED_EVENTS
from vaultd.events.wake import Waker, Wakers

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

_encoder = msgspec.json.Encoder()


@dataclass(frozen=True, slots=True)
class Record:
    """A recorded event: what filters look at, and its bytes as every subscriber sends them."""

    seq: int
    kind: EventKind
    paths: tuple[str, ...]
    data: bytes


@dataclass(slots=True)
class _Bulk:
    changes: int = 0
    listed: int = 0
    last: float = 0.0  #: monotonic time of its last note change


def parse_clock(token: str) -> tuple[str, int] | None:
    """``(instance, sequence)`` of a clock token, or None when it is not one."""
    instance, sep, seq = token.partition(":")
    if not sep or len(instance) != 8 or not seq.isdigit():
        return None
    return instance, int(seq)


class EventLog:
    """The events of one vault, for as long as the daemon holds it under one instance."""

    def __init__(
        self,
        vault: str,
        *,
        retained: int = RETAINED_EVENTS,
        retained_bytes: int = RETAINED_EVENT_BYTES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.vault = vault
        self.instance = secrets.token_hex(4)
        self.head = 0  #: the sequence of the last event recorded; 0 before the first
        self.closed = False  #: nothing more is recorded (the vault was removed or replaced)
        self.successor: EventLog | None = None  #: the log that goes on after this one, if any
        self._retained = retained
        self._retained_bytes = retained_bytes
        self._records: deque[Record] = deque()
        self._bytes = 0
        self._followers = Wakers()
        self._bulk: _Bulk | None = None
        self._bulk_opened = anyio.Event()
        self._now = clock

    # -- clocks --------------------------------------------------------------------------------

    def token(self, seq: int) -> str:
        return f"{self.instance}:{seq}"

    @property
    def clock(self) -> str:
        """The clock of the last event recorded (``<instance>:0`` before the first)."""
        return self.token(self.head)

    @property
    def in_bulk(self) -> bool:
        """A bulk state is open: more note events are likely on their way."""
        return self._bulk is not None

    @property
    def oldest(self) -> int:
        """The sequence of the oldest event kept (``head + 1`` when none is)."""
        return self._records[0].seq if self._records else self.head + 1

    def resume(self, token: str) -> int | None:
        """The sequence to follow on from for a client's ``since`` clock, or None (fresh instance):
        another instance, a clock never given, or older than what is kept."""
        parsed = parse_clock(token)
        if parsed is None or parsed[0] != self.instance:
            return None
        seq = parsed[1]
        if seq > self.head or seq + 1 < self.oldest:
            return None
        return seq

    # -- recording -----------------------------------------------------------------------------

    def record(self, *events: Event) -> None:
        """Stamp, encode and keep each event in order, then wake the followers."""
        if self.closed or not events:
            return
        at = time.time()
        for event in events:
            self.head += 1
            event.vault, event.clock, event.at = self.vault, self.token(self.head), at
            data = _encoder.encode(event)
            self._records.append(Record(self.head, kind_of(event), event_paths(event), data))
            self._bytes += len(data)
        while self._records and (len(self._records) > self._retained or self._bytes > self._retained_bytes):
            self._bytes -= len(self._records.popleft().data)
        self._followers.wake()

    def notes(self, changes: Sequence[Event]) -> None:
        """Record note changes found at once; many of them open (or continue) a bulk state."""
        if not changes:
            return
        bulk = self._bulk
        if bulk is None and len(changes) >= BULK_MIN_CHANGES:
            self.record(StateEnter())
            bulk = self._bulk = _Bulk()
            self._bulk_opened.set()
        if bulk is None:
            self.record(*changes)
            return
        listed = changes[: max(0, BULK_LISTED - bulk.listed)]
        bulk.changes += len(changes)
        bulk.listed += len(listed)
        bulk.last = self._now()
        self.record(*listed)

    def leave_bulk_if_quiet(self, busy: bool = False) -> float | None:
        """Leave the bulk state once the vault has been quiet for ``BULK_QUIET_MS``; else the
        seconds until it may be (None when no bulk state is open). ``busy``: changes are being
        read right now (the index is refreshing), so the vault is not quiet yet."""
        bulk = self._bulk
        if bulk is None:
            return None
        if busy:
            bulk.last = self._now()
        wait = bulk.last + BULK_QUIET_MS / 1000 - self._now()
        if wait > 0:
            return wait
        self._bulk = None
        self._bulk_opened = anyio.Event()
        self.record(StateLeave(changes=bulk.changes, listed=bulk.listed))
        return None

    async def run(self, busy: Callable[[], bool] = lambda: False) -> None:
        """Close bulk states once they go quiet, for as long as the log is open. ``busy`` says
        whether changes are being read now: a checkout's next batch is read while this one's
        events wait, and a long read is no quiet moment."""
        while not self.closed:
            await self._bulk_opened.wait()
            # Polls a deadline that each note change moves later; no event marks "quiet".
            while (wait := self.leave_bulk_if_quiet(busy())) is not None:  # noqa: ASYNC110
                await anyio.sleep(wait)

    def close(self, final: Event | None = None, successor: EventLog | None = None) -> None:
        """Record the last event and stop; followers move to ``successor`` (if any) once they have
        everything recorded here."""
        if self.closed:
            return
        if self._bulk is not None:
            self._bulk.last = float("-inf")
            self.leave_bulk_if_quiet()
        if final is not None:
            self.record(final)
        self.closed, self.successor = True, successor
        self._bulk_opened.set()  # ends run()
        self._followers.wake()

    def successor_for(self, reason: str) -> EventLog:
        """A new log (a new instance) that follows this one; its first event says why."""
        nxt = EventLog(self.vault, retained=self._retained, retained_bytes=self._retained_bytes, clock=self._now)
        nxt.record(FreshInstance(reason=reason))
        self.close(successor=nxt)
        return nxt

    # -- following -----------------------------------------------------------------------------

    def follow(self, waker: Waker) -> None:
        self._followers.add(waker)

    def unfollow(self, waker: Waker) -> None:
        self._followers.discard(waker)

    @property
    def followers(self) -> int:
        return len(self._followers)

    def after(self, seq: int, limit: int) -> list[Record] | None:
        """Up to ``limit`` events after ``seq``, oldest first; None when some are no longer kept."""
        if seq >= self.head:
            return []
        oldest = self.oldest
        if seq + 1 < oldest:
            return None
        return list(islice(self._records, seq + 1 - oldest, seq + 1 - oldest + limit))

    @property
    def retained_bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._records)
