"""The bound on reply bytes waiting for their readers, across every connection and per connection.

A client may pipeline requests and never read the replies. Each reply is encoded before it can
be sent, so without a bound the daemon holds every such reply until the peer reads or leaves:
memory then grows with (connections × pipelined requests × reply size). Here every encoded reply
is admitted against two numbers before it waits for its connection's socket: the global budget
and the connection's share of it. A reply that does not fit is not queued: it is answered at once
with a small LIMIT error, so the request never waits and the bytes are freed immediately. Waiting
instead would let a non-reading client hold its slots, and every other client behind the budget.

The bytes are released when the reply has been handed to the kernel or its connection is gone.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Share:
    """One connection's part of the budget: what it holds now, and at most."""

    limit: int
    held: int = 0


class ReplyBudget:
    """Counts encoded reply bytes between their encoding and the end of their send."""

    def __init__(self, total: int, per_connection: int) -> None:
        self.total = total
        self.per_connection = min(per_connection, total)
        self.held = 0
        self.peak = 0  #: the most bytes held at once since start (logged when the daemon stops)
        self.refused = 0  #: replies answered with LIMIT because they did not fit
        self.high_since_trim = 0  #: the most bytes held at once since memory was last given back

    def share(self) -> Share:
        return Share(self.per_connection)

    def admit(self, share: Share, size: int) -> bool:
        """Take ``size`` bytes for one reply if both bounds allow it; False leaves nothing taken."""
        if share.held + size > share.limit or self.held + size > self.total:
            self.refused += 1
            return False
        share.held += size
        self.held += size
        self.peak = max(self.peak, self.held)
        self.high_since_trim = max(self.high_since_trim, self.held)
        return True

    def release(self, share: Share, size: int) -> None:
        share.held -= size
        self.held -= size

    def refusal(self, share: Share, size: int) -> str:
        """What a refused request is told: the numbers, and what to do about them."""
        if size > share.limit:
            return (f"the reply is {size} bytes, over the {share.limit}-byte limit of one connection's "
                    f"queued replies (connection_reply_bytes in config.json); ask for less (a smaller "
                    f"limit or max_bytes)")
        return (f"the daemon's queued replies are full (this connection holds {share.held} of "
                f"{share.limit} bytes, all connections {self.held} of {self.total}: connection_reply_bytes "
                f"and reply_budget_bytes in config.json); read the replies already sent before sending more")
