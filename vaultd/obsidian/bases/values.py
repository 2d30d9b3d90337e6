"""The values a Bases expression computes with, beside the ones YAML gives (null, booleans,
numbers, strings, lists, mappings): dates, durations, links, files and regular expressions.

Obsidian's expressions are JavaScript underneath; the rules here follow what its documentation
promises (dates plus duration strings, date minus date is a duration, a string that reads as a
date compares as one) and stay plain Python values otherwise, so a row's answer encodes to JSON
without a conversion step of its own.
"""

from __future__ import annotations

import calendar
import datetime as dt
import math
import re
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "Date",
    "Duration",
    "EvalError",
    "FileRef",
    "Link",
    "Pattern",
    "as_date",
    "display",
    "parse_date",
    "parse_duration",
    "sort_key",
    "to_json",
    "truthy",
    "type_name",
]

MS_PER: Final = {"s": 1000.0, "m": 60_000.0, "h": 3_600_000.0, "d": 86_400_000.0, "w": 604_800_000.0}
_UNITS: Final = {
    "y": "y",
    "year": "y",
    "years": "y",
    "M": "M",
    "month": "M",
    "months": "M",
    "w": "w",
    "week": "w",
    "weeks": "w",
    "d": "d",
    "day": "d",
    "days": "d",
    "h": "h",
    "hour": "h",
    "hours": "h",
    "m": "m",
    "minute": "m",
    "minutes": "m",
    "s": "s",
    "second": "s",
    "seconds": "s",
    "ms": "ms",
    "millisecond": "ms",
    "milliseconds": "ms",
}
_DURATION_PART: Final = re.compile(r"\s*([+-]?\d+(?:\.\d+)?)\s*([A-Za-z]+)\s*")
_DATE_ONLY: Final = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATE_LIKE: Final = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$")


class EvalError(Exception):
    """A value of the wrong type, or a call outside what is supported, at ``pos`` in the
    expression being evaluated."""

    def __init__(self, message: str, pos: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos


@dataclass(frozen=True, slots=True)
class Date:
    """A moment in the daemon's local time; ``has_time`` is False for a calendar day (``today()``,
    ``date("2024-05-01")``), which displays without a time."""

    at: dt.datetime
    has_time: bool

    def plus(self, span: Duration, sign: int = 1) -> Date:
        at = self.at
        if span.months:
            at = _add_months(at, sign * span.months)
        if span.ms:
            at = at + dt.timedelta(milliseconds=sign * span.ms)
        keeps_day = span.ms % MS_PER["d"] == 0
        return Date(at, self.has_time or not keeps_day)

    def iso(self) -> str:
        if not self.has_time:
            return self.at.strftime("%Y-%m-%d")
        text = self.at.strftime("%Y-%m-%dT%H:%M:%S")
        return text + (f".{self.at.microsecond // 1000:03d}" if self.at.microsecond else "")

    def shown(self) -> str:
        return self.at.strftime("%Y-%m-%d") if not self.has_time else self.at.strftime("%Y-%m-%d %H:%M")

    def stamp(self) -> float:
        """Milliseconds, for ordering (naive local times compare as written)."""
        return (self.at - dt.datetime(1970, 1, 1)).total_seconds() * 1000.0


def _add_months(at: dt.datetime, months: int) -> dt.datetime:
    total = at.year * 12 + (at.month - 1) + months
    year, month = divmod(total, 12)
    if not 1 <= year <= 9999:
        raise OverflowError("date out of range")
    day = min(at.day, calendar.monthrange(year, month + 1)[1])
    return at.replace(year=year, month=month + 1, day=day)


@dataclass(frozen=True, slots=True)
class Duration:
    """A span: calendar months (years are twelve) apart from a fixed number of milliseconds, so
    ``"1M"`` after January 31st is the last day of February, as Moment counts."""

    months: int
    ms: float

    def total_ms(self) -> float:
        """For fields and comparisons: a month counted as 30 days, a year as 365."""
        years, months = divmod(abs(self.months), 12)
        sign = -1 if self.months < 0 else 1
        return self.ms + sign * (years * 365 + months * 30) * MS_PER["d"]

    def scaled(self, factor: float) -> Duration:
        months = self.months * factor
        if months != int(months):
            return Duration(0, self.total_ms() * factor)
        return Duration(int(months), self.ms * factor)

    def shown(self) -> str:
        ms = self.total_ms()
        for unit, name in (("d", "day"), ("h", "hour"), ("m", "minute"), ("s", "second")):
            size = MS_PER[unit]
            if abs(ms) >= size:
                n = ms / size
                n_text = number_text(round(n, 2))
                return f"{n_text} {name}{'' if abs(n) == 1 else 's'}"
        return f"{number_text(ms)} milliseconds"


@dataclass(frozen=True, slots=True)
class Link:
    """A link to a file: ``path`` where it resolves (None when it names nothing), ``target`` as
    written, ``label`` the text it shows."""

    target: str
    path: str | None
    label: str | None = None

    def shown(self) -> str:
        return self.label if self.label else self.target


@dataclass(frozen=True, slots=True)
class FileRef:
    """A file of the vault by its path; its fields are read from the index when asked."""

    path: str


@dataclass(frozen=True, slots=True)
class Pattern:
    """A regular expression literal, ``/source/flags``, compiled within the bounds of
    :mod:`vaultd.obsidian.bases.regex_guard`."""

    source: str
    flags: str
    compiled: re.Pattern[str]


def parse_duration(text: str) -> Duration | None:
    """``"1d"``, ``"2 weeks"``, ``"-3h"``, ``"1y 2M"``; None when the text is not a duration."""
    pos, months, ms, seen = 0, 0, 0.0, False
    if len(text) > 200:
        return None
    while pos < len(text):
        found = _DURATION_PART.match(text, pos)
        if found is None:
            return None
        amount, word = float(found.group(1)), found.group(2)
        unit = _UNITS.get(word) or (_UNITS.get(word.lower()) if len(word) > 2 else None)
        if unit is None:
            return None
        if unit in ("y", "M"):
            count = amount * (12 if unit == "y" else 1)
            if count != int(count):
                return None
            months += int(count)
        else:
            ms += amount * (1.0 if unit == "ms" else MS_PER[unit])
        pos, seen = found.end(), True
    return Duration(months, ms) if seen else None


def parse_date(text: str) -> Date | None:
    """``YYYY-MM-DD``, with an optional time (``HH:mm``, ``HH:mm:ss``, fractions, a zone, which
    is turned into local time); None when the text is not one."""
    text = text.strip()
    if not _DATE_LIKE.match(text):
        return None
    try:
        at = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if at.tzinfo is not None:
        at = at.astimezone().replace(tzinfo=None)
    return Date(at, not _DATE_ONLY.match(text))


def as_date(value: Any) -> Date | None:
    """A date, or a string (or YAML date) that reads as one: untyped YAML gives dates as text."""
    if isinstance(value, Date):
        return value
    if isinstance(value, str):
        return parse_date(value)
    if isinstance(value, dt.datetime):
        return Date(value.replace(tzinfo=None), True)
    if isinstance(value, dt.date):
        return Date(dt.datetime(value.year, value.month, value.day), False)
    return None


def type_name(value: Any) -> str:
    """The type names ``isType()`` accepts and errors use."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, Date | dt.date):
        return "date"
    if isinstance(value, Duration):
        return "duration"
    if isinstance(value, Link):
        return "link"
    if isinstance(value, FileRef):
        return "file"
    if isinstance(value, Pattern):
        return "regexp"
    return type(value).__name__


def truthy(value: Any) -> bool:
    """Null, false, zero, NaN, the empty string, list and object are false; the rest is true."""
    if value is None or value is False:
        return False
    if isinstance(value, (int, float)):
        return value != 0 and not (isinstance(value, float) and math.isnan(value))
    if isinstance(value, str | list | dict):
        return len(value) > 0
    return True


def number_text(value: float) -> str:
    """As JavaScript prints a number: ``3`` for 3.0, ``0.5``, ``NaN``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


def display(value: Any) -> str:
    """The text a cell shows, and what ``toString()`` and string concatenation give."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return number_text(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ", ".join(display(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {display(v)}" for k, v in value.items())
    if isinstance(value, Date):
        return value.shown()
    if isinstance(value, dt.date):
        date = as_date(value)
        return date.shown() if date is not None else str(value)
    if isinstance(value, Duration | Link):
        return value.shown()
    if isinstance(value, FileRef):
        return value.path.rpartition("/")[2].removesuffix(".md")
    if isinstance(value, Pattern):
        return f"/{value.source}/{value.flags}"
    return str(value)


def to_json(value: Any) -> Any:
    """The value as a JSON reply carries it: dates as ISO text, links as ``[[target]]`` text,
    files as their path, durations in milliseconds, NaN and infinities as null."""
    if value is None or isinstance(value, bool | str | int):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, list):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, Date):
        return value.iso()
    if isinstance(value, dt.date):
        date = as_date(value)
        return date.iso() if date is not None else str(value)
    if isinstance(value, Duration):
        return value.total_ms()
    if isinstance(value, Link):
        return f"[[{value.target}|{value.label}]]" if value.label else f"[[{value.target}]]"
    if isinstance(value, FileRef):
        return value.path
    if isinstance(value, Pattern):
        return f"/{value.source}/{value.flags}"
    return str(value)


def sort_key(value: Any) -> tuple[int, Any]:
    """A total order over cell values: numbers, then dates, then text (case-folded), then the rest
    by their shown text; nulls are placed by the caller."""
    if isinstance(value, bool):
        return (0, float(value))
    if isinstance(value, (int, float)):
        return (0, -math.inf if math.isnan(value) else float(value))
    if isinstance(value, Date | dt.date):
        date = as_date(value)
        return (1, date.stamp() if date is not None else 0.0)
    if isinstance(value, str):
        date = parse_date(value) if value[:1].isdigit() else None
        if date is not None:
            return (1, date.stamp())
        return (2, (value.casefold(), value))
    if isinstance(value, Duration):
        return (0, value.total_ms())
    return (3, (display(value).casefold(), display(value)))
