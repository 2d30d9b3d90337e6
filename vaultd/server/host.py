"""What a session needs of the daemon that accepted it: the handlers' Host, and the bounds.

A session is below the daemon in the layers (the daemon starts the listener that makes
sessions), so it names the daemon only through this protocol.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from vaultd.api.host import Host

if TYPE_CHECKING:
    from contextlib import AbstractAsyncContextManager

    from vaultd.events.wake import Wakers
    from vaultd.registry.config import DaemonLimits
    from vaultd.server.budget import ReplyBudget


class SessionHost(Host, Protocol):
    @property
    def max_frame(self) -> int:
        """The largest request frame, in bytes."""

    @property
    def limits(self) -> DaemonLimits:
        """The daemon limits of config.json: connections, timeouts, reply budgets."""

    @property
    def budget(self) -> ReplyBudget:
        """The reply bytes every session's queued replies count against."""

    @property
    def vault_set(self) -> Wakers:
        """Woken when a vault is attached or detached (subscriptions to every vault follow it)."""

    def tracking_request(self) -> AbstractAsyncContextManager[None]:
        """Counts a request in flight, so a stop waits for it."""
        ...
