"""Daily notes: the note of a day, where the vault's Obsidian keeps it (``daily-notes.json``, or the
Periodic Notes plugin's daily notes), read and written by the day rather than by path; and the
plugin's weekly, monthly, quarterly and yearly notes the same way, by ``period``.

A day is ``YYYY-MM-DD``, ``today``, ``yesterday``, ``tomorrow``, or ``-N`` / ``+N`` days from
today, by the daemon's local clock (with a period: ``-N`` / ``+N`` weeks, months, quarters or
years). A period's note is the one whose name the period's format gives that day, as the plugin
names it. ``daily.append`` and ``daily.prepend`` create the day's note
from its template when it does not exist yet (created once, however many callers race, an editor
among them; the others add to the note it made), then add their text.
"""

from __future__ import annotations

import enum
from typing import Annotated

import msgspec

from protocol.limits import DEFAULT_READ_PAGE_BYTES, MAX_APPEND_BYTES, MAX_READ_PAGE_BYTES, describe
from protocol.methods.common import OptionalVault, Params, Result
from protocol.methods.reads import Fresh, ReadResult
from protocol.methods.receipts import NoDetail, WriteReceipt, receipt_type
from protocol.methods.spec import Effect, MethodSpec, Trait, spec
from protocol.methods.writes import EditParams

Day = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=32,
        description="YYYY-MM-DD, today, yesterday, tomorrow, or -N / +N days or periods from today.",
    ),
]
Heading = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=200,
        description="A heading such as '## Log' (or 'Log', an H2): into its section, added at the end if missing.",
    ),
]


class NotePeriod(enum.StrEnum):
    """Which periodic note: the day's (core Daily notes, or Periodic Notes), or Periodic Notes'
    note of the week, month, quarter or year holding the day."""

    DAY = "day"
    WEEK = "week"
    MONTH = "month"
    QUARTER = "quarter"
    YEAR = "year"


#: Said in two words: its values say the rest, and ``daily_append`` is in the MCP core toolset,
#: whose every token counts. None (left out) is the day's note.
PeriodOpt = Annotated[NotePeriod, msgspec.Meta(description="day, week, month, quarter or year.")]


class DailyParams(Params, kw_only=True):
    vault: OptionalVault = None
    date: Day | None = None
    period: PeriodOpt | None = None


class DailyPathResult(Result):
    path: str  #: the vault path of the day's note, whether or not it exists
    date: str  #: the day, YYYY-MM-DD
    exists: bool
    template: str | None  #: the template a new note of the day starts from
    source: str  #: the settings that place it: daily-notes, or periodic-notes


class DailyReadParams(DailyParams, kw_only=True):
    offset: Annotated[int, msgspec.Meta(ge=0, description="A UTF-8 byte offset into the body.")] = 0
    max_bytes: Annotated[
        int, msgspec.Meta(ge=1, le=MAX_READ_PAGE_BYTES, description="At most this many UTF-8 bytes of text in this page.")
    ] = DEFAULT_READ_PAGE_BYTES
    fresh: Fresh = False


class DailyReadResult(Result):
    path: str  #: the vault path of the day's note, whether or not it exists
    date: str  #: the day, YYYY-MM-DD
    note: ReadResult | None  #: the note as note.read gives it; None when the day has no note yet


class DailyWriteParams(EditParams, kw_only=True):
    date: Day | None = None
    period: PeriodOpt | None = None
    markdown: Annotated[
        str,
        msgspec.Meta(min_length=1, max_length=MAX_APPEND_BYTES, description=f"At most {describe(MAX_APPEND_BYTES)} as UTF-8."),
    ]
    under: Heading | None = None


def _daily_write(name: str, summary: str) -> MethodSpec[DailyWriteParams, WriteReceipt[NoDetail]]:
    return MethodSpec(name, DailyWriteParams, receipt_type(NoDetail), summary, Effect.WRITE, Trait.MCP)


DAILY_PATH = spec(
    "daily.path",
    DailyParams,
    DailyPathResult,
    "Where a day's note is (today unless a date is given), as the vault's Obsidian places it, and whether it exists.",
    Effect.READ,
    # Not an MCP tool: daily.read answers the path too (with note null before the day has one), and
    # every tool an agent's host lists costs its context.
)
DAILY_READ = spec(
    "daily.read",
    DailyReadParams,
    DailyReadResult,
    "Read a day's note (today unless a date is given); note is null when the day has none yet.",
    Effect.READ,
    Trait.MCP,
)
DAILY_APPEND = _daily_write(
    "daily.append",
    "Append Markdown to a day note or a heading's section, created from its template if new.",
)
DAILY_PREPEND = _daily_write(
    "daily.prepend",
    "Add Markdown at the start of a day's note (after its frontmatter), or right under a heading; created from its template if needed.",
)
SPECS = (DAILY_PATH, DAILY_READ, DAILY_APPEND, DAILY_PREPEND)
