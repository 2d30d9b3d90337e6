"""Wakers: how a recorder tells followers that something happened, without ever waiting for them.

A follower owns one :class:`Waker` and registers it wherever it follows something (a vault's
event log, the daemon's set of vaults). Waking sets a flag; the follower, when it next waits,
returns at once and clears it. Waking twice before the follower runs is waking once: the
follower reads everything new when it runs, so no wake-up is lost and none is queued.
"""

from __future__ import annotations

import anyio


class Waker:
    """One follower's wake-up flag."""

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event: anyio.Event | None = None

    def wake(self) -> None:
        if self._event is None:
            self._event = anyio.Event()
        self._event.set()

    async def wait(self) -> None:
        """Return once woken (at once if woken since the last wait), clearing the flag."""
        if self._event is None:
            self._event = anyio.Event()
        await self._event.wait()
        self._event = None


class Wakers:
    """The followers of one thing; :meth:`wake` wakes them all."""

    __slots__ = ("_wakers",)

    def __init__(self) -> None:
        self._wakers: set[Waker] = set()

    def add(self, waker: Waker) -> None:
        self._wakers.add(waker)

    def discard(self, waker: Waker) -> None:
        self._wakers.discard(waker)

    def wake(self) -> None:
        for waker in self._wakers:
            waker.wake()

    def __len__(self) -> int:
        return len(self._wakers)
