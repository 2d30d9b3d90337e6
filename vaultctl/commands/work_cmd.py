"""work, work show|cancel: the work documents agents declared, and rolling one back.

``vaultctl work`` lists the running work of a vault (``--all``: closed ones too); ``work cancel
ID`` undoes the work's operations as one operation, leaving any note you edited since as it is.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import typer

from protocol.methods import work
from protocol.methods.work import WorkCancelParams, WorkListParams, WorkListResult, WorkRef
from protocol.schema import field_help as doc
from vaultctl import render
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, pick_vault, session
from vaultctl.commands.write_command import WriteFlags, write_command

work_app = typer.Typer(help="Work agents declared: list, cancel.", invoke_without_command=True)

IdArg = Annotated[str, typer.Argument(metavar="ID", help=doc(WorkRef, "id"))]


def _when(stamp: float) -> str:
    return dt.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M")


def _list_text(r: WorkListResult) -> str:
    if not r.work:
        return "no work running"
    rows = [(w.id, w.state, w.session or "-", _when(w.started), str(len(w.ops)), w.what, w.progress or "-") for w in r.work]
    table = render.table(["id", "state", "session", "started", "ops", "what", "progress"], rows)
    return render.compose([table, "roll one back with 'vaultctl work cancel ID'"])


@work_app.callback()
def work_list(
    ctx: typer.Context,
    vault: VaultOpt = None,
    show_all: Annotated[bool, typer.Option("--all", help=doc(WorkListParams, "all"))] = False,
    limit: Annotated[int, typer.Option(min=1, max=work.MAX_WORK, help=doc(WorkListParams, "limit"))] = 50,
    as_json: JsonOpt = False,
) -> None:
    """Work documents: the running ones unless --all."""
    if ctx.invoked_subcommand is not None:
        return
    with session() as c:
        result = call(work.WORK_LIST, WorkListParams(vault=pick_vault(c, vault), all=show_all, limit=limit), client=c)
    emit(result, as_json, _list_text)


@work_app.command("cancel")
@write_command(work.WORK_CANCEL)
def work_cancel(work_id: IdArg, *, flags: WriteFlags[WorkCancelParams]) -> None:
    """Undo the work's operations as one operation; a note changed since is left as it is, and named."""
    flags.run(lambda steering: WorkCancelParams(id=work_id, **steering))
