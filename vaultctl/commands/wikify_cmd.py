"""vaultctl wikify (suggest, propose, accept): links suggested where a note names other notes,
proposed as one proposal whose links you accept one by one."""

from __future__ import annotations

from typing import Annotated

import typer

from protocol.methods import wikify
from protocol.methods.wikify import (
    Suggestion,
    WikifyAcceptParams,
    WikifyAcceptResult,
    WikifyProposeParams,
    WikifyProposeResult,
    WikifySuggestParams,
    WikifySuggestResult,
)
from protocol.schema import field_help as doc
from vaultctl import render
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, pick_vault, session
from vaultctl.completion import Complete

app = typer.Typer(help="Links suggested where a note names other notes, accepted one by one: suggest, propose, accept.")

NoteArg = Annotated[str, typer.Argument(metavar="NOTE", help=doc(WikifySuggestParams, "target")), Complete.NOTE]


def _rows(links: list[Suggestion]) -> str:
    if not links:
        return "no links to suggest"
    return render.table(["#", "line", "mention", "link"], [(str(s.number), str(s.line), s.text, s.link) for s in links])


def _suggest_text(r: WikifySuggestResult) -> str:
    return render.compose([f"{r.path}:", _rows(r.suggestions)])


def _propose_text(r: WikifyProposeResult) -> str:
    if r.proposal is None:
        return "no links to suggest: nothing proposed"
    return render.compose(
        [
            _rows(r.links),
            f"proposal {r.proposal}: accept some with 'vaultctl wikify accept {r.proposal} N...', all with 'vaultctl proposals apply'",
        ]
    )


def _accept_text(r: WikifyAcceptResult) -> str:
    return f"linked {len(r.accepted)} mentions in {r.path} ({r.op_id}); proposal {r.proposal} applied"


@app.command("suggest")
def suggest(note: NoteArg, vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """List the links NOTE could have: the first mention of each other note's name or alias."""
    with session() as c:
        result = call(wikify.WIKIFY_SUGGEST, WikifySuggestParams(vault=pick_vault(c, vault), target=note), client=c)
    emit(result, as_json, _suggest_text)


@app.command("propose")
def propose(
    note: NoteArg,
    choose: Annotated[list[int] | None, typer.Option("--choose", metavar="N", help=doc(WikifyProposeParams, "choose"))] = None,
    reason: Annotated[str | None, typer.Option("--reason", help=doc(WikifyProposeParams, "reason"))] = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Make NOTE's suggested links (or the --choose ones) one proposal, accepted link by link."""
    with session() as c:
        params = WikifyProposeParams(vault=pick_vault(c, vault), target=note, choose=choose, reason=reason)
        result = call(wikify.WIKIFY_PROPOSE, params, client=c)
    emit(result, as_json, _propose_text)


@app.command("accept")
def accept(
    proposal_id: Annotated[str, typer.Argument(metavar="ID", help=doc(WikifyAcceptParams, "id")), Complete.PROPOSAL],
    links: Annotated[list[int], typer.Argument(metavar="N...", help=doc(WikifyAcceptParams, "links"))],
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write only links N... of a wikify proposal; the others are dropped with it."""
    with session() as c:
        result = call(wikify.WIKIFY_ACCEPT, WikifyAcceptParams(vault=pick_vault(c, vault), id=proposal_id, links=links), client=c)
    emit(result, as_json, _accept_text)
