"""memory.candidates: an agent's memory entries that no note of the vault records yet.

The import is an operation (:mod:`vaultd.ops.memory_import`); this read shares its reading of the
memory files and of which entries the vault's notes already record, so the list and the import
agree on what is new.
"""

from __future__ import annotations

import anyio

from protocol.methods import memory
from protocol.methods.memory import MemoryCandidatesParams, MemoryCandidatesResult, MemoryEntry
from vaultd.api.handlers import CallContext, handles
from vaultd.api.read_methods import live_index
from vaultd.memory_import.entries import excerpt
from vaultd.ops.memory_import import imported_ids, memory_entries


@handles(memory.MEMORY_CANDIDATES)
async def memory_candidates(ctx: CallContext, params: MemoryCandidatesParams) -> MemoryCandidatesResult:
    """Entries not yet imported, in file order, at most ``limit``.

    Raises:
        PolicyRefused: POLICY, an agent named a memory path.
        InvalidParams: INVALID_PARAMS, the path is relative.
        NotFound: NOT_FOUND, nothing is at the path.
    """
    live = await live_index(ctx, params.vault)
    found = await anyio.to_thread.run_sync(memory_entries, params.path, ctx.channel)
    done = imported_ids(live.index)
    fresh, imported, seen = [], 0, set()
    for entry in found.entries:
        if entry.id in seen:
            continue
        seen.add(entry.id)
        if entry.id in done:
            imported += 1
        else:
            fresh.append(entry)
    return MemoryCandidatesResult(
        entries=[MemoryEntry(id=e.id, title=e.title, excerpt=excerpt(e.text), origin=e.origin, kind=e.kind) for e in fresh[: params.limit]],
        imported=imported,
        total=len(fresh),
        skipped=found.skipped[:100],
        truncated=found.truncated or len(found.skipped) > 100,
    )
