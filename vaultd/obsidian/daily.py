"""Daily notes as Obsidian's Daily notes (or Periodic Notes) plugin keeps them: which day a
caller means, where that day's note is, and where text goes in it.

A day is named as a person would ask for it: an ISO date, ``today``, ``yesterday``,
``tomorrow``, or a number of days from today (``-1``, ``+2``). The note's path is the configured
folder and the day written in the configured moment format, ``.md`` added, exactly where the
person's Obsidian would open it (a format with ``/`` in it makes folders, as in Obsidian).

Periodic Notes' weekly, monthly, quarterly and yearly notes are found the same way: the note of
a week is the one its format names for any day of that week (``gggg-[W]ww`` gives one name to all
seven), as the plugin names it, and ``-N`` / ``+N`` count weeks (months, quarters, years) there.

Text is added at the end of the note or at its start (after the frontmatter), or under a heading
(``## Log``): at the end of that heading's section, or right after the heading line; a heading the
note does not have is added at the end, so the entry lands where a person would look for it.
Entries go on the line after the last one, with no blank line between, so a log of list items
stays one list.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from typing import Final

from vaultd.obsidian.moment import format_date
from vaultd.vault import frontmatter, markdown

__all__ = ["PERIOD_MONTHS", "DayError", "add_text", "daily_path", "parse_heading", "resolve_day"]

MAX_DAYS_AWAY: Final = 36600  #: a relative day further than about a hundred years is a mistake
_RELATIVE: Final = re.compile(r"[+-]\d{1,6}")
_HEADING: Final = re.compile(r"(#{1,6})[ \t]+(\S.*?)[ \t]*#*[ \t]*")
#: The months one step of a period spans, for the periods counted in months.
PERIOD_MONTHS: Final = {"month": 1, "quarter": 3, "year": 12}


class DayError(ValueError):
    """A day, a heading or a format a daily note cannot be found by."""


def _shift(today: dt.date, steps: int, period: str) -> dt.date:
    """``today`` moved by ``steps`` periods; a month step keeps the day of the month, or takes
    the month's last day when it has fewer (31 January + 1 month: 29 February)."""
    if period == "week":
        return today + dt.timedelta(weeks=steps)
    months = PERIOD_MONTHS.get(period)
    if months is None:
        return today + dt.timedelta(days=steps)
    year, month = divmod(today.year * 12 + today.month - 1 + steps * months, 12)
    if not dt.MINYEAR <= year <= dt.MAXYEAR:
        raise ValueError("out of the calendar")
    return dt.date(year, month + 1, min(today.day, calendar.monthrange(year, month + 1)[1]))


def resolve_day(spec: str | None, today: dt.date, period: str = "day") -> dt.date:
    """The day ``spec`` names, ``today`` being the caller's local date; with a ``period`` (week,
    month, quarter, year), ``-N`` / ``+N`` count periods instead of days.

    Raises:
        DayError: ``spec`` is none of the forms, names no date, or is more than
            ``MAX_DAYS_AWAY`` days away.
    """
    word = (spec or "today").strip().lower()
    shifts = {"today": 0, "yesterday": -1, "tomorrow": 1}
    if word in shifts:
        days = shifts[word]
    elif _RELATIVE.fullmatch(word):
        days = int(word)
        if period != "day":
            try:
                moved = _shift(today, days, period)
            except (OverflowError, ValueError) as exc:
                raise DayError(f"{spec!r} leaves the calendar") from exc
            if abs((moved - today).days) > MAX_DAYS_AWAY:
                raise DayError(f"{spec!r} is more than {MAX_DAYS_AWAY} days away")
            return moved
        if abs(days) > MAX_DAYS_AWAY:
            raise DayError(f"{spec!r} is more than {MAX_DAYS_AWAY} days away")
    else:
        try:
            return dt.date.fromisoformat(word)
        except ValueError as exc:
            raise DayError(f"{spec!r} is not a day: give YYYY-MM-DD, today, yesterday, tomorrow, or -N / +N days") from exc
    try:
        return today + dt.timedelta(days=days)
    except OverflowError as exc:
        raise DayError(f"{spec!r} leaves the calendar") from exc


def daily_path(folder: str, fmt: str, day: dt.date) -> str:
    """The vault path of ``day``'s note: ``folder/<day in fmt>.md``.

    Raises:
        DayError: the format gives an empty name.
        UnsupportedToken: the format uses a moment token vaultd does not support.
    """
    name = format_date(day, fmt).strip().strip("/")
    if not name:
        raise DayError(f"the daily note format {fmt!r} gives an empty name")
    rel = f"{folder.strip('/')}/{name}" if folder.strip("/") else name
    return rel + ".md"


def parse_heading(under: str) -> tuple[int, str]:
    """(level, text) of a heading given as ``## Log`` (or ``Log``, an H2).

    Raises:
        DayError: the heading is more than one line, or has no text.
    """
    line = under.strip()
    if "\n" in line or "\r" in line:
        raise DayError("the heading is one line: '## Log', or 'Log' for an H2")
    if match := _HEADING.fullmatch(line):
        return len(match.group(1)), match.group(2)
    if not line or line.startswith("#"):
        raise DayError(f"{under!r} is not a heading: write it as '## Log'")
    return 2, line


def _nl(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def add_text(text: str, addition: str, *, under: str | None, at_start: bool) -> str:
    """``text`` with ``addition`` at its end (or start), or in the section ``under`` names, in the
    note's own newlines; every other byte kept.

    Raises:
        DayError: ``under`` is not a heading, or the note has that heading more than once.
    """
    nl = _nl(text)
    block = addition.replace("\r\n", "\n").strip("\n").replace("\n", nl)
    body = frontmatter.parse(text).body_offset
    if under is None:
        if at_start:
            return text[:body] + block + nl + text[body:]
        base = text.rstrip("\r\n")
        return (base + nl if base.strip() else base) + block + nl
    level, name = parse_heading(under)
    spans = markdown.section_spans(text, body, name, level)
    if len(spans) > 1:
        raise DayError(f"the note has {len(spans)} headings {'#' * level} {name}; say which by editing one")
    if not spans:
        base = text.rstrip("\r\n")
        return (base + nl + nl if base.strip() else base) + f"{'#' * level} {name}{nl}{nl}{block}{nl}"
    start, end = spans[0]
    line_end = text.find("\n", start)
    line_end = end if line_end < 0 or line_end >= end else line_end + 1
    heading, section, tail = text[start:line_end].rstrip("\r\n"), text[line_end:end], text[end:]
    content = section.strip("\r\n")
    if at_start:
        content = block + (nl + content if content else "")
    else:
        content = (content + nl if content else "") + block
    return text[:start] + heading + nl + nl + content + nl + (nl if tail else "") + tail
