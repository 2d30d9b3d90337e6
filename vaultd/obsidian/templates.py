"""Templates as Obsidian's core Templates and Daily notes plugins render them.

The variables are the core plugin's: ``{{title}}`` (the note's name), ``{{date}}`` and ``{{time}}``
(in the formats of ``templates.json``, or the daily note's format for a daily note), and
``{{date:FORMAT}}`` / ``{{time:FORMAT}}`` with a moment.js format of their own. A daily note's
template also knows what Obsidian's daily notes add: an offset (``{{date+1d:YYYY-MM-DD}}``,
units ``y q M w d h m s``) and ``{{yesterday}}`` / ``{{tomorrow}}``; every date there is the note's
day at the time of rendering. Any other ``{{...}}`` stays as written, as in Obsidian.

Templater's syntax (``<% ... %>``) is a community plugin's program, not text vaultd can run: a
template holding it is inserted as written, and the caller is warned. Embeds (``![[...]]``) are
copied as written too, as Obsidian copies them: a template is never expanded into another, so
no template can loop through itself.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass
from typing import Final

from vaultd.obsidian.moment import format_date

__all__ = ["Rendered", "TemplateContext", "has_templater", "render", "template_note_path"]

_VARIABLE: Final = re.compile(
    r"\{\{\s*(title|date|time|yesterday|tomorrow)\s*(?:([+-]\d{1,6})([yqMwdhms]))?\s*(?::(.+?))?\s*\}\}", re.IGNORECASE
)
_TEMPLATER: Final = re.compile(r"<%[\s\S]*?%>")


@dataclass(frozen=True, slots=True)
class TemplateContext:
    """What a template's variables stand for in one rendering."""

    title: str
    when: dt.datetime  #: the moment ``{{date}}`` and ``{{time}}`` name
    date_format: str = "YYYY-MM-DD"
    time_format: str = "HH:mm"
    daily: bool = False  #: a daily note's template: offsets, yesterday and tomorrow too


@dataclass(frozen=True, slots=True)
class Rendered:
    text: str
    templater: bool  #: it holds Templater syntax, inserted as written


def has_templater(text: str) -> bool:
    """Whether ``text`` holds Templater's ``<% ... %>`` commands."""
    return _TEMPLATER.search(text) is not None


def _shift(when: dt.datetime, amount: int, unit: str) -> dt.datetime:
    """``when`` moved as moment's ``add`` moves it (a month's end clamps, as moment's does)."""
    if unit in ("y", "Y", "q", "Q", "M"):
        months = amount * {"y": 12, "Y": 12, "q": 3, "Q": 3, "M": 1}[unit]
        total = when.year * 12 + when.month - 1 + months
        year, month = divmod(total, 12)
        day = min(when.day, calendar.monthrange(year, month + 1)[1])
        return when.replace(year=year, month=month + 1, day=day)
    seconds = {"w": 604800, "W": 604800, "d": 86400, "D": 86400, "h": 3600, "H": 3600, "m": 60, "s": 1, "S": 1}[unit]
    return when + dt.timedelta(seconds=amount * seconds)


def render(text: str, ctx: TemplateContext) -> Rendered:
    """``text`` with its variables replaced.

    Raises:
        UnsupportedToken: a ``{{date:FORMAT}}`` uses a moment token vaultd does not support.
        MomentError: a format is over its bound.
        OverflowError: an offset leaves the calendar.
        ValueError: an offset leaves the calendar.
    """

    def one(match: re.Match[str]) -> str:
        name, amount, unit, fmt = match.group(1).lower(), match.group(2), match.group(3), match.group(4)
        if name == "title":
            return match.group(0) if (amount or fmt) else ctx.title
        when = ctx.when
        if name in ("yesterday", "tomorrow"):
            if not ctx.daily or amount or fmt:
                return match.group(0)
            return format_date(when + dt.timedelta(days=-1 if name == "yesterday" else 1), ctx.date_format)
        if amount:
            if not ctx.daily:
                return match.group(0)
            when = _shift(when, int(amount), unit)
        if fmt is not None:
            return format_date(when, fmt.strip())
        return format_date(when, ctx.date_format if name == "date" else ctx.time_format)

    return Rendered(text=_VARIABLE.sub(one, text), templater=has_templater(text))


def template_note_path(name: str) -> str:
    """A template's vault path as Obsidian's settings name it (``.md`` left out)."""
    name = name.strip().strip("/")
    return name if name.lower().endswith(".md") else name + ".md"
