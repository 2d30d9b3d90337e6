"""Rebuilding a live index: every note re-read and re-parsed, while reads go on.

The new index is built beside the one that serves reads, into the same search cache (its rows
are replaced note by note), with the live index held still: the watcher's refreshes and the
writers' plans wait for it, so nothing changes between the old index and the new one but what
the rebuild found on disk. What it found different is reported as note events, like any refresh,
and the changes the watcher delivers meanwhile are applied after it, against the new index.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from vaultd.vault.changes import index_changes
from vaultd.vault.index import BuildTally, VaultIndex

if TYPE_CHECKING:
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
        updates, _reused = await anyio.to_thread.run_sync(fresh.build, tally)
        changes = index_changes(old.notes, fresh.notes)
        fresh.generation = old.generation + 1
        live.index = fresh
        if live.feed is not None and changes:
            live.feed(changes)
    seconds = time.monotonic() - (tally.started or time.monotonic())
    return Rebuilt(notes=len(fresh.notes), parsed=len(updates.notes), changed=len(changes), seconds=seconds)
