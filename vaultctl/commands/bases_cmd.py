"""base query, bases: Obsidian Bases run without the app.

``base query FILE`` runs a view of a Base: FILE is a vault-relative ``.base`` file or a note
holding ```` ```base ```` blocks (``--block N``), a file on disk (a path inside a registered vault
is read by the daemon; one outside every vault is sent as inline YAML), or ``-`` for YAML on
standard input, evaluated over the vault given by --vault.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from protocol.errors import ExitStatus
from protocol.methods import bases, vaults
from protocol.methods.bases import BaseListParams, BaseListResult, BaseQueryParams, BaseQueryResult, RowFormat
from protocol.methods.common import Empty
from protocol.schema import field_help as doc
from vaultctl import render, vault_choice
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, fail, pick_vault, session

if TYPE_CHECKING:
    from vaultctl.client import Client

base_app = typer.Typer(help="Run Obsidian Bases: a view's rows, groups and summaries.", no_args_is_help=True)

FreshOpt = Annotated[bool, typer.Option("--fresh", help=doc(BaseQueryParams, "fresh"))]


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _query_text(r: BaseQueryResult) -> str:
    if r.text is not None:
        return r.text.rstrip("\n")
    headers = ["path"] + (["group"] if r.groups is not None else []) + [c.name for c in r.columns]
    rows = [
        [row.path] + ([_cell(row.group)] if r.groups is not None else []) + [_cell(row.values.get(c.id)) for c in r.columns]
        for row in r.rows
    ]
    parts: list[str] = [render.table(headers, rows)]
    names = {c.id: c.name for c in r.columns}
    if r.summaries:
        parts.append("summaries: " + "; ".join(f"{names.get(k, k)} {_cell(v)}" for k, v in r.summaries.items()))
    tail = f"{len(r.rows)} of {r.returned} rows ({r.total} matched)"
    if r.next_cursor is not None:
        tail += f"; next page: --cursor {r.next_cursor}"
    return render.compose([f"{r.view} ({r.type})", *parts]) + "\n\n" + tail


def _located(client: Client, file: str, vault: str | None) -> tuple[str | None, str | None, str | None]:
    """(vault, path, yaml) for FILE as the command line gave it."""
    if file == "-":
        return vault, None, sys.stdin.read()
    on_disk = Path(file)
    if on_disk.is_file():
        real = os.path.realpath(on_disk)
        found = vault_choice.holding(call(vaults.VAULT_LIST, Empty(), client=client).vaults, os.path.dirname(real))
        if found is not None:
            if vault is not None and vault != found[0]:
                fail(f"{file} is in vault {found[0]!r}, not {vault!r}", ExitStatus.USAGE)
            return found[0], f"{found[1]}/{on_disk.name}".lstrip("/"), None
        if on_disk.suffix.lower() != ".base":
            fail(f"{file} is outside every vault: give a .base file, or its YAML on standard input", ExitStatus.USAGE)
        return vault, None, on_disk.read_text(encoding="utf-8")
    return vault, file, None


@base_app.command("query")
def query(
    file: Annotated[
        str, typer.Argument(metavar="FILE", help="A .base file, a note holding ```base blocks, or - for YAML on standard input.")
    ],
    view: Annotated[str | None, typer.Option("--view", help=doc(BaseQueryParams, "view"))] = None,
    block: Annotated[int | None, typer.Option("--block", help=doc(BaseQueryParams, "block"))] = None,
    form: Annotated[RowFormat, typer.Option("--format", help=doc(BaseQueryParams, "format"))] = RowFormat.JSON,
    limit: Annotated[int, typer.Option(help=doc(BaseQueryParams, "limit"))] = 200,
    cursor: Annotated[str | None, typer.Option("--cursor", help=doc(BaseQueryParams, "cursor"))] = None,
    vault: VaultOpt = None,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Run a view of a Base: its rows, columns, groups and summaries, as Obsidian shows them."""
    with session() as c:
        chosen, path, text = _located(c, file, vault)
        params = BaseQueryParams(
            path=path,
            yaml=text,
            block=block,
            view=view,
            format=form,
            limit=limit,
            cursor=cursor,
            vault=pick_vault(c, chosen),
            fresh=fresh,
        )
        result = call(bases.QUERY, params, client=c)
    if form is not RowFormat.JSON and not as_json and result.text is not None:
        sys.stdout.write(result.text)
        return
    emit(result, as_json, _query_text)


def _list_text(r: BaseListResult) -> str:
    if not r.bases:
        return "no .base files"
    rows = [(b.path, ", ".join(f"{v.name} ({v.type})" for v in b.views) or "-", b.error or "") for b in r.bases]
    return render.table(["path", "views", "problem"], rows)


def list_bases(
    vault: VaultOpt = None,
    fresh: Annotated[bool, typer.Option("--fresh", help=doc(BaseListParams, "fresh"))] = False,
    as_json: JsonOpt = False,
) -> None:
    """List the vault's .base files and their views."""
    with session() as c:
        result = call(bases.LIST, BaseListParams(vault=pick_vault(c, vault), fresh=fresh), client=c)
    emit(result, as_json, _list_text)
