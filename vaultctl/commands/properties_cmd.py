"""properties, property rename, outline: Obsidian's typed properties and a note's outline."""

from __future__ import annotations

from typing import Annotated

import typer

from protocol.methods import properties
from protocol.methods.properties import OutlineParams, OutlineResult, PropertiesParams, PropertiesResult, PropertyRenameParams
from protocol.schema import field_help as doc
from vaultctl import render
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, pick_vault, session
from vaultctl.commands.write_command import WriteFlags, write_command
from vaultctl.completion import Complete

FreshOpt = Annotated[bool, typer.Option("--fresh", help=doc(PropertiesParams, "fresh"))]

property_app = typer.Typer(help="Change a frontmatter property across the vault.", no_args_is_help=True)


def _properties_text(r: PropertiesResult) -> str:
    rows = [(p.name, p.type.value + ("" if p.declared else " (inferred)"), p.notes) for p in r.properties]
    totals = f"{r.notes} notes, {r.words} words, {r.characters} characters, {r.tasks} tasks ({r.open_tasks} open)"
    if not rows:
        return f"no properties\n\n{totals}"
    return render.compose([render.table(["property", "type", "notes"], rows), totals])


def properties_list(vault: VaultOpt = None, fresh: FreshOpt = False, as_json: JsonOpt = False) -> None:
    """Every frontmatter property with its type (from .obsidian/types.json, else inferred) and how many notes have it."""
    with session() as c:
        result = call(properties.VAULT_PROPERTIES, PropertiesParams(vault=pick_vault(c, vault), fresh=fresh), client=c)
    emit(result, as_json, _properties_text)


@property_app.command("rename")
@write_command(properties.PROPERTY_RENAME)
def property_rename(
    old: Annotated[str, typer.Argument(metavar="OLD", help=doc(PropertyRenameParams, "old"))],
    new: Annotated[str, typer.Argument(metavar="NEW", help=doc(PropertyRenameParams, "new"))],
    *,
    flags: WriteFlags[PropertyRenameParams],
) -> None:
    """Rename property OLD to NEW in every note that has it (try --dry-run first); undo with 'vaultctl undo'."""
    flags.run(lambda steering: PropertyRenameParams(old=old, new=new, **steering))


def _outline_text(r: OutlineResult) -> str:
    lines = [f"{'  ' * (h.level - 1)}{'#' * h.level} {h.text}  (line {h.line})" for h in r.headings]
    lines += [f"^{b.id}  (line {b.line})" for b in r.blocks]
    counts = f"{r.words} words, {r.characters} characters, {r.tasks} tasks"
    return render.compose([r.path, "\n".join(lines) or "no headings", counts])


def outline(
    target: Annotated[str, typer.Argument(metavar="NOTE", help=doc(OutlineParams, "target")), Complete.NOTE],
    vault: VaultOpt = None,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """A note's headings with their lines, its block ids, and its word and character counts."""
    with session() as c:
        result = call(properties.NOTE_OUTLINE, OutlineParams(target=target, vault=pick_vault(c, vault), fresh=fresh), client=c)
    emit(result, as_json, _outline_text)
