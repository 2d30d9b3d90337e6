"""vaultctl memory: an agent's memory entries (Claude Code's memory folders, or a Markdown list a
person names) listed, and each brought into the vault as a reviewed note."""

from __future__ import annotations

from typing import Annotated

import typer

from protocol.methods import memory
from protocol.methods.memory import MemoryCandidatesParams, MemoryCandidatesResult, MemoryImportParams
from protocol.schema import field_help as doc
from vaultctl import render
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, pick_vault, session
from vaultctl.commands.write_command import WriteFlags, write_command
from vaultctl.completion import Complete

PathOpt = Annotated[str | None, typer.Option("--from", metavar="PATH", help=doc(MemoryCandidatesParams, "path"))]

memory_app = typer.Typer(
    help="Agent memory entries brought into the vault as notes; alone, the entries not yet imported.", invoke_without_command=True
)


@memory_app.callback()
def memory_default(ctx: typer.Context, path: PathOpt = None, vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """List the memory entries no note records yet; the subcommands list and import them."""
    if ctx.invoked_subcommand is None:
        memory_candidates(path=path, vault=vault, as_json=as_json)


@memory_app.command("candidates")
def memory_candidates(
    path: PathOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=memory.MAX_CANDIDATES, help=doc(MemoryCandidatesParams, "limit"))] = 50,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List the memory entries no note of the vault records yet, each with its id for 'memory import'."""
    with session() as c:
        result = call(memory.MEMORY_CANDIDATES, MemoryCandidatesParams(vault=pick_vault(c, vault), path=path, limit=limit), client=c)

    def text(r: MemoryCandidatesResult) -> str:
        lines: list[str] = ["no new memory entries"]
        if r.entries:
            lines = [render.table(["id", "title", "from"], [(e.id, e.title, e.origin) for e in r.entries])]
        lines.append(f"{r.total} new, {r.imported} imported already")
        lines += [f"skipped {s}" for s in r.skipped]
        return "\n".join(lines)

    emit(result, as_json, text)


@memory_app.command("import")
@write_command(memory.MEMORY_IMPORT)
def memory_import(
    entry: Annotated[str, typer.Argument(metavar="ENTRY", help=doc(MemoryImportParams, "entry"))],
    path: PathOpt = None,
    folder: Annotated[str, typer.Option("--folder", help=doc(MemoryImportParams, "folder"))] = "",
    title: Annotated[str | None, typer.Option("--title", help=doc(MemoryImportParams, "title"))] = None,
    link_to: Annotated[
        str | None, typer.Option("--link-to", metavar="NOTE", help=doc(MemoryImportParams, "link_to")), Complete.NOTE
    ] = None,
    *,
    flags: WriteFlags[MemoryImportParams],
) -> None:
    """Import ENTRY as a note (or record it on --link-to NOTE): a preview first, then --confirm --fingerprint F."""
    words = ["memory", "import", entry]
    for flag, value in (("--from", path), ("--folder", folder or None), ("--title", title), ("--link-to", link_to)):
        if value is not None:
            words += [flag, value]
    flags.run(
        lambda steering: MemoryImportParams(entry=entry, path=path, folder=folder, title=title, link_to=link_to, **steering),
        *words,
    )
