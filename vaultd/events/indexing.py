"""A build's progress as the daemon reports it: ``index.progress`` events and ``daemon.status``.

The build counts its progress in a :class:`~vaultd.vault.index.BuildTally` from its worker
thread; nothing there waits for anyone. This module reads the tally on the event loop, a few
times a second while the build runs, and records an event only when the count moved, so a
stalled walk or an idle vault records nothing.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import anyio

from protocol.methods.events import IndexProgress
from protocol.methods.indexing import BuildProgress

if TYPE_CHECKING:
    from collections.abc import Callable

    from vaultd.events.log import EventLog
    from vaultd.vault.index import BuildTally

PROGRESS_TICK_S = 0.25  #: the most often a build's progress is recorded


def progress_of(tally: BuildTally) -> BuildProgress | None:
    """The tally as the protocol shows it; None before the build has begun."""
    if tally.started is None:
        return None
    return BuildProgress(
        parsed=tally.parsed,
        total=tally.total,
        reused=tally.reused,
        elapsed_s=round(time.monotonic() - tally.started, 3),
        rebuild=tally.rebuild,
    )


async def report_progress(events: Callable[[], EventLog], tally: BuildTally, done: anyio.Event, going: Callable[[], bool]) -> None:
    """Record ``index.progress`` in the vault's current log until ``done`` is set (then once more,
    if the count moved since), or until ``going()`` says the build was given up."""
    last: tuple[int, int | None] | None = None
    while going():
        with anyio.move_on_after(PROGRESS_TICK_S):
            await done.wait()
        now = progress_of(tally)
        if now is not None and (now.parsed, now.total) != last:
            events().record(IndexProgress.of(now))
            last = (now.parsed, now.total)
        if done.is_set():
            return
