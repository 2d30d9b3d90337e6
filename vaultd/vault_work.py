"""Vault-wide work (``vault.rebuild``, ``vault.lint``, ``graph.communities``, and the operations
that plan over a whole vault: ``lint.fix``, ``vault.tidy``): taken in turn, and bounded per
connection.

Each of these reads a whole vault and can take seconds on a large one. Run side by side they only
divide the machine between them while every other request waits for a core; queued without
bound, one client could fill the daemon's day. So:

- **One at a time, first come first served.** The daemon runs one such piece of work at once
  (:meth:`VaultWork.turn`, a FIFO limiter), so a second client's work starts as soon as the
  first's ends, never behind a pile the first client kept adding to.
- **A bound per connection.** A connection may have ``MAX_VAULT_WORK`` of them queued or running;
  one more is refused at once with LIMIT (:meth:`VaultWork.admitted`), so a client pipelining
  hundreds holds two places in the queue, not hundreds.
- **Declared once for operations.** An operation that plans over the whole vault says so where it
  is declared (``vault_wide`` in :mod:`vaultd.ops.catalog`); the catalogue admits it here before
  it runs, before it takes the vault's writer, so a queued tidy never holds the writer waiting.
- **Identical work joins.** A ``vault.rebuild`` asked for while one is queued joins it (see
  :meth:`vaultd.runtime.VaultRuntime.rebuild`); a repeated ``graph.communities`` on an unchanged
  vault is answered from the snapshot without taking a turn.

None of it holds the event loop or the GIL for long: Leiden and a large vault's lint run in a
worker process (:mod:`vaultd.worker`), a rebuild's parsing in the parse pool.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Final

import anyio

from protocol.methods.indexing import MAX_VAULT_WORK
from vaultd.errors import LimitExceeded

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


class VaultWork:
    """The daemon's queue of vault-wide work."""

    def __init__(self, per_connection: int = MAX_VAULT_WORK, at_once: int = 1) -> None:
        self.per_connection = per_connection
        self.at_once = at_once
        self._held: dict[int, int] = {}  #: id of a connection's call context -> its work queued or running
        self._limiter: anyio.CapacityLimiter | None = None  #: made in the event loop, on first use

    def held(self, caller: object) -> int:
        return self._held.get(id(caller), 0)

    @asynccontextmanager
    async def admitted(self, caller: object, method: str) -> AsyncIterator[None]:
        """Count one piece of work against the connection's bound while it is queued or runs
        (``caller``: the connection's call context, one object per connection).

        Raises:
            LimitExceeded: LIMIT when the connection already has ``per_connection`` of them.
        """
        key = id(caller)
        held = self._held.get(key, 0)
        if held >= self.per_connection:
            raise LimitExceeded(
                f"this connection already has {held} vault-wide requests "
                "(vault.rebuild, vault.lint, lint.fix, vault.tidy, graph.communities) "
                f"queued or running, the most it may; wait for their replies before sending another {method}"
            )
        self._held[key] = held + 1
        try:
            yield
        finally:
            left = self._held[key] - 1
            if left:
                self._held[key] = left
            else:
                del self._held[key]

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Wait for the daemon's turn for vault-wide work (first come, first served), and hold it."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.at_once)
        async with self._limiter:
            yield


#: The daemon's one queue (one process, one event loop).
VAULT_WORK: Final = VaultWork()
