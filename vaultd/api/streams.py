"""What the subscription handlers need of the connection they are called on.

A subscription lives as long as its connection and sends on it, so the connection (in
``vaultd.server``) holds it; the handlers, a layer below, see it only through
:class:`EventStreams`, and hand it a :class:`SubscriptionStart` worked out here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from vaultd.api.event_filter import EventFilter
    from vaultd.events.log import EventLog


@dataclass(frozen=True, slots=True)
class SubscriptionStart:
    """Everything a new subscription follows, and from where."""

    vaults: frozenset[str] | None  #: the vault ids it follows; None: every vault, later ones too
    filter: EventFilter
    settle_s: float
    #: per vault followed now: its log and the sequence after which events are sent
    starts: dict[str, tuple[EventLog, int]]


class EventStreams(Protocol):
    def open(self, start: SubscriptionStart) -> int:
        """Register a subscription; it sends nothing before the reply to this call is out.

        Raises:
            LimitExceeded: LIMIT when the connection has its most subscriptions.
        """
        ...

    async def close(self, subscription: int) -> None:
        """End a subscription; returns once nothing more will be sent for it.

        Raises:
            NotFound: NOT_FOUND when the connection has no such subscription.
        """
        ...
