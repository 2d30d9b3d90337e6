"""vaultctl checkout (make, list, show, return, cancel): notes copied out of the vault to edit with
any tool, and returned as one proposal you apply with 'vaultctl proposals apply'."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import typer

from protocol.methods import checkouts
from protocol.methods.checkouts import (
    DEFAULT_CANDIDATES,
    CheckoutInfo,
    CheckoutListParams,
    CheckoutListResult,
    CheckoutMakeParams,
    CheckoutRef,
    CheckoutReturnParams,
    CheckoutReturnResult,
    CheckoutSummary,
)
from protocol.schema import field_help as doc
from vaultctl import render
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, pick_vault, session

app = typer.Typer(
    help="Notes copied out of the vault to edit with any tool, returned as one proposal: make, list, show, return, cancel.",
    invoke_without_command=True,
)

IdArg = Annotated[str, typer.Argument(metavar="ID", help=doc(CheckoutRef, "id"))]


def _when(stamp: float) -> str:
    return dt.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M")


def _info_text(r: CheckoutInfo) -> str:
    lines = [f"checkout {r.id} ({r.state}): {r.name}", f"folder: {r.folder}"]
    rows = [(n.path, "edited" if n.edited else "", n.copy) for n in r.notes]
    lines.append(render.table(["note", "", "copy"], rows))
    if r.proposal:
        lines.append(f"proposal {r.proposal}: review it with 'vaultctl proposals show {r.proposal}'")
    return render.compose(lines)


def _list_text(r: CheckoutListResult) -> str:
    if not r.checkouts:
        return "no checkouts"
    rows = [(c.id, _when(c.created), c.state, str(c.notes), c.name, c.proposal or "") for c in r.checkouts]
    return render.compose([render.table(["id", "made", "state", "notes", "name", "proposal"], rows), f"{r.open} open"])


def _summary_text(r: CheckoutSummary) -> str:
    return f"checkout {r.id} is {r.state}"


def _return_text(r: CheckoutReturnResult) -> str:
    lines = []
    if r.proposal:
        lines.append(f"proposal {r.proposal}: {len(r.returned)} notes; apply it with 'vaultctl proposals apply {r.proposal}'")
    else:
        lines.append("no copy was edited: nothing to propose")
    lines += [f"left out (gone from the vault): {p}" for p in r.skipped]
    lines += [f"overlap in {o.path} line {o.line}: your text is kept" for o in r.overlaps]
    return render.compose(lines)


@app.callback()
def checkout_default(ctx: typer.Context, vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """The open checkouts; the subcommands make and return them."""
    if ctx.invoked_subcommand is None:
        list_checkouts(vault=vault, show_all=False, as_json=as_json)


@app.command("make")
def make(
    notes: Annotated[list[str] | None, typer.Argument(metavar="NOTE...", help=doc(CheckoutMakeParams, "notes"))] = None,
    query: Annotated[str | None, typer.Option("--query", "-q", help=doc(CheckoutMakeParams, "query"))] = None,
    limit: Annotated[int, typer.Option("--limit", help=doc(CheckoutMakeParams, "limit"))] = DEFAULT_CANDIDATES,
    name: Annotated[str | None, typer.Option("--name", help=doc(CheckoutMakeParams, "name"))] = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Copy NOTEs (and the best notes --query finds, with their link neighbours) to a scratch folder."""
    with session() as c:
        params = CheckoutMakeParams(vault=pick_vault(c, vault), notes=notes or [], query=query, limit=limit, name=name)
        result = call(checkouts.CHECKOUT_MAKE, params, client=c)
    emit(result, as_json, _info_text)


@app.command("list")
def list_checkouts(
    vault: VaultOpt = None,
    show_all: Annotated[bool, typer.Option("--all", help=doc(CheckoutListParams, "all"))] = False,
    as_json: JsonOpt = False,
) -> None:
    """The vault's checkouts, newest first (open ones unless --all)."""
    with session() as c:
        result = call(checkouts.CHECKOUT_LIST, CheckoutListParams(vault=pick_vault(c, vault), all=show_all), client=c)
    emit(result, as_json, _list_text)


@app.command("show")
def show(checkout_id: IdArg, vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """One checkout: its folder, its copies, which are edited, its proposal."""
    with session() as c:
        result = call(checkouts.CHECKOUT_SHOW, CheckoutRef(vault=pick_vault(c, vault), id=checkout_id), client=c)
    emit(result, as_json, _info_text)


@app.command("return")
def return_checkout(
    checkout_id: IdArg,
    reason: Annotated[str | None, typer.Option("--reason", help=doc(CheckoutReturnParams, "reason"))] = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Return the checkout: its edited copies become one proposal, merged with the notes as they are."""
    with session() as c:
        params = CheckoutReturnParams(vault=pick_vault(c, vault), id=checkout_id, reason=reason)
        result = call(checkouts.CHECKOUT_RETURN, params, client=c)
    emit(result, as_json, _return_text)


@app.command("cancel")
def cancel(checkout_id: IdArg, vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """Cancel an open checkout; its copies are discarded and nothing is proposed."""
    with session() as c:
        result = call(checkouts.CHECKOUT_CANCEL, CheckoutRef(vault=pick_vault(c, vault), id=checkout_id), client=c)
    emit(result, as_json, _summary_text)
