"""vaultctl daily (path, read, append, prepend), templates and insert: the vault's daily notes and
templates as its Obsidian settings have them. ``vaultctl new --template/--unique`` is in writes.py."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from protocol.limits import DEFAULT_READ_PAGE_BYTES
from protocol.methods import daily, templates
from protocol.methods.daily import DailyParams, DailyPathResult, DailyReadParams, DailyWriteParams, NotePeriod
from protocol.methods.templates import TemplateInsertParams, TemplateListParams, TemplateListResult
from protocol.schema import field_help as doc
from vaultctl import render
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, pick_vault, session
from vaultctl.commands.write_command import WriteFlags, write_command
from vaultctl.completion import Complete

DateOpt = Annotated[str | None, typer.Option("--date", metavar="DAY", help=doc(DailyParams, "date") + " Default: today.")]
PeriodOpt = Annotated[
    NotePeriod,
    typer.Option(
        "--period",
        help=doc(DailyParams, "period") + " The note of the day, or (Periodic Notes) of the week, month, quarter or year holding it.",
    ),
]
UnderOpt = Annotated[str | None, typer.Option("--under", metavar="HEADING", help=doc(DailyWriteParams, "under"))]

daily_app = typer.Typer(
    help="Today's note (or another day's), where the vault's Obsidian keeps it; alone, where today's note is.",
    invoke_without_command=True,
)


def _path_text(r: DailyPathResult) -> str:
    state = "exists" if r.exists else "not created yet"
    return f"{r.path}  ({r.date}, {state})"


@daily_app.callback()
def daily_default(
    ctx: typer.Context, date: DateOpt = None, period: PeriodOpt = NotePeriod.DAY, vault: VaultOpt = None, as_json: JsonOpt = False
) -> None:
    """Where a day's note is; the subcommands read and write it."""
    if ctx.invoked_subcommand is None:
        daily_path(date=date, period=period, vault=vault, as_json=as_json)


@daily_app.command("path")
def daily_path(date: DateOpt = None, period: PeriodOpt = NotePeriod.DAY, vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """Where the day's note is (today unless --date; its week's, month's... with --period), and whether it exists."""
    with session() as c:
        result = call(daily.DAILY_PATH, DailyParams(vault=pick_vault(c, vault), date=date, period=period), client=c)
    emit(result, as_json, _path_text)


@daily_app.command("read")
def daily_read(
    date: DateOpt = None,
    period: PeriodOpt = NotePeriod.DAY,
    vault: VaultOpt = None,
    offset: Annotated[int, typer.Option(help=doc(DailyReadParams, "offset"))] = 0,
    max_bytes: Annotated[int, typer.Option("--max-bytes", help=doc(DailyReadParams, "max_bytes"))] = DEFAULT_READ_PAGE_BYTES,
    fresh: Annotated[bool, typer.Option("--fresh", help=doc(DailyReadParams, "fresh"))] = False,
    as_json: JsonOpt = False,
) -> None:
    """Print the day's note (today unless --date), a page at a time; exit 1 when the day has no note yet."""
    with session() as c:
        params = DailyReadParams(vault=pick_vault(c, vault), date=date, period=period, offset=offset, max_bytes=max_bytes, fresh=fresh)
        result = call(daily.DAILY_READ, params, client=c)
    note = result.note
    emit(result, as_json, lambda r: f"{r.path}\n\n{note.body.rstrip()}" if note else f"{r.date} has no note yet ({r.path})")
    if not as_json and note is not None and note.truncated and note.next_offset is not None:
        render.say(f"[bytes {note.offset}..{note.next_offset} of {note.size}; next page: --offset {note.next_offset}]", file=sys.stderr)
    if note is None:
        raise typer.Exit(1)


@daily_app.command("append")
@write_command(daily.DAILY_APPEND)
def daily_append(
    text: Annotated[str, typer.Argument(metavar="TEXT", help=doc(DailyWriteParams, "markdown"))],
    date: DateOpt = None,
    period: PeriodOpt = NotePeriod.DAY,
    under: UnderOpt = None,
    *,
    flags: WriteFlags[DailyWriteParams],
) -> None:
    """Add TEXT at the end of the day's note (or of --under's section), creating the note from its template first."""
    flags.run(lambda steering: DailyWriteParams(markdown=text, date=date, period=period, under=under, **steering))


@daily_app.command("prepend")
@write_command(daily.DAILY_PREPEND)
def daily_prepend(
    text: Annotated[str, typer.Argument(metavar="TEXT", help=doc(DailyWriteParams, "markdown"))],
    date: DateOpt = None,
    period: PeriodOpt = NotePeriod.DAY,
    under: UnderOpt = None,
    *,
    flags: WriteFlags[DailyWriteParams],
) -> None:
    """Add TEXT at the start of the day's note (or right under --under's heading), creating the note first."""
    flags.run(lambda steering: DailyWriteParams(markdown=text, date=date, period=period, under=under, **steering))


def list_templates(vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """List the templates in the vault's templates folder."""
    with session() as c:
        result = call(templates.TEMPLATE_LIST, TemplateListParams(vault=pick_vault(c, vault)), client=c)

    def text(r: TemplateListResult) -> str:
        if not r.folder:
            return "no templates folder is set in the vault's Obsidian (Settings > Templates)"
        if not r.templates:
            return f"no templates in {r.folder}"
        return render.table(["name", "path", "size"], [(t.name, t.path, t.size) for t in r.templates])

    emit(result, as_json, text)


@write_command(templates.TEMPLATE_INSERT)
def insert_template(
    target: Annotated[str, typer.Argument(metavar="NOTE", help=doc(TemplateInsertParams, "target")), Complete.NOTE],
    template: Annotated[str, typer.Argument(metavar="TEMPLATE", help=doc(TemplateInsertParams, "template"))],
    under: Annotated[str | None, typer.Option("--under", metavar="HEADING", help=doc(TemplateInsertParams, "under"))] = None,
    *,
    flags: WriteFlags[TemplateInsertParams],
) -> None:
    """Insert TEMPLATE, its variables rendered, at the end of NOTE (or of --under's section)."""
    flags.run(lambda steering: TemplateInsertParams(target=target, template=template, under=under, **steering))
