"""sessions [ID]: what agent sessions did, from the daemon's records.

Without an id, the sessions most recently seen; with one, its record: what it read and wrote,
its operations (each undoable with ``vaultctl undo``), its proposals, its work and its prompts.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import typer

from protocol.methods import sessions
from protocol.methods.sessions import SessionListParams, SessionListResult, SessionRecord, SessionShowParams
from protocol.schema import field_help as doc
from vaultctl import render
from vaultctl.commands.common import JsonOpt, call, emit, session


def _when(stamp: float | None) -> str:
    return "-" if stamp is None else dt.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M")


def _list_text(r: SessionListResult) -> str:
    if not r.sessions:
        return "no agent sessions recorded"
    rows = [
        (
            s.id,
            s.client,
            _when(s.started),
            "open" if s.ended is None else _when(s.ended),
            str(s.ops),
            str(s.proposals),
            ", ".join(s.running_work) or "-",
            s.description or "-",
        )
        for s in r.sessions
    ]
    table = render.table(["id", "client", "started", "ended", "ops", "proposals", "running work", "description"], rows)
    return render.compose([table, "show one with 'vaultctl sessions ID'"])


def _show_text(r: SessionRecord) -> str:
    items = [
        ("client", r.client),
        ("description", r.description or None),
        ("started", _when(r.started)),
        ("last seen", _when(r.seen)),
        ("ended", _when(r.ended) if r.ended is not None else "open"),
        ("running work", ", ".join(r.running_work) or None),
        ("work", ", ".join(r.work) or None),
    ]
    parts: list[str] = [render.fields(f"session {r.id}", items)]
    if r.op_list:
        parts.append("operations (undo one with 'vaultctl undo OP_ID --vault VAULT'):")
        parts += [f"  {o.vault}  {o.id}  {o.op}" for o in r.op_list]
    if r.proposal_list:
        parts.append("proposals:")
        parts += [f"  {o.vault}  {o.id}  {o.op}" for o in r.proposal_list]
    if r.touched:
        parts.append("wrote: " + ", ".join(f"{n.vault}:{n.path}" for n in r.touched))
    if r.read:
        parts.append("read: " + ", ".join(f"{n.vault}:{n.path}" for n in r.read))
    if r.prompts:
        parts.append("prompts:")
        parts += [f"  {_when(p.at)}  {p.text}" for p in r.prompts]
    if r.dropped:
        parts.append(f"({r.dropped} older entries left out to keep the record bounded)")
    return render.compose(parts)


def sessions_cmd(
    session_id: Annotated[str | None, typer.Argument(metavar="[ID]", help=doc(SessionShowParams, "id"))] = None,
    open_only: Annotated[bool, typer.Option("--open", help=doc(SessionListParams, "open"))] = False,
    limit: Annotated[int, typer.Option(min=1, max=sessions.MAX_SESSIONS, help=doc(SessionListParams, "limit"))] = 20,
    as_json: JsonOpt = False,
) -> None:
    """Agent sessions, most recently seen first; with an ID, what that session read, wrote and proposed."""
    with session() as c:
        if session_id is None:
            listed = call(sessions.SESSION_LIST, SessionListParams(open=open_only, limit=limit), client=c)
            emit(listed, as_json, _list_text)
            return
        shown = call(sessions.SESSION_SHOW, SessionShowParams(id=session_id), client=c)
    emit(shown, as_json, _show_text)
