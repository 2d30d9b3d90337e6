"""vaultctl edition (list, publish, configure): journal volumes, folders of dated entries, gathered
into edition notes by you, by command or on the schedule you set."""

from __future__ import annotations

from typing import Annotated

import typer

from protocol.methods import editions
from protocol.methods.editions import (
    EditionConfigureParams,
    EditionConfigureResult,
    EditionListParams,
    EditionListResult,
    EditionPublishParams,
    Schedule,
)
from protocol.schema import field_help as doc
from vaultctl import render
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, pick_vault, session
from vaultctl.commands.write_command import WriteFlags, write_command

app = typer.Typer(
    help="Journal volumes (folders of dated entries) and their editions: list, publish, configure.", invoke_without_command=True
)


def _list_text(r: EditionListResult) -> str:
    if r.settings is None:
        return "no journal volumes: set them with 'vaultctl edition configure --folder FOLDER'"
    lines = [f"volumes under {r.settings.folder}/, editions in {r.settings.editions}/, schedule: {r.settings.schedule or 'by command'}"]
    if r.volumes:
        rows = [(v.volume, v.name, str(v.entries), v.latest or "-", "changed" if v.changed else "") for v in r.volumes]
        lines.append(render.table(["volume", "name", "entries", "latest edition", ""], rows))
    else:
        lines.append("no volume holds an entry yet")
    return render.compose(lines)


def _configure_text(r: EditionConfigureResult) -> str:
    if r.volumes is None:
        return f"vault {r.vault} keeps no journal volumes"
    settings = r.volumes
    when = settings.schedule or "by command"
    return f"vault {r.vault}: volumes under {settings.folder}/, editions in {settings.editions}/, schedule: {when}"


@app.callback()
def edition_default(ctx: typer.Context, vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """The vault's journal volumes; the subcommands publish and configure them."""
    if ctx.invoked_subcommand is None:
        list_volumes(vault=vault, as_json=as_json)


@app.command("list")
def list_volumes(vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """Each volume: its entries, its latest edition, and whether it changed since."""
    with session() as c:
        result = call(editions.EDITION_LIST, EditionListParams(vault=pick_vault(c, vault)), client=c)
    emit(result, as_json, _list_text)


@app.command("publish")
@write_command(editions.EDITION_PUBLISH)
def publish(
    volume: Annotated[str, typer.Argument(metavar="VOLUME", help=doc(EditionPublishParams, "volume"))],
    *,
    flags: WriteFlags[EditionPublishParams],
) -> None:
    """Gather VOLUME's entries into a new edition note; refused when nothing changed since the last."""
    flags.run(lambda steering: EditionPublishParams(volume=volume, **steering))


@app.command("configure")
def configure(
    folder: Annotated[str | None, typer.Option("--folder", help=doc(EditionConfigureParams, "folder"))] = None,
    editions_folder: Annotated[str | None, typer.Option("--editions", help=doc(EditionConfigureParams, "editions"))] = None,
    schedule: Annotated[Schedule | None, typer.Option("--schedule", help=doc(EditionConfigureParams, "schedule"))] = None,
    off: Annotated[bool, typer.Option("--off", help=doc(EditionConfigureParams, "off"))] = False,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Set where the vault keeps its journal volumes and editions, and when editions publish themselves."""
    with session() as c:
        params = EditionConfigureParams(vault=pick_vault(c, vault), folder=folder, editions=editions_folder, schedule=schedule, off=off)
        result = call(editions.EDITION_CONFIGURE, params, client=c)
    emit(result, as_json, _configure_text)
