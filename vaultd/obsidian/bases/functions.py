"""Operators and the documented methods of Bases' value types (strings, numbers, lists, dates,
durations, objects, regular expressions); file and link methods, which read the index, are in
:mod:`vaultd.obsidian.bases.engine`.

Each function raises :class:`EvalError` with a message naming the construct when a value has the
wrong type: an answer is right or refused, never quietly wrong. Null flows through arithmetic and
methods as null, as an empty cell in Obsidian.
"""

from __future__ import annotations

import datetime as dt
import html
import math
import re
import statistics
from typing import Any, Final

from vaultd.obsidian.bases.dates import DATE_FIELDS, DURATION_FIELDS, date_field, date_method, duration_field
from vaultd.obsidian.bases.regex_guard import MAX_SUBJECT_CHARS
from vaultd.obsidian.bases.values import (
    Date,
    Duration,
    EvalError,
    FileRef,
    Link,
    Pattern,
    as_date,
    display,
    parse_date,
    parse_duration,
    truthy,
    type_name,
)

__all__ = [
    "DATE_FIELDS",
    "DURATION_FIELDS",
    "METHODS",
    "EvalError",
    "arith",
    "compare",
    "distinct",
    "equal",
]

MAX_TEXT_CHARS: Final = 1_000_000  #: a string an expression builds (repeat, concatenation)
MAX_LIST_ITEMS: Final = 100_000  #: a list an expression builds
_BIG_INT: Final = 2**53


def _num(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _fit(value: int | float) -> int | float:
    """JavaScript's numbers are doubles: an integer past 2**53 becomes a float (and a chain of
    multiplications cannot build an integer of a million digits)."""
    if isinstance(value, int) and not -_BIG_INT <= value <= _BIG_INT:
        return float(value)
    return value


def _text_limit(text: str) -> str:
    if len(text) > MAX_TEXT_CHARS:
        raise EvalError(f"a string longer than {MAX_TEXT_CHARS} characters")
    return text


def _list_limit(items: list[Any]) -> list[Any]:
    if len(items) > MAX_LIST_ITEMS:
        raise EvalError(f"a list longer than {MAX_LIST_ITEMS} items")
    return items


def _span(value: Any) -> Duration | None:
    if isinstance(value, Duration):
        return value
    if isinstance(value, str):
        return parse_duration(value)
    return None


# -- comparisons -------------------------------------------------------------------------


def _path_of(value: Any) -> str | None:
    if isinstance(value, FileRef):
        return value.path
    if isinstance(value, Link):
        return value.path
    return None


def equal(left: Any, right: Any) -> bool:
    if left is None or right is None:
        return left is None and right is None
    if isinstance(left, bool) or isinstance(right, bool):
        return left is right
    if _num(left) and _num(right):
        return bool(left == right)
    if isinstance(left, str) and isinstance(right, str):
        return left == right
    if isinstance(left, Date | dt.date) or isinstance(right, Date | dt.date):
        day_a, day_b = as_date(left), as_date(right)
        return day_a is not None and day_b is not None and day_a.at == day_b.at
    if isinstance(left, Duration) and isinstance(right, Duration):
        return left.total_ms() == right.total_ms()
    if isinstance(left, Link | FileRef) or isinstance(right, Link | FileRef):
        a, b = _path_of(left), _path_of(right)
        if a is not None and b is not None:
            return a == b
        link, other = (left, right) if isinstance(left, Link) else (right, left)
        if isinstance(link, Link) and isinstance(other, str):
            return other in (link.target, link.path, f"[[{link.target}]]")
        return False
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(equal(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(equal(left[k], right[k]) for k in left)
    if isinstance(left, Pattern) and isinstance(right, Pattern):
        return (left.source, left.flags) == (right.source, right.flags)
    return False


def compare(left: Any, right: Any) -> int | None:
    """-1, 0 or 1; None when the two cannot be ordered (then ``<`` and ``>`` are false)."""
    if left is None or right is None:
        return None
    if _num(left) and _num(right) or isinstance(left, bool) and isinstance(right, bool):
        if isinstance(left, float) and math.isnan(left) or isinstance(right, float) and math.isnan(right):
            return None
        return int(left > right) - int(left < right)
    if isinstance(left, Date | dt.date) or isinstance(right, Date | dt.date):
        a, b = as_date(left), as_date(right)
        if a is None or b is None:
            return None
        return (a.at > b.at) - (a.at < b.at)
    if isinstance(left, str) and isinstance(right, str):
        return (left > right) - (left < right)
    if isinstance(left, Duration) and isinstance(right, Duration):
        x, y = left.total_ms(), right.total_ms()
        return (x > y) - (x < y)
    return None


def _identity(value: Any) -> Any:
    """A hashable stand-in that two values :func:`equal` calls equal share (text that reads as a
    date aside): lists and objects by their contents, dates by their moment."""
    if isinstance(value, list):
        return ("list", tuple(_identity(v) for v in value))
    if isinstance(value, dict):
        return ("object", tuple(sorted((str(k), _identity(v)) for k, v in value.items())))
    if isinstance(value, Date):
        return ("date", value.at)
    if isinstance(value, Duration):
        return ("duration", value.total_ms())
    if isinstance(value, Link | FileRef):
        path = _path_of(value)
        return ("file", path) if path is not None else ("link", value)
    if isinstance(value, bool):
        return ("bool", value)
    return value


def distinct(items: list[Any]) -> list[Any]:
    """The items without repeats, first ones kept, in one pass (a quadratic scan of 100,000 items
    would outlast any budget)."""
    seen: set[Any] = set()
    kept: list[Any] = []
    for item in items:
        key = _identity(item)
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


# -- arithmetic --------------------------------------------------------------------------


def arith(op: str, left: Any, right: Any) -> Any:
    """``+ - * / %`` as Bases reads them: numbers, text joined by ``+``, a date plus or minus a
    duration (or a duration string such as ``"1d"``), a date minus a date (a duration), a
    duration scaled by a number. Null on either side gives null."""
    if left is None or right is None:
        return None
    if _num(left) and _num(right):
        if op == "+":
            return _fit(left + right)
        if op == "-":
            return _fit(left - right)
        if op == "*":
            return _fit(left * right)
        if right == 0:
            if op == "%" or left == 0 or (isinstance(left, float) and math.isnan(left)):
                return math.nan
            return math.inf if left > 0 else -math.inf
        if op == "/":
            quotient = left / right
            return int(quotient) if isinstance(left, int) and isinstance(right, int) and quotient.is_integer() else quotient
        return _fit(math.fmod(left, right) if isinstance(left, float) or isinstance(right, float) else int(math.fmod(left, right)))
    if op in "+-":
        date = left if isinstance(left, Date | dt.date) else (parse_date(left) if isinstance(left, str) else None)
        date = as_date(date) if date is not None else None
        if date is not None:
            span = _span(right)
            if span is not None:
                try:
                    return date.plus(span, 1 if op == "+" else -1)
                except (OverflowError, ValueError):
                    raise EvalError("the date falls outside the years 1 to 9999") from None
            other = as_date(right)
            if op == "-" and other is not None:
                return Duration(0, (date.at - other.at).total_seconds() * 1000.0)
        if isinstance(left, Duration):
            span = _span(right)
            if span is not None:
                sign = 1 if op == "+" else -1
                return Duration(left.months + sign * span.months, left.ms + sign * span.ms)
            if op == "+" and isinstance(right, Date):
                return arith("+", right, left)
        if op == "+" and (isinstance(left, str) or isinstance(right, str)):
            return _text_limit(display(left) + display(right))
        if op == "+" and isinstance(left, list) and isinstance(right, list):
            return _list_limit(left + right)
    if op in "*/" and isinstance(left, Duration) and _num(right):
        if op == "/" and right == 0:
            raise EvalError("a duration divided by zero")
        return left.scaled(right if op == "*" else 1 / right)
    raise EvalError(f"'{op}' does not apply to a {type_name(left)} and a {type_name(right)}")


# -- methods by receiver type -----------------------------------------------------------


def _args(name: str, args: list[Any], low: int, high: int | None = None) -> None:
    high = low if high is None else high
    if not low <= len(args) <= high:
        want = str(low) if low == high else f"{low} to {high}"
        raise EvalError(f"{name}() takes {want} argument{'s' if high != 1 else ''}, got {len(args)}")


def _text_arg(name: str, value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return display(value)


def _int_arg(name: str, value: Any) -> int:
    if not _num(value) or (isinstance(value, float) and not value.is_integer()):
        raise EvalError(f"{name}() needs a whole number, got a {type_name(value)}")
    return int(value)


def _title(text: str) -> str:
    return " ".join(word[:1].upper() + word[1:].lower() if word else word for word in text.split(" "))


def _matches(pattern: Pattern, text: str) -> bool:
    if len(text) > MAX_SUBJECT_CHARS:
        raise EvalError(f"a regular expression is matched against text longer than {MAX_SUBJECT_CHARS} characters")
    return pattern.compiled.search(text) is not None


def _string_method(name: str, s: str, args: list[Any]) -> Any:
    if name == "contains":
        _args(name, args, 1)
        return _text_arg(name, args[0]) in s
    if name == "containsAll":
        return all(_text_arg(name, a) in s for a in args)
    if name == "containsAny":
        return any(_text_arg(name, a) in s for a in args)
    if name == "startsWith":
        _args(name, args, 1)
        return s.startswith(_text_arg(name, args[0]))
    if name == "endsWith":
        _args(name, args, 1)
        return s.endswith(_text_arg(name, args[0]))
    if name == "isEmpty":
        _args(name, args, 0)
        return not s
    if name == "lower":
        _args(name, args, 0)
        return s.lower()
    if name == "title":
        _args(name, args, 0)
        return _title(s)
    if name == "trim":
        _args(name, args, 0)
        return s.strip()
    if name == "reverse":
        _args(name, args, 0)
        return s[::-1]
    if name == "repeat":
        _args(name, args, 1)
        count = _int_arg(name, args[0])
        if count < 0:
            raise EvalError("repeat() needs a count of 0 or more")
        if len(s) * count > MAX_TEXT_CHARS:
            raise EvalError(f"a string longer than {MAX_TEXT_CHARS} characters")
        return s * count
    if name == "slice":
        _args(name, args, 1, 2)
        start = _int_arg(name, args[0])
        end = _int_arg(name, args[1]) if len(args) > 1 else None
        return s[start:end]
    if name == "replace":
        _args(name, args, 2)
        replacement = _text_arg(name, args[1])
        pattern = args[0]
        if isinstance(pattern, Pattern):
            if len(s) > MAX_SUBJECT_CHARS:
                raise EvalError(f"a regular expression is matched against text longer than {MAX_SUBJECT_CHARS} characters")
            count = 0 if "g" in pattern.flags else 1
            return _text_limit(pattern.compiled.sub(lambda _m: replacement, s, count=count))
        return _text_limit(s.replace(_text_arg(name, pattern), replacement, 1))
    if name == "split":
        _args(name, args, 1, 2)
        sep = args[0]
        if isinstance(sep, Pattern):
            if len(s) > MAX_SUBJECT_CHARS:
                raise EvalError(f"a regular expression is matched against text longer than {MAX_SUBJECT_CHARS} characters")
            parts = sep.compiled.split(s)
        else:
            text = _text_arg(name, sep)
            parts = list(s) if text == "" else s.split(text)
        if len(args) > 1:
            parts = parts[: max(0, _int_arg(name, args[1]))]
        return _list_limit(parts)
    raise EvalError(f"{name}() is not a method of a string")


def _number_method(name: str, n: float, args: list[Any]) -> Any:
    if name == "abs":
        _args(name, args, 0)
        return abs(n)
    if name == "ceil":
        _args(name, args, 0)
        return n if math.isnan(n) or math.isinf(n) else math.ceil(n)
    if name == "floor":
        _args(name, args, 0)
        return n if math.isnan(n) or math.isinf(n) else math.floor(n)
    if name == "round":
        _args(name, args, 0, 1)
        if math.isnan(n) or math.isinf(n):
            return n
        digits = _int_arg(name, args[0]) if args else 0
        if not 0 <= digits <= 100:
            raise EvalError("round() takes 0 to 100 digits")
        scaled = math.floor(n * 10**digits + 0.5)  # JavaScript rounds halves up
        return scaled if digits == 0 else scaled / 10**digits
    if name == "toFixed":
        _args(name, args, 1)
        digits = _int_arg(name, args[0])
        if not 0 <= digits <= 100:
            raise EvalError("toFixed() takes 0 to 100 digits")
        return f"{n:.{digits}f}"
    if name == "isEmpty":
        _args(name, args, 0)
        return False
    raise EvalError(f"{name}() is not a method of a number")


def _sort_key(value: Any) -> tuple[int, Any]:
    if _num(value) or isinstance(value, bool):
        return (0, float(value))
    if isinstance(value, str):
        return (1, value)
    date = as_date(value)
    if date is not None:
        return (2, date.stamp())
    return (3, display(value))


def _numbers(name: str, items: list[Any]) -> list[float]:
    found = [v for v in items if v is not None]
    if any(not _num(v) for v in found):
        raise EvalError(f"{name}() needs a list of numbers")
    return found


def _list_method(name: str, items: list[Any], args: list[Any]) -> Any:
    if name == "contains":
        _args(name, args, 1)
        return any(equal(v, args[0]) for v in items)
    if name == "containsAll":
        return all(any(equal(v, a) for v in items) for a in args)
    if name == "containsAny":
        return any(any(equal(v, a) for v in items) for a in args)
    if name == "isEmpty":
        _args(name, args, 0)
        return not items
    if name == "join":
        _args(name, args, 1)
        return _text_limit(_text_arg(name, args[0]).join(display(v) for v in items))
    if name == "reverse":
        _args(name, args, 0)
        return items[::-1]
    if name == "slice":
        _args(name, args, 1, 2)
        start = _int_arg(name, args[0])
        end = _int_arg(name, args[1]) if len(args) > 1 else None
        return items[start:end]
    if name == "sort":
        _args(name, args, 0)
        return sorted(items, key=_sort_key)
    if name == "unique":
        _args(name, args, 0)
        return distinct(items)
    if name == "flat":
        _args(name, args, 0)
        flat: list[Any] = []
        for v in items:
            flat.extend(v if isinstance(v, list) else [v])
        return _list_limit(flat)
    if name in ("sum", "mean", "average", "median", "min", "max"):
        _args(name, args, 0)
        numbers = _numbers(name, items)
        if name == "sum":
            return _fit(sum(numbers))
        if not numbers:
            return None
        if name in ("mean", "average"):
            return statistics.fmean(numbers)
        if name == "median":
            return statistics.median(numbers)
        return min(numbers) if name == "min" else max(numbers)
    raise EvalError(f"{name}() is not a method of a list")


def _object_method(name: str, obj: dict[str, Any], args: list[Any]) -> Any:
    _args(name, args, 0)
    if name == "isEmpty":
        return not obj
    if name == "keys":
        return list(obj)
    if name == "values":
        return list(obj.values())
    raise EvalError(f"{name}() is not a method of an object")


_ANY: Final = ("isTruthy", "isType", "toString")
STRING_METHODS: Final = frozenset(
    {
        "contains",
        "containsAll",
        "containsAny",
        "startsWith",
        "endsWith",
        "isEmpty",
        "lower",
        "title",
        "trim",
        "reverse",
        "repeat",
        "slice",
        "replace",
        "split",
    }
)
NUMBER_METHODS: Final = frozenset({"abs", "ceil", "floor", "round", "toFixed", "isEmpty"})
LIST_METHODS: Final = frozenset(
    {"contains", "containsAll", "containsAny", "isEmpty", "join", "reverse", "slice", "sort", "unique", "flat"}
    | {"sum", "mean", "average", "median", "min", "max", "filter", "map", "reduce"}
)
DATE_METHODS: Final = frozenset({"date", "time", "format", "relative", "isEmpty"})
OBJECT_METHODS: Final = frozenset({"isEmpty", "keys", "values"})
FILE_METHODS: Final = frozenset({"asLink", "hasLink", "hasProperty", "hasTag", "inFolder"})
LINK_METHODS: Final = frozenset({"asFile", "linksTo"})
REGEX_METHODS: Final = frozenset({"matches"})
#: Every method name some type has: a call of any other name is refused before evaluation.
METHODS: Final = (
    frozenset(_ANY)
    | STRING_METHODS
    | NUMBER_METHODS
    | LIST_METHODS
    | DATE_METHODS
    | OBJECT_METHODS
    | FILE_METHODS
    | LINK_METHODS
    | REGEX_METHODS
)
_TYPES: Final = frozenset({"null", "boolean", "number", "string", "list", "object", "date", "duration", "link", "file", "regexp"})


def value_method(name: str, value: Any, args: list[Any], now: Date) -> Any:
    """A method of a value that is not a file or a link (those read the index)."""
    if name == "isTruthy":
        _args(name, args, 0)
        return truthy(value)
    if name == "toString":
        _args(name, args, 0)
        return display(value)
    if name == "isType":
        _args(name, args, 1)
        wanted = args[0]
        if not isinstance(wanted, str) or wanted not in _TYPES:
            raise EvalError(f"isType() takes one of {', '.join(sorted(_TYPES))}")
        return type_name(value) == wanted
    if value is None:
        return True if name == "isEmpty" else None
    if isinstance(value, bool):
        raise EvalError(f"{name}() is not a method of a boolean")
    if _num(value):
        return _number_method(name, value, args)
    if isinstance(value, str):
        if name not in STRING_METHODS and name in DATE_METHODS and (date := parse_date(value)) is not None:
            return date_method(name, date, args, now)
        return _string_method(name, value, args)
    if isinstance(value, list):
        return _list_method(name, value, args)
    if isinstance(value, dict):
        return _object_method(name, value, args)
    date = as_date(value) if isinstance(value, Date | dt.date) else None
    if date is not None:
        return date_method(name, date, args, now)
    if isinstance(value, Pattern) and name == "matches":
        _args(name, args, 1)
        if args[0] is None:
            return False
        return _matches(value, _text_arg(name, args[0]))
    raise EvalError(f"{name}() is not a method of a {type_name(value)}")


def value_field(name: str, value: Any) -> Any:
    """``x.name`` of a value that is not a file: an object's key, a string's or list's length, a
    date's part, a duration's total in a unit; null for null."""
    if value is None:
        return None
    if isinstance(value, dict):
        return value.get(name)
    if name == "length" and isinstance(value, str | list):
        return len(value)
    if name in DATE_FIELDS:
        date = as_date(value) if isinstance(value, Date | dt.date | str) else None
        if date is not None:
            return date_field(date, name)
    if isinstance(value, Duration) and name in DURATION_FIELDS:
        return duration_field(value, name)
    raise EvalError(f"a {type_name(value)} has no field {name!r}")


def escape_html(text: str) -> str:
    return html.escape(text, quote=True)


def to_number(value: Any) -> Any:
    """``number()``: numbers as they are, booleans as 1 and 0, text parsed (NaN when it is not a
    number), dates as milliseconds since 1970, durations as milliseconds."""
    if value is None:
        return None
    if isinstance(value, bool):
        return 1 if value else 0
    if _num(value):
        return value
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return 0
        try:
            return _fit(int(text)) if re.fullmatch(r"[+-]?\d{1,16}", text) else float(text)
        except ValueError:
            date = parse_date(text)
            return date.stamp() if date is not None else math.nan
    if isinstance(value, Date):
        return value.stamp()
    if isinstance(value, Duration):
        return value.total_ms()
    raise EvalError(f"number() cannot read a {type_name(value)}")
