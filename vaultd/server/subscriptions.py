"""A connection's subscriptions: each follows vault event logs and sends what passes its filter.

A subscription holds no events of its own, only its position in each vault's log (see
:mod:`vaultd.events.log`), and one task that sends: it wakes when a log records something,
gathers what follows its position (up to ``MAX_FRAME_EVENTS`` and about
``MAX_EVENT_FRAME_BYTES``), sends it as one ``subscription.events`` notification and moves on.
Recording never waits for it, so a slow subscriber costs a writer nothing and the daemon's
memory nothing beyond one frame in flight. While a followed vault is in a bulk state (a
checkout), a frame that is not full waits up to half a second for more, so thousands of changes
are a handful of full notifications however finely the watcher delivered them. Its bounds, each ending in ``subscription.dropped``:

- **lagged**: the events after its position are no longer kept; it could only skip them.
- **not_reading**: before each frame it asks the kernel how much the peer has not read yet
  (``SIOCOUTQ``). Past half the socket's send buffer it waits, so the frames never fill the
  buffer and the final notification always fits; a peer that reads nothing for the connection's
  ``send_timeout_s`` meanwhile gets that final notification and its connection is closed, the
  rule replies follow too. (Where the queue cannot be asked about, the connection's send timeout
  alone applies: a send that waits that long drops the connection.)
- **over_budget**: each frame is reserved and settled against the connection's share of the
  daemon's :class:`~vaultd.server.budget.ReplyBudget`, like a reply, and released once the
  kernel has it.

Ordering: a subscription sends nothing before the reply to its ``subscribe`` has been handed to
the kernel (the connection runs this module's after-reply hooks), and nothing after the reply to
its ``unsubscribe`` (which waits for a frame being written, and cancels any other wait).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.lowlevel
import structlog

from protocol.envelope import Notification, encode
from protocol.limits import MAX_EVENT_FRAME_BYTES
from protocol.methods.subscriptions import DROPPED, EVENTS, MAX_FRAME_EVENTS, MAX_SUBSCRIPTIONS, DroppedParams, DropReason
from vaultd.errors import LimitExceeded, NotFound
from vaultd.events.wake import Waker

if TYPE_CHECKING:
    from collections.abc import Coroutine, Mapping

    from protocol.methods.vaults import VaultEntry
    from vaultd.api.event_filter import EventFilter
    from vaultd.api.streams import SubscriptionStart
    from vaultd.events.log import EventLog
    from vaultd.events.wake import Wakers
    from vaultd.registry.config import DaemonLimits
    from vaultd.server.budget import ReplyBudget, Share

log = structlog.get_logger("vaultd.subscriptions")

HOLD_POLL_S = 0.05  #: how often a held-back subscription asks whether its peer has read
BULK_HOLD_S = 0.5  #: the longest a frame that is not full waits for more of a bulk state's events
_GONE = (anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError)

AfterReply = Callable[[bool], None]
_after_reply: ContextVar[list[AfterReply] | None] = ContextVar("vaultd_after_reply", default=None)


@contextmanager
def after_reply() -> Iterator[list[AfterReply]]:
    """Collect what must run once the current request's reply is out; the connection calls each
    with True when the reply went out as answered, False when it did not (refused or lost)."""
    hooks: list[AfterReply] = []
    token = _after_reply.set(hooks)
    try:
        yield hooks
    finally:
        _after_reply.reset(token)


class Followed(Protocol):
    """A vault as a subscription follows it: its current log, and its entry (for the filter)."""

    @property
    def events(self) -> EventLog: ...

    @property
    def entry(self) -> VaultEntry: ...


class StreamsHost(Protocol):
    """What subscriptions need of the daemon (a part of the connection's host)."""

    @property
    def vaults(self) -> Mapping[str, Followed]: ...

    @property
    def vault_set(self) -> Wakers: ...

    @property
    def budget(self) -> ReplyBudget: ...

    @property
    def limits(self) -> DaemonLimits: ...


class Outlet(Protocol):
    """What a subscription needs of the connection it lives in."""

    @property
    def host(self) -> StreamsHost: ...

    @property
    def share(self) -> Share: ...

    def peer_caught_up(self) -> bool: ...

    def unread_bytes(self) -> int | None:
        """Bytes sent that the peer has not read, or None when the kernel cannot be asked."""

    def hold_back_bytes(self) -> int | None:
        """Unread bytes past which no frame is sent (half the send buffer), or None."""

    async def write(self, data: bytes) -> None:
        """Send under the connection's send lock and timeout (a timeout drops the connection)."""

    def drop(self) -> None:
        """Close the connection."""

    def start(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run a task in the connection's task group."""


@dataclass(slots=True)
class _Follow:
    log: EventLog
    entry: VaultEntry
    seq: int  #: the last event sent or passed over by the filter


class _Subscription:
    def __init__(self, sub_id: int, start: SubscriptionStart, host: StreamsHost) -> None:
        self.id = sub_id
        self.vaults = start.vaults
        self.filter: EventFilter = start.filter
        self.settle_s = start.settle_s
        self.follows = {vid: _Follow(log, host.vaults[vid].entry, seq) for vid, (log, seq) in start.starts.items()}
        self.waker = Waker()
        self.scope = anyio.CancelScope()
        self.started = anyio.Event()
        self.done = anyio.Event()
        self.closing = False
        self.writing = False  #: a frame is being handed to the kernel: not to be cut short
        self.held_since: float | None = None  #: when a frame began to be held for a bulk state

    def clocks(self) -> dict[str, str]:
        return {vid: f.log.token(f.seq) for vid, f in self.follows.items()}


class _Lost:
    """Some events after a position are no longer kept."""


_LOST = _Lost()
Gathered = tuple[list[bytes], list[tuple[_Follow, int]]]


def events_frame(subscription: int, datas: list[bytes]) -> bytes:
    """One ``subscription.events`` notification of events encoded once when recorded."""
    head = b'{"jsonrpc":"2.0","method":"%s","params":{"subscription":%d,"events":[' % (EVENTS.name.encode(), subscription)
    return head + b",".join(datas) + b"]}}\n"


class ConnectionStreams:
    """The subscriptions of one connection (the :class:`~vaultd.api.streams.EventStreams` its
    handlers see)."""

    def __init__(self, outlet: Outlet) -> None:
        self._outlet = outlet
        self._subs: dict[int, _Subscription] = {}
        self._ids = itertools.count(1)

    def open(self, start: SubscriptionStart) -> int:
        """Register a subscription on this connection; a connection holds a bounded number.

        Raises:
            LimitExceeded: LIMIT, the connection holds ``MAX_SUBSCRIPTIONS`` already.
        """
        if len(self._subs) >= MAX_SUBSCRIPTIONS:
            start.filter.close()
            raise LimitExceeded(f"this connection has {MAX_SUBSCRIPTIONS} subscriptions, the most it may; unsubscribe one first")
        host = self._outlet.host
        sub = _Subscription(next(self._ids), start, host)
        self._subs[sub.id] = sub
        for follow in sub.follows.values():
            follow.log.follow(sub.waker)
        host.vault_set.add(sub.waker)
        hooks = _after_reply.get()
        if hooks is None:
            sub.started.set()
        else:
            hooks.append(lambda sent: sub.started.set() if sent else self._abandon(sub))
        self._outlet.start(self._run, sub)
        return sub.id

    async def close(self, subscription: int) -> None:
        """End a subscription of this connection and release its filter.

        Raises:
            NotFound: NOT_FOUND, this connection has no such subscription.
        """
        sub = self._subs.pop(subscription, None)
        if sub is None:
            raise NotFound(f"this connection has no subscription {subscription}")
        sub.closing = True
        sub.waker.wake()
        if not sub.writing:
            sub.scope.cancel()
        await sub.done.wait()

    def close_all(self) -> None:
        """The peer hung up: stop every subscription (a frame being written is finished first,
        bounded by the send timeout, so a peer that only closed its sending side reads whole frames)."""
        for sub in self._subs.values():
            sub.closing = True
            sub.waker.wake()
            if not sub.writing:
                sub.scope.cancel()
        self._subs.clear()

    def _abandon(self, sub: _Subscription) -> None:
        """Its subscribe reply never went out as a success: the client does not know it exists."""
        self._subs.pop(sub.id, None)
        sub.closing = True
        sub.scope.cancel()

    @property
    def count(self) -> int:
        return len(self._subs)

    # -- the sender --------------------------------------------------------------------------

    async def _run(self, sub: _Subscription) -> None:
        try:
            with sub.scope:
                await sub.started.wait()
                await self._deliver(sub)
        finally:
            for follow in sub.follows.values():
                follow.log.unfollow(sub.waker)
            self._outlet.host.vault_set.discard(sub.waker)
            self._subs.pop(sub.id, None)
            sub.filter.close()
            sub.done.set()

    async def _deliver(self, sub: _Subscription) -> None:
        settled = False  #: the vault was quiet for settle_s since the subscription last caught up
        while not sub.closing:
            self._reconcile(sub)
            gathered = self._gather(sub)
            if isinstance(gathered, _Lost):
                message = (
                    "it fell behind the events its vault keeps; subscribe again with these clocks as since (then re-query what is fresh)"
                )
                await self._drop(sub, DropReason.LAGGED, message)
                return
            if gathered is None:
                if sub.vaults is not None and not sub.follows:
                    await self._drop(sub, DropReason.VAULTS_REMOVED, "every vault it followed was unregistered")
                    return
                await sub.waker.wait()
                settled = False
                continue
            if sub.settle_s and not settled:
                await self._settle(sub)
                settled = True
                continue  # gather again: the quiet wait may have brought more
            datas, upto = gathered
            if datas and await self._hold_for_bulk(sub, len(datas)):
                continue  # gather again: the frame has filled, or the hold is over
            if datas:
                if not await self._room():
                    seconds = self._outlet.host.limits.send_timeout_s
                    message = f"the connection read nothing for {seconds:g} s while events waited (send_timeout_s); it is closed"
                    await self._drop(sub, DropReason.NOT_READING, message, close_connection=True)
                    return
                if not await self._send(sub, events_frame(sub.id, datas)):
                    return
            for follow, seq in upto:
                follow.seq = seq
            await anyio.lowlevel.checkpoint()  # a long run of filtered-out events must not hog the loop

    def _reconcile(self, sub: _Subscription) -> None:
        """Follow a log's successor once it is done with the log, drop a removed vault's, and take
        up vaults attached since (every event of theirs)."""
        vaults = self._outlet.host.vaults
        for vid, follow in list(sub.follows.items()):
            old = follow.log
            if not old.closed or follow.seq < old.head:
                continue
            old.unfollow(sub.waker)
            if old.successor is not None:
                follow.log, follow.seq = old.successor, 0
                old.successor.follow(sub.waker)
            else:
                del sub.follows[vid]
        for vid, runtime in vaults.items():
            if vid not in sub.follows and (sub.vaults is None or vid in sub.vaults) and not runtime.events.closed:
                sub.follows[vid] = _Follow(runtime.events, runtime.entry, 0)
                runtime.events.follow(sub.waker)

    def _gather(self, sub: _Subscription) -> Gathered | _Lost | None:
        """The next frame's events and how far each log was read; None when nothing is new."""
        datas: list[bytes] = []
        size = 0
        upto: list[tuple[_Follow, int]] = []
        for follow in sub.follows.values():
            if len(datas) >= MAX_FRAME_EVENTS or size >= MAX_EVENT_FRAME_BYTES:
                break
            records = follow.log.after(follow.seq, MAX_FRAME_EVENTS)
            if records is None:
                return _LOST
            last = follow.seq
            for record in records:
                if datas and (len(datas) >= MAX_FRAME_EVENTS or size + len(record.data) > MAX_EVENT_FRAME_BYTES):
                    break
                last = record.seq
                if sub.filter.passes(follow.entry, record):
                    datas.append(record.data)
                    size += len(record.data)
            if last != follow.seq:
                upto.append((follow, last))
        return (datas, upto) if upto else None

    async def _hold_for_bulk(self, sub: _Subscription, gathered: int) -> bool:
        """While a followed vault is in a bulk state, hold a frame that is not full for more of its
        events (at most ``BULK_HOLD_S`` a frame): a checkout is then a handful of full
        notifications however the watcher happened to batch it. True when it waited."""
        if gathered >= MAX_FRAME_EVENTS or not any(f.log.in_bulk for f in sub.follows.values()):
            sub.held_since = None
            return False
        now = anyio.current_time()
        if sub.held_since is None:
            sub.held_since = now
        left = sub.held_since + BULK_HOLD_S - now
        if left <= 0:
            sub.held_since = None
            return False
        with anyio.move_on_after(left):
            await sub.waker.wait()
        return True

    async def _settle(self, sub: _Subscription) -> None:
        """Wait until no event came for ``settle_s``, at most ten times that long."""
        deadline = anyio.current_time() + 10 * sub.settle_s
        while not sub.closing:
            left = deadline - anyio.current_time()
            if left <= 0:
                return
            with anyio.move_on_after(min(sub.settle_s, left)) as quiet:
                await sub.waker.wait()
            if quiet.cancelled_caught:
                return

    async def _room(self) -> bool:
        """Wait while the peer's unread bytes are past the hold-back mark; False when it read
        nothing for the send timeout meanwhile."""
        outlet = self._outlet
        mark, unread = outlet.hold_back_bytes(), outlet.unread_bytes()
        if mark is None or unread is None or unread < mark:
            return True
        timeout = outlet.host.limits.send_timeout_s
        deadline, lowest = anyio.current_time() + timeout, unread
        while True:
            await anyio.sleep(HOLD_POLL_S)
            unread = outlet.unread_bytes()
            if unread is None or unread < mark:
                return True
            if unread < lowest:  # it reads, slowly: the clock starts again
                deadline, lowest = anyio.current_time() + timeout, unread
            elif anyio.current_time() >= deadline:
                return False

    async def _send(self, sub: _Subscription, data: bytes) -> bool:
        """Send one frame within the connection's budget; False (and dropped) when it is refused."""
        outlet = self._outlet
        budget, share = outlet.host.budget, outlet.share
        reservation = await budget.reserve(share, outlet.peer_caught_up())
        refused = budget.settle(share, reservation, len(data))
        if refused is not None:
            await self._drop(sub, DropReason.OVER_BUDGET, refused)
            return False
        sub.writing = True
        try:
            await outlet.write(data)
        finally:
            sub.writing = False
            budget.release(share, len(data))
        return True

    async def _drop(self, sub: _Subscription, reason: DropReason, message: str, *, close_connection: bool = False) -> None:
        """The subscription's final notification, with the clocks to resume from."""
        self._subs.pop(sub.id, None)
        params = DroppedParams(subscription=sub.id, reason=reason, message=message, clocks=sub.clocks())
        log.info("dropped a subscription", reason=str(reason), vaults=sorted(sub.follows))
        sub.writing = True
        try:
            await self._outlet.write(encode(Notification(method=DROPPED.name, params=params)))
        except _GONE:
            pass
        finally:
            sub.writing = False
        if close_connection:
            self._outlet.drop()
