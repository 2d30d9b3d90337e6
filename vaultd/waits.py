"""Waiting for whichever of several events comes first: anyio waits on one event at a time, and a
task that must stop early (a stop request, a failure) watches two."""

from __future__ import annotations

import anyio


async def first_of(*events: anyio.Event) -> None:
    """Return as soon as any of ``events`` is set (at once if one is already)."""
    async with anyio.create_task_group() as tg:

        async def wait(event: anyio.Event) -> None:
            await event.wait()
            tg.cancel_scope.cancel()

        for event in events:
            tg.start_soon(wait, event)
