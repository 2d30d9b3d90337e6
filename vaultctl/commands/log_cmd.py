"""vaultctl log tail, grep and append: the vault's own log of events (an operation's line is
appended by the operation itself)."""

from __future__ import annotations

from typing import Annotated

import typer

from protocol.methods import writes
from protocol.methods.writes import LogAppendParams, LogEvent, LogGrepParams, LogTailParams, LogType
from protocol.schema import field_help as doc
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, pick_vault, session

log_app = typer.Typer(help="Read and append the vault's log.", no_args_is_help=True)


@log_app.command("tail")
def log_tail(
    vault: VaultOpt = None,
    limit: Annotated[int, typer.Option(min=1, max=200, help=doc(LogTailParams, "limit"))] = 50,
    type_: Annotated[LogType | None, typer.Option("--type", help=doc(LogTailParams, "type"))] = None,
    as_json: JsonOpt = False,
) -> None:
    """The last events of the vault's log."""
    with session() as c:
        result = call(writes.LOG_TAIL, LogTailParams(vault=pick_vault(c, vault), limit=limit, type=type_), client=c)
    emit(result, as_json, lambda r: "\n".join(r.lines + [f"warning: {w}" for w in r.warnings]) or "the log is empty")


@log_app.command("grep")
def log_grep(
    pattern: Annotated[str, typer.Argument(help=doc(LogGrepParams, "pattern"))],
    vault: VaultOpt = None,
    limit: Annotated[int, typer.Option(min=1, max=200, help=doc(LogGrepParams, "limit"))] = 50,
    type_: Annotated[LogType | None, typer.Option("--type", help=doc(LogGrepParams, "type"))] = None,
    as_json: JsonOpt = False,
) -> None:
    """Log events matching a pattern (no groups or backreferences)."""
    with session() as c:
        result = call(writes.LOG_GREP, LogGrepParams(vault=pick_vault(c, vault), pattern=pattern, limit=limit, type=type_), client=c)
    emit(result, as_json, lambda r: "\n".join(r.lines + [f"warning: {w}" for w in r.warnings]) or "no match")


@log_app.command("append")
def log_append(
    type_: Annotated[LogType, typer.Argument(metavar="TYPE", help=doc(LogEvent, "type"))],
    source: Annotated[str, typer.Argument(help=doc(LogEvent, "source"))],
    note: Annotated[str, typer.Argument(help=doc(LogEvent, "note"))],
    project: Annotated[str, typer.Option(help=doc(LogEvent, "project"))] = "-",
    dest: Annotated[str | None, typer.Option(help=doc(LogEvent, "dest"))] = None,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Append one event to the vault's log."""
    with session() as c:
        event = LogEvent(type=type_, project=project, source=source, note=note, dest=dest)
        result = call(writes.LOG_APPEND, LogAppendParams(vault=pick_vault(c, vault), event=event), client=c)
    emit(result, as_json, lambda r: f"appended: {r.line}")
