"""One way for a test to wait for something that happens a moment later (a watcher batch, a
socket appearing, a paused write reaching its gate).

A bounded poll that fails with what it waited for, instead of a ``while ...: time.sleep`` loop in
each test that either hangs or falls through to an assertion that no longer says why.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

T = TypeVar("T")

POLL_S = 0.02


class WaitTimeout(AssertionError, TimeoutError):
    """The predicate never held within the timeout: a test failure that names what was awaited
    (a :class:`TimeoutError` too, for callers that give up on a slow start)."""


def _deadline(timeout: float, what: str) -> Callable[[], None]:
    """A check that raises :class:`WaitTimeout` once ``timeout`` seconds have passed."""
    at = time.monotonic() + timeout

    def give_up() -> None:
        if time.monotonic() >= at:
            raise WaitTimeout(f"gave up after {timeout} s waiting for {what}")

    return give_up


def wait_until(predicate: Callable[[], T], timeout: float, what: str, *, poll: float = POLL_S) -> T:
    """Call ``predicate`` until it returns something truthy and return that value.

    It is called at least once, even with a zero timeout. An exception it raises propagates at
    once: a predicate that can tell the wait is hopeless (a process exited) raises to say so.
    """
    give_up = _deadline(timeout, what)
    while not (value := predicate()):
        give_up()
        time.sleep(poll)
    return value


async def wait_until_async(predicate: Callable[[], T], timeout: float, what: str, *, poll: float = POLL_S) -> T:  # noqa: ASYNC109 - the same signature as wait_until
    """:func:`wait_until` for a test running on the event loop, whose predicate needs the loop to
    run meanwhile (a watcher task in the same loop) and which has no event of its own to await."""
    import anyio  # the sync helper stays importable without it

    give_up = _deadline(timeout, what)
    while not (value := predicate()):
        give_up()
        await anyio.sleep(poll)
    return value
