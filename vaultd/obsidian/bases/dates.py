"""Dates in Bases expressions: Moment.js format tokens, relative time as Moment words it, and
the fields of dates and durations."""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING, Any, Final

from vaultd.obsidian.bases.values import Date, Duration, EvalError

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["DATE_FIELDS", "DURATION_FIELDS", "date_field", "date_method", "duration_field", "format_date"]


def _args(name: str, args: list[Any], count: int) -> None:
    if len(args) != count:
        raise EvalError(f"{name}() takes {count} argument{'s' if count != 1 else ''}, got {len(args)}")


DATE_FIELDS: Final = ("year", "month", "day", "hour", "minute", "second", "millisecond")
DURATION_FIELDS: Final = ("days", "hours", "minutes", "seconds", "milliseconds")
_MONTHS: Final = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December")
_DAYS: Final = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_FORMAT_TOKEN: Final = re.compile(r"\[[^\]]*\]|YYYY|YY|MMMM|MMM|MM|M|Do|DD|D|dddd|ddd|dd|d|HH|H|hh|h|mm|m|ss|s|SSS|A|a|Q|X|x|[A-Za-z]")


def _ordinal(n: int) -> str:
    if 11 <= n % 100 <= 13:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


def format_date(date: Date, pattern: str) -> str:
    """Moment.js format tokens (``YYYY-MM-DD``, ``MMM D, YYYY``, ``dddd``, ``HH:mm``, ``[text]``);
    a letter that is not a supported token is refused by name rather than printed wrongly."""
    at = date.at
    hour12 = at.hour % 12 or 12

    def token(found: re.Match[str]) -> str:
        t = found.group(0)
        table: dict[str, Callable[[], str]] = {
            "YYYY": lambda: f"{at.year:04d}",
            "YY": lambda: f"{at.year % 100:02d}",
            "MMMM": lambda: _MONTHS[at.month - 1],
            "MMM": lambda: _MONTHS[at.month - 1][:3],
            "MM": lambda: f"{at.month:02d}",
            "M": lambda: str(at.month),
            "Do": lambda: _ordinal(at.day),
            "DD": lambda: f"{at.day:02d}",
            "D": lambda: str(at.day),
            "dddd": lambda: _DAYS[at.weekday()],
            "ddd": lambda: _DAYS[at.weekday()][:3],
            "dd": lambda: _DAYS[at.weekday()][:2],
            "d": lambda: str((at.weekday() + 1) % 7),
            "HH": lambda: f"{at.hour:02d}",
            "H": lambda: str(at.hour),
            "hh": lambda: f"{hour12:02d}",
            "h": lambda: str(hour12),
            "mm": lambda: f"{at.minute:02d}",
            "m": lambda: str(at.minute),
            "ss": lambda: f"{at.second:02d}",
            "s": lambda: str(at.second),
            "SSS": lambda: f"{at.microsecond // 1000:03d}",
            "A": lambda: "AM" if at.hour < 12 else "PM",
            "a": lambda: "am" if at.hour < 12 else "pm",
            "Q": lambda: str((at.month - 1) // 3 + 1),
            "X": lambda: str(int(date.stamp() // 1000)),
            "x": lambda: str(int(date.stamp())),
        }
        if t.startswith("["):
            return t[1:-1]
        make = table.get(t)
        if make is None:
            raise EvalError(f"the date format token {t!r} is not supported")
        return make()

    return _FORMAT_TOKEN.sub(token, pattern)


def _relative(date: Date, now: Date) -> str:
    seconds = (date.at - now.at).total_seconds()
    future, s = seconds > 0, abs(seconds)
    steps = (
        (45, "a few seconds", None),
        (90, "a minute", None),
        (45 * 60, None, 60),
        (90 * 60, "an hour", None),
        (22 * 3600, None, 3600),
        (36 * 3600, "a day", None),
        (26 * 86400, None, 86400),
        (45 * 86400, "a month", None),
        (320 * 86400, None, 30 * 86400),
        (548 * 86400, "a year", None),
    )
    names = {60: "minutes", 3600: "hours", 86400: "days", 30 * 86400: "months"}
    text = f"{round(s / (365 * 86400))} years"
    for bound, fixed, unit in steps:
        if s < bound:
            text = fixed if fixed is not None else f"{round(s / unit)} {names[unit]}"  # type: ignore[operator,index]
            break
    return f"in {text}" if future else f"{text} ago"


def date_field(date: Date, name: str) -> int:
    at = date.at
    values = {
        "year": at.year,
        "month": at.month,
        "day": at.day,
        "hour": at.hour,
        "minute": at.minute,
        "second": at.second,
        "millisecond": at.microsecond // 1000,
    }
    return values[name]


def duration_field(span: Duration, name: str) -> float:
    unit = {"days": 86_400_000.0, "hours": 3_600_000.0, "minutes": 60_000.0, "seconds": 1000.0, "milliseconds": 1.0}[name]
    return span.total_ms() / unit


def date_method(name: str, date: Date, args: list[Any], now: Date) -> Any:
    if name == "date":
        _args(name, args, 0)
        return Date(dt.datetime(date.at.year, date.at.month, date.at.day), False)
    if name == "time":
        _args(name, args, 0)
        return date.at.strftime("%H:%M:%S")
    if name == "format":
        _args(name, args, 1)
        if not isinstance(args[0], str):
            raise EvalError("format() needs a format string")
        return format_date(date, args[0])
    if name == "relative":
        _args(name, args, 0)
        return _relative(date, now)
    if name == "isEmpty":
        _args(name, args, 0)
        return False
    raise EvalError(f"{name}() is not a method of a date")
