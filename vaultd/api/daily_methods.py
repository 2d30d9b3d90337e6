"""daily.path, daily.read and template.list: a day's note found as the vault's Obsidian places it,
and the templates its template picker lists.

The settings are read on each call (a changed ``daily-notes.json`` or ``templates.json`` counts
at once); the writes, ``daily.append``, ``daily.prepend`` and ``template.insert``, are operations
(:mod:`vaultd.ops.daily_write`, :mod:`vaultd.ops.template_insert`).
"""

from __future__ import annotations

import datetime as dt

import anyio

from protocol.methods import daily, templates
from protocol.methods.daily import DailyParams, DailyPathResult, DailyReadParams, DailyReadResult, NotePeriod
from protocol.methods.reads import ReadParams
from protocol.methods.templates import MAX_TEMPLATES_LISTED, TemplateInfo, TemplateListParams, TemplateListResult
from vaultd.api.handlers import CallContext, handles
from vaultd.api.read_methods import live_view, log_path_of, note_bytes, read_result
from vaultd.errors import NotFound
from vaultd.obsidian.settings import read_settings
from vaultd.ops.daily_write import day_note, period_of, source_of


async def _day(ctx: CallContext, params: DailyParams, fresh: bool = False) -> tuple[str, str, bool, str | None, str]:
    """(path, day, exists, template, source) of the day ``params`` names, for this caller.

    Raises:
        InvalidParams: INVALID_PARAMS, the date names no day, or the vault keeps no notes of the period.
        ValidationFailed: VALIDATION (O02), the daily note format cannot be rendered.
        NotFound: NOT_FOUND, the day's note is private to the caller.
    """
    live, view = await live_view(ctx, params.vault, fresh)
    settings = await anyio.to_thread.run_sync(read_settings, live.root)
    period = params.period or NotePeriod.DAY
    day, path = day_note(settings, params.date, dt.datetime.now().astimezone().date(), period)
    if view.hidden(path):
        raise NotFound(f"the note of {day.isoformat()} is not one you may see")
    exists = path in live.index.notes or await anyio.to_thread.run_sync(lambda: (live.root / path).is_file())
    return path, day.isoformat(), exists, period_of(settings, period).template or None, source_of(settings, period)


@handles(daily.DAILY_PATH)
async def daily_path(ctx: CallContext, params: DailyParams) -> DailyPathResult:
    """Where the day's note is, whether it exists yet.

    Raises:
        InvalidParams: INVALID_PARAMS, the date names no day.
        ValidationFailed: VALIDATION (O02), the daily note format cannot be rendered.
        NotFound: NOT_FOUND, the day's note is private to the caller.
    """
    path, day, exists, template, source = await _day(ctx, params)
    return DailyPathResult(path=path, date=day, exists=exists, template=template, source=source)


@handles(daily.DAILY_READ)
async def daily_read(ctx: CallContext, params: DailyReadParams) -> DailyReadResult:
    """The day's note, as note.read gives a note; none before the day has one.

    Raises:
        InvalidParams: INVALID_PARAMS, the date names no day.
        ValidationFailed: VALIDATION (O02), the daily note format cannot be rendered.
        NotFound: NOT_FOUND, the day's note is private to the caller.
        LimitExceeded: LIMIT, the note is over the note bound.
    """
    path, day, exists, _, _ = await _day(ctx, params, params.fresh)
    if not exists:
        return DailyReadResult(path=path, date=day, note=None)
    live, _ = await live_view(ctx, params.vault)
    try:
        raw = await anyio.to_thread.run_sync(note_bytes, str(live.root), path, log_path_of(ctx, params.vault))
    except (FileNotFoundError, NotFound):
        return DailyReadResult(path=path, date=day, note=None)
    page = ReadParams(target=path, offset=params.offset, max_bytes=params.max_bytes)
    return DailyReadResult(path=path, date=day, note=read_result(path, raw, page, live.index.notes.get(path)))


@handles(templates.TEMPLATE_LIST)
async def template_list(ctx: CallContext, params: TemplateListParams) -> TemplateListResult:
    """The templates the caller may see, by name; none when the vault has no templates folder."""
    live, view = await live_view(ctx, params.vault)
    settings = await anyio.to_thread.run_sync(read_settings, live.root)
    folder = settings.templates.folder
    if not folder:
        return TemplateListResult(folder="", templates=[], truncated=False)
    prefix = folder + "/"
    paths = sorted(p for p in live.index.notes if p.startswith(prefix) and view.visible(p))
    found = [TemplateInfo(name=p[len(prefix) : -3], path=p, size=live.index.notes[p].size) for p in paths[:MAX_TEMPLATES_LISTED]]
    return TemplateListResult(folder=folder, templates=found, truncated=len(paths) > MAX_TEMPLATES_LISTED)
