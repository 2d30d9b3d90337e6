"""Rebuilding a live index: every note re-read and re-parsed, while reads go on.

The new index is built beside the one that serves reads, into the same search cache (its rows
are replaced note by note), with the live index held still: the watcher's refreshes and the
writers' plans wait for it, so nothing changes between the old index and the new one but what
the rebuild found on disk. What it found different is reported as note events, like any refresh,
and the changes the watcher delivers meanwhile are applied after it, against the new index.

Requests are queued per vault (:class:`RebuildQueue`): one rebuild at a time, and the requests
made while the next waits to start all get that one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from vaultd.errors import Unavailable
from vaultd.vault.changes import index_changes
from vaultd.vault.index import BuildTally, VaultIndex

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from anyio.abc import TaskGroup

    from vaultd.vault.watcher import LiveIndex


@dataclass(frozen=True, slots=True)
class Rebuilt:
    notes: int  #: in the index after it
    parsed: int
    changed: int  #: notes whose indexed state differed from the disk
    seconds: float


async def rebuild(live: LiveIndex, tally: BuildTally) -> Rebuilt:
    """Replace ``live``'s index with one built from the disk alone; ``tally`` counts the progress."""
    tally.rebuild = True
    async with live.held_still() as old:
        fresh = VaultIndex(live.root, old.cache)
        parsed, _reused = await anyio.to_thread.run_sync(fresh.build, tally)
        changes = index_changes(old.notes, fresh.notes)
        fresh.generation = old.generation + 1
        live.index = fresh
        if live.feed is not None and changes:
            live.feed(changes)
    seconds = time.monotonic() - (tally.started or time.monotonic())
    return Rebuilt(notes=len(fresh.notes), parsed=parsed, changed=len(changes), seconds=seconds)


Turn = Callable[[], AbstractAsyncContextManager[object]]


class _Pending:
    """A rebuild asked for: whoever asks before it starts waits for it too."""

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.joined = 0  #: requests beyond the first that wait for it
        self.result: Rebuilt | None = None
        self.error: Exception | None = None


class RebuildQueue:
    """One vault's rebuild requests: one rebuild runs at a time, and every request made while the
    next one waits to start joins it, so requests piled up behind a long rebuild cost one more
    rebuild, not one each. A running rebuild is not joined: it may have read a note before the
    request was made."""

    def __init__(self, run: Callable[[int], Awaitable[Rebuilt]]) -> None:
        self._run = run  #: does one rebuild; told how many requests beyond the first it answers
        self._lock = anyio.Lock()
        self._pending: _Pending | None = None

    async def request(self, tasks: TaskGroup | None, turn: Turn | None) -> Rebuilt:
        """The result of a rebuild that starts after this call; ``turn`` is entered before it starts.

        The rebuild runs in ``tasks`` (when given), so a caller that goes away leaves it to the others.
        """
        pending = self._pending
        if pending is None:
            pending = self._pending = _Pending()
            if tasks is not None:
                tasks.start_soon(self._run_one, pending, turn)
            else:
                await self._run_one(pending, turn)
        else:
            pending.joined += 1
        await pending.done.wait()
        if pending.error is not None:
            raise pending.error
        assert pending.result is not None
        return pending.result

    async def _run_one(self, pending: _Pending, turn: Turn | None) -> None:
        try:
            async with self._lock, turn() if turn is not None else nullcontext():
                if self._pending is pending:
                    self._pending = None  # started: a request from now on queues the next one
                pending.result = await self._run(pending.joined)
        except Exception as exc:  # noqa: BLE001 - handed to every caller of this rebuild, and raised there
            pending.error = exc
        except BaseException:
            pending.error = Unavailable("the daemon stopped before the rebuild finished; retry")
            raise
        finally:
            if self._pending is pending:
                self._pending = None
            pending.done.set()
