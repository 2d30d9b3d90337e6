"""Moment.js date formats, as Obsidian's settings spell them: formatting and parsing, locale ``en``.

Obsidian names daily notes, unique notes and template dates with moment.js format strings
(``YYYY-MM-DD``, ``gggg-[W]ww``, ``YYYYMMDDHHmm``). A note lands where the person's Obsidian
would put it only if vaultd reads those strings exactly as moment does, so this module follows
moment's own tokenizer: the longest token at each place, ``[text]`` and ``\\x`` literal, and every
other character literal. Week tokens follow moment's ``en`` locale (weeks start on Sunday, the
week holding 1 January is week 1: ``w``, ``gggg``) and ISO 8601 (``W``, ``GGGG``).

A token moment knows but vaultd does not render (eras, time-zone names, ``YYYYY``) is refused
with :class:`UnsupportedToken` rather than written as text that would silently differ from the
app's. Pure functions: no clock, no locale of the machine.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["MomentError", "UnsupportedToken", "format_date", "parse_date", "tokens"]

MONTHS: Final = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December")
WEEKDAYS: Final = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")  #: moment's d: Sunday is 0
MAX_FORMAT_CHARS: Final = 256  #: a settings value longer than this is not a date format

#: moment's formatting tokenizer (src/lib/format/format.js and the locale's long formats), longest first
_TOKEN_RE: Final = re.compile(
    r"(\[[^\[]*\])|(\\)?(LTS|LT|LL?L?L?|l{1,4}|[Hh]mm(?:ss)?|Mo|MM?M?M?|Do|DDDo|DD?D?D?|ddd?d?|do?|w[o|w]?|W[o|W]?|Qo?"
    r"|N{1,5}|YYYYYY|YYYYY|YYYY|YY|y{2,4}|yo?|gg(?:ggg?)?|GG(?:GGG?)?|e|E|a|A|hh?|HH?|kk?|mm?|ss?|S{1,9}|x|X|zz?|ZZ?|.)",
    re.DOTALL,
)
#: tokens moment knows that vaultd refuses: rendering them as text would differ from the app
_UNSUPPORTED: Final = frozenset(
    {"N", "NN", "NNN", "NNNN", "NNNNN", "yy", "yyy", "yyyy", "y", "yo", "YYYYY", "YYYYYY", "ggggg", "GGGGG", "gg", "GG", "z", "zz", "Y"}
)
_LONG: Final = {
    "LT": "h:mm A",
    "LTS": "h:mm:ss A",
    "L": "MM/DD/YYYY",
    "LL": "MMMM D, YYYY",
    "LLL": "MMMM D, YYYY h:mm A",
    "LLLL": "dddd, MMMM D, YYYY h:mm A",
    "l": "M/D/YYYY",
    "ll": "MMM D, YYYY",
    "lll": "MMM D, YYYY h:mm A",
    "llll": "ddd, MMM D, YYYY h:mm A",
}


class MomentError(ValueError):
    """A format or a date string vaultd cannot read as moment would."""


class UnsupportedToken(MomentError):
    """A moment token vaultd does not render (an era, a time-zone name, a five-digit year)."""

    def __init__(self, token: str, fmt: str) -> None:
        super().__init__(f"the date format {fmt!r} uses the moment token {token!r}, which vaultd does not support")
        self.token = token


@dataclass(frozen=True, slots=True)
class Token:
    """One piece of a format: a token moment replaces, or literal text."""

    text: str
    literal: bool


def tokens(fmt: str) -> list[Token]:
    """``fmt`` split as moment splits it, long locale formats expanded.

    Raises:
        MomentError: the format is over ``MAX_FORMAT_CHARS``.
        UnsupportedToken: the format uses a token vaultd does not support.
    """
    if len(fmt) > MAX_FORMAT_CHARS:
        raise MomentError(f"a date format may be at most {MAX_FORMAT_CHARS} characters")
    out: list[Token] = []
    for match in _TOKEN_RE.finditer(fmt):
        bracket, escaped, token = match.group(1), match.group(2), match.group(3)
        if bracket is not None:
            out.append(Token(bracket[1:-1], True))
        elif escaped:
            out.append(Token(token, True))
        elif token in _LONG:
            out.extend(tokens(_LONG[token]))
        elif token in _UNSUPPORTED:
            raise UnsupportedToken(token, fmt)
        elif token in _FORMATTERS:
            out.append(Token(token, False))
        elif len(token) > 1 and token[0] == "S":
            out.append(Token(token, False))
        else:
            out.append(Token(token, True))
    return out


# -- weeks ----------------------------------------------------------------------------------------


def _week(day: dt.date, dow: int, fwd: int) -> tuple[int, int]:
    """(week-year, week) with weeks starting on ``dow`` (0 Sunday) and week 1 holding January ``fwd``."""
    start = day - dt.timedelta(days=(day.isoweekday() % 7 - dow) % 7)
    year = (start + dt.timedelta(days=7 - fwd)).year
    first = _week_one(year, dow, fwd)
    return year, (start - first).days // 7 + 1


def _week_one(year: int, dow: int, fwd: int) -> dt.date:
    anchor = dt.date(year, 1, fwd)
    return anchor - dt.timedelta(days=(anchor.isoweekday() % 7 - dow) % 7)


def locale_week(day: dt.date) -> tuple[int, int]:
    """moment's ``gggg`` and ``w`` in locale ``en``: weeks from Sunday, week 1 holds 1 January."""
    return _week(day, 0, 1)


def iso_week(day: dt.date) -> tuple[int, int]:
    """moment's ``GGGG`` and ``W``: ISO 8601 weeks."""
    year, week, _ = day.isocalendar()
    return year, week


# -- formatting -----------------------------------------------------------------------------------


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``11th``, ``23rd``: moment's ``en`` ordinal."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _year(d: dt.datetime) -> str:
    return f"{d.year:04d}"


def _hour12(d: dt.datetime) -> int:
    return d.hour % 12 or 12


def _offset(d: dt.datetime, sep: str) -> str:
    delta = d.utcoffset() or dt.timedelta(0)
    minutes = int(delta.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    minutes = abs(minutes)
    return f"{sign}{minutes // 60:02d}{sep}{minutes % 60:02d}"


def _timestamp(d: dt.datetime) -> float:
    """Seconds since the epoch; a naive time is the machine's local time, as moment's is."""
    return d.timestamp()


_FORMATTERS: Final[dict[str, Callable[[dt.datetime], str]]] = {
    "YYYY": _year,
    "YY": lambda d: f"{d.year % 100:02d}",
    "Q": lambda d: str((d.month - 1) // 3 + 1),
    "Qo": lambda d: ordinal((d.month - 1) // 3 + 1),
    "M": lambda d: str(d.month),
    "Mo": lambda d: ordinal(d.month),
    "MM": lambda d: f"{d.month:02d}",
    "MMM": lambda d: MONTHS[d.month - 1][:3],
    "MMMM": lambda d: MONTHS[d.month - 1],
    "D": lambda d: str(d.day),
    "Do": lambda d: ordinal(d.day),
    "DD": lambda d: f"{d.day:02d}",
    "DDD": lambda d: str(d.timetuple().tm_yday),
    "DDDo": lambda d: ordinal(d.timetuple().tm_yday),
    "DDDD": lambda d: f"{d.timetuple().tm_yday:03d}",
    "d": lambda d: str(d.isoweekday() % 7),
    "do": lambda d: ordinal(d.isoweekday() % 7),
    "dd": lambda d: WEEKDAYS[d.isoweekday() % 7][:2],
    "ddd": lambda d: WEEKDAYS[d.isoweekday() % 7][:3],
    "dddd": lambda d: WEEKDAYS[d.isoweekday() % 7],
    "e": lambda d: str(d.isoweekday() % 7),
    "E": lambda d: str(d.isoweekday()),
    "w": lambda d: str(locale_week(d.date())[1]),
    "wo": lambda d: ordinal(locale_week(d.date())[1]),
    "ww": lambda d: f"{locale_week(d.date())[1]:02d}",
    "W": lambda d: str(iso_week(d.date())[1]),
    "Wo": lambda d: ordinal(iso_week(d.date())[1]),
    "WW": lambda d: f"{iso_week(d.date())[1]:02d}",
    "gggg": lambda d: f"{locale_week(d.date())[0]:04d}",
    "GGGG": lambda d: f"{iso_week(d.date())[0]:04d}",
    "H": lambda d: str(d.hour),
    "HH": lambda d: f"{d.hour:02d}",
    "h": lambda d: str(_hour12(d)),
    "hh": lambda d: f"{_hour12(d):02d}",
    "k": lambda d: str(d.hour or 24),
    "kk": lambda d: f"{d.hour or 24:02d}",
    "hmm": lambda d: f"{_hour12(d)}{d.minute:02d}",
    "hmmss": lambda d: f"{_hour12(d)}{d.minute:02d}{d.second:02d}",
    "Hmm": lambda d: f"{d.hour}{d.minute:02d}",
    "Hmmss": lambda d: f"{d.hour}{d.minute:02d}{d.second:02d}",
    "m": lambda d: str(d.minute),
    "mm": lambda d: f"{d.minute:02d}",
    "s": lambda d: str(d.second),
    "ss": lambda d: f"{d.second:02d}",
    "S": lambda d: str(d.microsecond // 100000),
    "A": lambda d: "AM" if d.hour < 12 else "PM",
    "a": lambda d: "am" if d.hour < 12 else "pm",
    "X": lambda d: str(int(_timestamp(d) // 1)),
    "x": lambda d: str(int(_timestamp(d) * 1000 // 1)),
    "Z": lambda d: _offset(d, ":"),
    "ZZ": lambda d: _offset(d, ""),
}


def _fraction(token: str, d: dt.datetime) -> str:
    digits = f"{d.microsecond:06d}000"
    return digits[: len(token)]


def format_date(when: dt.datetime | dt.date, fmt: str) -> str:
    """``when`` written in moment's ``fmt`` (a date alone is its midnight).

    Raises:
        UnsupportedToken: the format uses a token vaultd does not support.
        MomentError: the format is over ``MAX_FORMAT_CHARS``.
    """
    d = when if isinstance(when, dt.datetime) else dt.datetime(when.year, when.month, when.day)
    out = []
    for token in tokens(fmt):
        if token.literal:
            out.append(token.text)
        elif token.text[0] == "S":
            out.append(_fraction(token.text, d))
        else:
            out.append(_FORMATTERS[token.text](d))
    return "".join(out)


# -- parsing --------------------------------------------------------------------------------------

_NAMES: Final = {
    "MMM": "|".join(m[:3] for m in MONTHS),
    "MMMM": "|".join(MONTHS),
    "dd": "|".join(w[:2] for w in WEEKDAYS),
    "ddd": "|".join(w[:3] for w in WEEKDAYS),
    "dddd": "|".join(WEEKDAYS),
}
_PATTERNS: Final = {
    "YYYY": r"\d{4}",
    "YY": r"\d{2}",
    "Q": r"[1-4]",
    "M": r"\d{1,2}",
    "MM": r"\d{2}",
    "D": r"\d{1,2}",
    "DD": r"\d{2}",
    "DDD": r"\d{1,3}",
    "DDDD": r"\d{3}",
    "d": r"[0-6]",
    "e": r"[0-6]",
    "E": r"[1-7]",
    "w": r"\d{1,2}",
    "ww": r"\d{2}",
    "W": r"\d{1,2}",
    "WW": r"\d{2}",
    "gggg": r"\d{4}",
    "GGGG": r"\d{4}",
    "H": r"\d{1,2}",
    "HH": r"\d{2}",
    "h": r"\d{1,2}",
    "hh": r"\d{2}",
    "k": r"\d{1,2}",
    "kk": r"\d{2}",
    "m": r"\d{1,2}",
    "mm": r"\d{2}",
    "s": r"\d{1,2}",
    "ss": r"\d{2}",
    "A": r"AM|PM|am|pm",
    "a": r"AM|PM|am|pm",
    "X": r"-?\d{1,12}",
    "x": r"-?\d{1,15}",
    "Z": r"[+-]\d{2}:\d{2}",
    "ZZ": r"[+-]\d{4}",
}
_ORDINAL: Final = {"Do", "Mo", "DDDo", "do", "wo", "Wo", "Qo"}


def _token_pattern(token: str) -> str:
    if token in _NAMES:
        return _NAMES[token]
    if token in _ORDINAL:
        return r"\d{1,3}(?:st|nd|rd|th)"
    if token[0] == "S":
        return rf"\d{{{len(token)}}}"
    if token in _PATTERNS:
        return _PATTERNS[token]
    raise UnsupportedToken(token, token)  # hmm/Hmmss and the like: formatted, never parsed back


def _number(text: str) -> int:
    return int(re.match(r"-?\d+", text).group(0))  # type: ignore[union-attr]


def parse_date(text: str, fmt: str) -> dt.datetime:
    """The naive local date and time ``text`` names when read with ``fmt``, as moment reads it
    strictly (fields a format leaves out default as moment's do: the first month, day or week day).

    Raises:
        MomentError: ``text`` does not match ``fmt``, or names no real date.
        UnsupportedToken: the format uses a token vaultd does not support or cannot read back.
    """
    parts: list[str] = []
    names: list[str] = []
    for token in tokens(fmt):
        if token.literal:
            parts.append(re.escape(token.text))
        else:
            names.append(token.text)
            parts.append(f"({_token_pattern(token.text)})")
    match = re.fullmatch("".join(parts), text, re.IGNORECASE)
    if match is None:
        raise MomentError(f"{text!r} does not match the date format {fmt!r}")
    fields: dict[str, str] = dict(zip(names, match.groups(), strict=True))
    try:
        return _resolve(fields)
    except (ValueError, OverflowError) as exc:
        raise MomentError(f"{text!r} names no date in the format {fmt!r}: {exc}") from exc


def _first(fields: dict[str, str], *keys: str) -> str | None:
    return next((fields[k] for k in keys if k in fields), None)


def _resolve(f: dict[str, str]) -> dt.datetime:
    if (stamp := _first(f, "X")) is not None:
        return dt.datetime.fromtimestamp(int(stamp))
    if (ms := _first(f, "x")) is not None:
        return dt.datetime.fromtimestamp(int(ms) / 1000)
    day = _resolve_day(f)
    hour = int(_first(f, "H", "HH", "k", "kk", "h", "hh") or 0)
    if "k" in f or "kk" in f:
        hour %= 24
    if (meridiem := _first(f, "A", "a")) is not None and ("h" in f or "hh" in f):
        hour = hour % 12 + (12 if meridiem.lower() == "pm" else 0)
    minute = int(_first(f, "m", "mm") or 0)
    second = int(_first(f, "s", "ss") or 0)
    frac = next((v for k, v in f.items() if k[0] == "S"), "")
    micro = int((frac + "000000")[:6]) if frac else 0
    return dt.datetime(day.year, day.month, day.day, hour, minute, second, micro)


def _resolve_day(f: dict[str, str]) -> dt.date:
    if (gy := _first(f, "GGGG")) is not None and (gw := _first(f, "W", "WW", "Wo")) is not None:
        weekday = int(_first(f, "E") or 1)
        return dt.date.fromisocalendar(int(gy), _number(gw), weekday)
    if (ly := _first(f, "gggg")) is not None and (lw := _first(f, "w", "ww", "wo")) is not None:
        weekday = _number(_first(f, "d", "e", "do") or "0")
        day = _week_one(int(ly), 0, 1) + dt.timedelta(weeks=_number(lw) - 1, days=weekday)
        if locale_week(day) != (int(ly), _number(lw)):
            raise ValueError(f"week {_number(lw)} of {ly} does not exist")
        return day
    if (yy := _first(f, "YY")) is not None and "YYYY" not in f:
        two = int(yy)
        year = two + (1900 if two > 68 else 2000)  # moment's two-digit cut-off
    else:
        year = int(_first(f, "YYYY", "gggg", "GGGG") or dt.date.today().year)
    if (doy := _first(f, "DDD", "DDDD", "DDDo")) is not None:
        day = dt.date(year, 1, 1) + dt.timedelta(days=_number(doy) - 1)
        if day.year != year:
            raise ValueError(f"day {_number(doy)} of {year} does not exist")
        return day
    month = _month(f)
    return dt.date(year, month, _number(_first(f, "D", "DD", "Do") or "1"))


def _month(f: dict[str, str]) -> int:
    if (name := _first(f, "MMMM", "MMM")) is not None:
        return next(i + 1 for i, m in enumerate(MONTHS) if m.lower().startswith(name.lower()))
    if (num := _first(f, "M", "MM", "Mo")) is not None:
        return _number(num)
    if (quarter := _first(f, "Q", "Qo")) is not None:
        return (_number(quarter) - 1) * 3 + 1
    return 1
