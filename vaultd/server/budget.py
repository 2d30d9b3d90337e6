"""The bound on reply bytes, across every connection and per connection, from request to send.

A client may pipeline requests and never read the replies. Bounding only the encoded replies
waiting for their sockets is not enough: every request already being answered holds its reply
too, so memory grew with (connections × requests in flight × reply size). The budget therefore
covers a request from before it is dispatched until its reply has been handed to the kernel:

1. **Reserve.** Before a connection's reader dispatches a request, it reserves an estimate (the
   connection's last reply, at least ``RESERVE_BYTES``, at most its share) against the share and
   the total. When either is full the reader waits, so a client that reads nothing soon stops
   being read from. A connection holding nothing always fits its own share. Waiters are served
   in order, those holding nothing before those that hold something; and a connection whose
   peer has read every byte sent to it (a normal client, as opposed to one with replies stuck
   in its socket) may, holding nothing, go over the total by up to one share, so it is answered
   while non-readers hold the whole budget. Whoever holds bytes is either answering, which
   ends, or sending, which ends when the peer reads or the send timeout drops it: every wait
   ends.
2. **Settle.** Once the reply is encoded, the reservation becomes its real size. Settling never
   waits: holders waiting to settle, with nothing sending, would wait for each other forever.
   The reply is refused (dropped at once, the request answered with a small LIMIT error) when
   it alone is over one connection's share; when beside the connection's other replies it is
   over the share; when it would take the total over its reservation's ceiling; and, if it is
   bigger than ``SMALL_REPLY_BYTES``, when beside others it would fill more than half the total
   or connections holding nothing are waiting. Only a small reply may go over the total: it goes
   straight into its peer's empty socket buffer, so it is held only a moment. A small reply
   (every write receipt in practice) is thus refused only at the hard bounds, never because
   others are waiting.
3. **Release** when the reply has been handed to the kernel, or its connection is gone.

Reply bytes held are then at most ``total + per_connection`` whatever the number of clients, and
a client that reads nothing holds one reply, so many of them are found out and dropped at once.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import anyio

RESERVE_BYTES = 256 * 1024  #: the first estimate of a reply, before a connection has had one
#: the most a reply may be to go over the total: a peer that has read everything takes it into its
#: empty socket buffer at once, so going over costs the daemon nothing for longer than a moment
SMALL_REPLY_BYTES = 64 * 1024


@dataclass(slots=True)
class Share:
    """One connection's part of the budget: what it holds now, at most, and expects next."""

    limit: int
    held: int = 0
    estimate: int = RESERVE_BYTES


@dataclass(slots=True, frozen=True)
class Reservation:
    """What one request took before it was dispatched, and how full it may leave the budget."""

    size: int
    ceiling: int  #: the most all connections may hold with this request's reply taken


@dataclass(slots=True, eq=False)
class _Waiter:
    share: Share
    size: int
    caught_up: bool
    event: anyio.Event
    granted: bool = False
    ceiling: int = 0  #: set when granted


class ReplyBudget:
    """Counts reply bytes from a request's reservation to the end of its reply's send."""

    def __init__(self, total: int, per_connection: int) -> None:
        self.total = total
        self.per_connection = min(per_connection, total)
        self.held = 0
        self.peak = 0  #: the most bytes held at once since start (logged when the daemon stops)
        self.refused = 0  #: replies answered with LIMIT because they did not fit
        self.high_since_trim = 0  #: the most bytes held at once since memory was last given back
        self._idle: deque[_Waiter] = deque()  #: waiters whose connection holds nothing: served first
        self._busy: deque[_Waiter] = deque()

    def share(self) -> Share:
        return Share(self.per_connection, estimate=min(RESERVE_BYTES, self.per_connection))

    @property
    def waiting(self) -> int:
        """Readers waiting for a reservation."""
        return len(self._idle) + len(self._busy)

    @staticmethod
    def _share_fits(waiter: _Waiter) -> bool:
        share = waiter.share
        return share.held == 0 or share.held + waiter.size <= share.limit

    def _take(self, share: Share, size: int) -> None:
        share.held += size
        self.held += size
        self.peak = max(self.peak, self.held)
        self.high_since_trim = max(self.high_since_trim, self.held)

    def _ceiling(self, share: Share, caught_up: bool) -> int:
        """How full a reservation may leave the budget: a connection holding nothing may fill the
        total (a caught-up one, go one share over it); one holding something, only half of it."""
        if share.held == 0:
            return self.total + (self.per_connection if caught_up else 0)
        return self.total // 2

    def unreserved(self) -> Reservation:
        """For an answer known to be small (before hello): nothing taken, and never waited for."""
        return Reservation(0, self.total + self.per_connection)

    async def reserve(self, share: Share, caught_up: bool = False) -> Reservation:
        """Wait until the share's estimate fits, take it, and return how much was taken.

        ``caught_up``: the peer has read every byte sent to it. Such a connection, holding
        nothing, may go over the total by up to one share: a client that reads its replies is
        answered at once while non-readers hold the whole budget (they have unread bytes).
        Cancelled while waiting (the connection is dropped or left), it takes nothing.
        """
        size = share.estimate
        ceiling = self._ceiling(share, caught_up)
        waiter = _Waiter(share, size, caught_up, anyio.Event())
        queue = self._idle if share.held == 0 else self._busy
        ahead = list(self._idle) if queue is self._idle else [*self._idle, *self._busy]
        if (
            self._share_fits(waiter)
            and self.held + size <= ceiling
            and not any(self._share_fits(w) and self._ceiling(w.share, w.caught_up) >= ceiling for w in ahead)
        ):
            self._take(share, size)
            return Reservation(size, ceiling)
        queue.append(waiter)
        try:
            await waiter.event.wait()
        except BaseException:
            if waiter.granted:
                self.release(share, size)
            else:
                queue.remove(waiter)
            raise
        return Reservation(size, waiter.ceiling)

    def settle(self, share: Share, reservation: Reservation, size: int) -> str | None:
        """Turn a reservation into the encoded reply's ``size``; a refusal message, or None.

        On refusal the reservation is released and the caller answers with a LIMIT error instead.
        The rules are the module's; the next reservation of this connection expects a reply of
        this size.
        """
        reserved = reservation.size
        share.estimate = min(max(size, RESERVE_BYTES), share.limit)
        others = share.held - reserved
        over_share = size > share.limit
        small = size <= SMALL_REPLY_BYTES
        ceiling = max(reservation.ceiling, self.total) if small else self.total
        beside = others > 0 and not small  # a big reply beside this connection's others
        if beside:
            ceiling = min(ceiling, self.total // 2)
        if over_share or (others > 0 and others + size > share.limit) or (beside and self._idle) or self.held - reserved + size > ceiling:
            self.refused += 1
            self.release(share, reserved)
            return self.refusal(share, size, over_share)
        if size >= reserved:
            self._take(share, size - reserved)
        else:
            self.release(share, reserved - size)
        return None

    def release(self, share: Share, size: int) -> None:
        share.held -= size
        self.held -= size
        self._grant()

    def _grant(self) -> None:
        """Hand freed bytes to the waiters in order. One waiting for its own share (its earlier
        replies are unread) is passed over; one that does not fit under its ceiling holds back
        every later one whose ceiling is no higher."""
        blocked = -1
        for queue in (self._idle, self._busy):
            for waiter in list(queue):
                ceiling = self._ceiling(waiter.share, waiter.caught_up)
                if not self._share_fits(waiter) or ceiling <= blocked:
                    continue
                if self.held + waiter.size > ceiling:
                    blocked = max(blocked, ceiling)
                    continue
                waiter.ceiling = ceiling
                queue.remove(waiter)
                self._take(waiter.share, waiter.size)
                waiter.granted = True
                waiter.event.set()

    def refusal(self, share: Share, size: int, over_share: bool) -> str:
        """What a refused request is told: the numbers, and what to do about them."""
        if over_share:
            return (
                f"the reply is {size} bytes, over the {share.limit}-byte limit of one connection's "
                f"queued replies (connection_reply_bytes in config.json); ask for less (a smaller "
                f"limit or max_bytes)"
            )
        return (
            f"the daemon's queued replies are full (this connection holds {share.held} of "
            f"{share.limit} bytes, all connections {self.held} of {self.total}: connection_reply_bytes "
            f"and reply_budget_bytes in config.json); read the replies already sent before sending more"
        )
