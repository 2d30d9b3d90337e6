"""note.names: completing note names for a person's shell, from the index in memory."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import anyio

from protocol.methods import names
from protocol.methods.names import NamesParams, NamesResult
from vaultd.api.handlers import CallContext, handles
from vaultd.api.read_methods import live_view
from vaultd.vault.completion import NameTable, build_table, complete

if TYPE_CHECKING:
    from vaultd.vault.index import VaultIndex

_tables: weakref.WeakKeyDictionary[VaultIndex, NameTable] = weakref.WeakKeyDictionary()


async def _table(index: VaultIndex) -> NameTable:
    """The index's name table, rebuilt (off the event loop) when the index changed since."""
    table = _tables.get(index)
    if table is None or table.generation != index.generation:
        generation, paths = index.generation, list(index.notes)  # a snapshot, taken on the loop
        table = await anyio.to_thread.run_sync(build_table, generation, paths)
        _tables[index] = table
    return table


@handles(names.NOTE_NAMES)
async def note_names(ctx: CallContext, params: NamesParams) -> NamesResult:
    live, view = await live_view(ctx, params.vault)
    table = await _table(live.index)
    found, truncated = complete(table, params.prefix, params.limit, view.hidden)
    return NamesResult(names=found, truncated=truncated)
