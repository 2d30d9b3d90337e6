"""proposals: what agents proposed and wait for you, shown as diffs, applied or rejected by you.

``vaultctl proposals`` lists the pending ones; ``show ID`` prints each file's unified diff (in
colour on a terminal); ``apply ID`` applies it as an ordinary journaled, undoable operation, or
says it is stale when a note changed since; ``reject ID --note`` turns it down.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Annotated

import typer

from protocol.methods import proposals
from protocol.methods.proposals import (
    ProposalDetail,
    ProposalListParams,
    ProposalListResult,
    ProposalRef,
    ProposalRejectParams,
    ProposalState,
    ProposalSummary,
)
from protocol.schema import field_help as doc
from vaultctl import display, render
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, pick_vault, session
from vaultctl.commands.receipts import receipt_text
from vaultctl.completion import Complete
from vaultctl.terminal import Escaped, escape

app = typer.Typer(help="Agent changes waiting for you: list, show, apply, reject.", invoke_without_command=True)

IdArg = Annotated[str, typer.Argument(metavar="ID", help=doc(ProposalRef, "id")), Complete.PROPOSAL]

_COLOURS = {"+": display.Paint.ADDED, "-": display.Paint.REMOVED, "@": display.Paint.HUNK}


def _age(created: float) -> str:
    seconds = max(0, int(time.time() - created))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _targets(p: ProposalSummary) -> str:
    shown = ", ".join(p.targets[:3])
    return shown + (f" +{len(p.targets) - 3}" if len(p.targets) > 3 else "")


def _list_text(r: ProposalListResult) -> str:
    lines: list[str] = []
    if r.proposals:
        rows = [(p.id, _age(p.created), p.proposer, p.op, _targets(p), p.state) for p in r.proposals]
        lines.append(render.table(["id", "age", "proposer", "operation", "targets", "state"], rows))
    else:
        lines.append("no proposals" if r.pending == 0 else "no proposals match")
    lines.append(f"{r.pending} pending" + ("; review one with 'vaultctl proposals show ID'" if r.pending else ""))
    for bad in r.refused:
        lines.append(f"refused {bad.name}: {bad.reason}")
    return render.compose(lines)


def _diff_text(diff: str, colour: bool) -> Escaped:
    out = []
    for line in diff.splitlines():
        shown = escape(line)
        code = _COLOURS.get(line[:1]) if not line.startswith(("+++", "---")) else None
        out.append(display.paint(shown, code, colour) if code else shown)
    return Escaped("\n".join(out))


def _when(stamp: float | None) -> str:
    return "-" if stamp is None else dt.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M:%S")


def _show_text(p: ProposalDetail) -> str:
    colour = display.colour()
    items = [
        ("operation", p.op),
        ("summary", p.summary),
        ("state", p.state),
        ("proposer", p.proposer + (f" (session {p.session})" if p.session else "")),
        ("reason", p.reason),
        ("proposed", _when(p.created)),
    ]
    if p.decided is not None:
        items += [("decided", _when(p.decided)), ("decided by", p.decided_by), ("note", p.note), ("applied op", p.applied_op)]
    parts: list[str] = [render.fields(f"proposal {p.id}", items)]
    for w in p.warnings:
        parts.append(f"warning {w.code}{' ' + w.path if w.path else ''}: {w.message}")
    for d in p.diffs:
        parts.append(f"\n{d.action} {d.path}" + (" (diff cut short)" if d.truncated else ""))
        parts.append(_diff_text(d.diff, colour) if d.diff else "(not text; sha " + (d.after_sha or "-")[:12] + ")")
    if p.state is ProposalState.PENDING:
        parts.append(f"\napply it with: vaultctl proposals apply {p.id}\nreject it with: vaultctl proposals reject {p.id} --note '...'")
    return render.compose(parts)


@app.callback()
def proposals_list(
    ctx: typer.Context,
    vault: VaultOpt = None,
    state: Annotated[ProposalState | None, typer.Option("--state", help=doc(ProposalListParams, "state"))] = None,
    show_all: Annotated[bool, typer.Option("--all", help=doc(ProposalListParams, "all"))] = False,
    limit: Annotated[int, typer.Option(min=1, max=proposals.MAX_PROPOSALS, help=doc(ProposalListParams, "limit"))] = 50,
    as_json: JsonOpt = False,
) -> None:
    """List proposals agents made: pending ones unless --state or --all says otherwise."""
    if ctx.invoked_subcommand is not None:
        return
    with session() as c:
        params = ProposalListParams(vault=pick_vault(c, vault), state=state or ProposalState.PENDING, all=show_all, limit=limit)
        result = call(proposals.PROPOSAL_LIST, params, client=c)
    emit(result, as_json, _list_text)


@app.command("show")
def proposals_show(proposal_id: IdArg, vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """One proposal: who proposed what and why, and a unified diff of each file."""
    with session() as c:
        result = call(proposals.PROPOSAL_SHOW, ProposalRef(vault=pick_vault(c, vault), id=proposal_id), client=c)
    emit(result, as_json, _show_text)


@app.command("apply")
def proposals_apply(proposal_id: IdArg, vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """Apply a pending proposal as one undoable operation (stale, and nothing written, if a note changed since)."""
    with session() as c:
        result = call(proposals.PROPOSAL_APPLY, ProposalRef(vault=pick_vault(c, vault), id=proposal_id), client=c)
    emit(result, as_json, lambda r: receipt_text(r))


@app.command("reject")
def proposals_reject(
    proposal_id: IdArg,
    note: Annotated[str, typer.Option("--note", help=doc(ProposalRejectParams, "note"))],
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Reject a pending proposal, with a note the agent can read."""
    with session() as c:
        params = ProposalRejectParams(vault=pick_vault(c, vault), id=proposal_id, note=note)
        result = call(proposals.PROPOSAL_REJECT, params, client=c)
    emit(result, as_json, lambda r: f"rejected proposal {r.id} ({r.op} by {r.proposer})")
