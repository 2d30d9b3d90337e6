"""vault.properties and note.outline: Obsidian's typed properties and a note's outline, from the
index. Private notes are left out for the callers they are private to: their properties are not
named, counted or used to infer a type. ``property.rename`` is an operation (``vaultd.ops``)."""

from __future__ import annotations

import anyio

from protocol.methods import properties
from protocol.methods.properties import (
    OutlineBlock,
    OutlineHeading,
    OutlineParams,
    OutlineResult,
    PropertiesParams,
    PropertiesResult,
    PropertyInfo,
)
from vaultd.api.handlers import CallContext, handles
from vaultd.api.read_methods import live_view, log_path_of
from vaultd.obsidian.property_types import BUILT_IN, index_types, read_types
from vaultd.obsidian.tasks import task_table
from vaultd.vault.lookup import find_note


@handles(properties.VAULT_PROPERTIES)
async def vault_properties(ctx: CallContext, params: PropertiesParams) -> PropertiesResult:
    live, view = await live_view(ctx, params.vault, params.fresh)
    index = live.index
    log_path = log_path_of(ctx, params.vault)

    def answer() -> PropertiesResult:
        found = index_types(index, live.root, view.hidden if view.hides_anything else None)
        declared = read_types(live.root)
        rows = sorted(found.items(), key=lambda kv: kv[0])
        notes = words = characters = tasks = open_tasks = 0
        for path, record in index.notes.items():
            if path == log_path or view.hidden(path):
                continue
            notes += 1
            words += record.words
            characters += record.characters
            tasks += len(record.tasks)
            open_tasks += table.open.get(path, 0)
        return PropertiesResult(
            properties=[
                PropertyInfo(name=s.name, type=s.type, declared=key in BUILT_IN or key in declared, notes=s.notes) for key, s in rows
            ],
            notes=notes,
            words=words,
            characters=characters,
            tasks=tasks,
            open_tasks=open_tasks,
        )

    async with live.held_still():
        table = task_table(index)  # brought up to date here, on the loop; unchanged while held still
        return await anyio.to_thread.run_sync(answer)


@handles(properties.NOTE_OUTLINE)
async def outline(ctx: CallContext, params: OutlineParams) -> OutlineResult:
    live, view = await live_view(ctx, params.vault, params.fresh)
    path = find_note(live.index, params.target, view.hidden)
    record = live.index.notes[path]
    return OutlineResult(
        path=path,
        headings=[OutlineHeading(level=h.level, text=h.text, line=h.line) for h in record.headings],
        blocks=[OutlineBlock(id=b.id, line=b.line) for b in record.blocks],
        words=record.words,
        characters=record.characters,
        tasks=len(record.tasks),
    )
