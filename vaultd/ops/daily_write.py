"""daily.append and daily.prepend: text added to a day's note, the note created first when needed.

The day's note is where the vault's Obsidian puts it (:mod:`vaultd.obsidian.settings`: the
daily notes' folder and moment format, or the Periodic Notes plugin's), and a new one starts from
the configured template rendered for that day, as Obsidian's daily notes render it. Creating is
create-only: operations queue on the vault's writer, so of two callers the second plans on the
note the first made; an editor that saves the note between planning and applying makes the
engine refuse the create (CONFLICT, nothing written), and the operation is planned once more on
the note the editor made, to which it then adds its text. Nothing is ever overwritten.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Final

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.limits import MAX_APPEND_BYTES, over_bound
from protocol.methods import daily
from protocol.methods.daily import NotePeriod
from vaultd.errors import Conflict, InvalidParams, LimitExceeded, NotFound
from vaultd.obsidian.daily import DayError, add_text, daily_path, resolve_day
from vaultd.obsidian.moment import MomentError
from vaultd.obsidian.settings import PERIOD_NAMES, PERIODIC
from vaultd.obsidian.templates import TemplateContext
from vaultd.ops._runner import no_detail, run_operation
from vaultd.ops._stamps import stamp_updated
from vaultd.ops.catalog import applies_itself
from vaultd.ops.create import existing_twin, screen_new_path
from vaultd.ops.template_insert import find_template, rendered_template, template_failure
from vaultd.txn.plan import Change, Plan
from vaultd.vault.note import stem_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from protocol.methods.daily import DailyWriteParams
    from protocol.methods.receipts import NoDetail, WriteReceipt
    from vaultd.obsidian.settings import Period, VaultSettings
    from vaultd.ops._context import OpContext
    from vaultd.ops._runner import Approval, WriteCall

ATTEMPTS: Final = 3  #: plans of one call when an editor keeps creating or saving the note meanwhile


def settings_file(settings: VaultSettings, period: NotePeriod = NotePeriod.DAY) -> str:
    if period is NotePeriod.DAY and settings.daily_source != "periodic-notes":
        return ".obsidian/daily-notes.json"
    return PERIODIC


def source_of(settings: VaultSettings, period: NotePeriod) -> str:
    """Which settings place the period's notes: daily-notes, or periodic-notes."""
    return settings.daily_source if period is NotePeriod.DAY else "periodic-notes"


def period_of(settings: VaultSettings, period: NotePeriod) -> Period:
    """The settings of the period's notes.

    Raises:
        InvalidParams: INVALID_PARAMS, the vault's Obsidian keeps no notes of that period.
    """
    found = settings.period(period.value)
    if found is None:
        name = PERIOD_NAMES[period.value]
        raise InvalidParams(
            f"the vault keeps no {name} notes: turn them on in the Periodic Notes plugin ({PERIODIC}, {name}.enabled), "
            "with the plugin enabled"
        )
    return found


def day_note(settings: VaultSettings, spec: str | None, today: dt.date, period: NotePeriod = NotePeriod.DAY) -> tuple[dt.date, str]:
    """The day ``spec`` names and the vault path of its note (of the period holding it).

    Raises:
        InvalidParams: INVALID_PARAMS, ``spec`` names no day, or the vault keeps no notes of the period.
        ValidationFailed: VALIDATION (O02), the note format cannot be rendered.
    """
    conf = period_of(settings, period)
    try:
        day = resolve_day(spec, today, period.value)
    except DayError as exc:
        raise InvalidParams(str(exc)) from exc
    try:
        return day, daily_path(conf.folder, conf.format, day)
    except (MomentError, DayError) as exc:
        raise template_failure(settings_file(settings, period), exc) from exc


def first_text(ctx: OpContext, period: Period, day: dt.date, path: str, *, daily: bool = True) -> tuple[str, list[Issue]]:
    """What a new note of ``day`` starts as: its template rendered for the day, or nothing
    (``daily``: a daily note's template, which knows offsets, yesterday and tomorrow)."""
    if not period.template:
        return "", []
    try:
        source = find_template(ctx, period.template)
    except NotFound:
        # Obsidian creates the note anyway, empty, and says the template could not be read.
        message = f"the daily note template {period.template!r} is not in the vault; {path} was created empty"
        return "", [Issue(code=IssueCode.O02, severity=Severity.WARNING, path=path, message=message)]
    when = dt.datetime.combine(day, ctx.now.time())
    tc = TemplateContext(title=stem_of(path), when=when, date_format=period.format, time_format="HH:mm", daily=daily)
    return rendered_template(ctx, source, tc)


def plan_daily(ctx: OpContext, params: DailyWriteParams, *, at_start: bool) -> Plan:
    """Plan text added to a day's note, the note made from its template when absent.

    Raises:
        InvalidParams: INVALID_PARAMS, the day or the heading is unusable.
        LimitExceeded: LIMIT, the Markdown is over ``MAX_APPEND_BYTES``.
        ValidationFailed: VALIDATION, the note's path is refused; (O02) a format cannot be rendered.
    """
    if problem := over_bound("markdown", params.markdown, MAX_APPEND_BYTES):
        raise LimitExceeded(problem)
    settings = ctx.settings
    period = params.period or NotePeriod.DAY
    day, rel = day_note(settings, params.date, ctx.now.date(), period)
    path = screen_new_path(ctx, rel)
    existing = existing_twin(ctx, path)
    warnings: list[Issue] = []
    if existing is not None:
        path = existing
        raw: bytes | None
        raw, text = ctx.read_target(path)
    else:
        raw = None
        text, warnings = first_text(ctx, period_of(settings, period), day, path, daily=period is NotePeriod.DAY)
    try:
        changed = add_text(text, params.markdown, under=params.under, at_start=at_start)
    except DayError as exc:
        raise InvalidParams(str(exc)) from exc
    if raw is not None:
        changed = stamp_updated(ctx, path, changed)
    verb = "prepended to" if at_start else "appended to"
    return Plan(
        op=daily.DAILY_PREPEND.name if at_start else daily.DAILY_APPEND.name,
        changes=[Change(path=path, before=raw, after=changed.encode("utf-8"))],
        summary=f"{verb} {path}" + ("" if raw is not None else " (created)"),
        log_type="LEARN",
        warnings=warnings,
    )


def plan_append(ctx: OpContext, params: DailyWriteParams) -> Plan:
    return plan_daily(ctx, params, at_start=False)


def plan_prepend(ctx: OpContext, params: DailyWriteParams) -> Plan:
    return plan_daily(ctx, params, at_start=True)


async def run_daily(
    call: WriteCall, params: DailyWriteParams, approval: Approval | None, planner: Callable[[OpContext, DailyWriteParams], Plan]
) -> WriteReceipt[NoDetail]:
    """Run a daily write, planned again when an editor made or saved the note meanwhile.

    Raises:
        Conflict: CONFLICT, the note changed under every one of ``ATTEMPTS`` plans.
    """
    for attempt in range(ATTEMPTS):
        try:
            return await run_operation(call, params, planner, no_detail, approval=approval)
        except Conflict:
            if attempt == ATTEMPTS - 1 or approval is not None or params.expected_sha is not None:
                raise
    raise AssertionError("unreachable")


@applies_itself(daily.DAILY_APPEND)
async def apply_daily_append(call: WriteCall, params: DailyWriteParams, approval: Approval | None) -> WriteReceipt[NoDetail]:
    return await run_daily(call, params, approval, plan_append)


@applies_itself(daily.DAILY_PREPEND)
async def apply_daily_prepend(call: WriteCall, params: DailyWriteParams, approval: Approval | None) -> WriteReceipt[NoDetail]:
    return await run_daily(call, params, approval, plan_prepend)
