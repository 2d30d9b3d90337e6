"""Plain YAML scalars under the YAML 1.2 core schema, resolved exactly as ruamel.yaml resolves them.

The frontmatter reader's fast path resolves the scalars libyaml leaves untyped with these rules,
and the writer asks them whether a string would read back as itself when written plain; both must
agree with ruamel.yaml, the reference view, so the rules are ruamel's own implicit resolvers (only
``true`` and ``false`` are booleans, ``012`` is the integer 12, ``1e3`` is a float).
"""

from __future__ import annotations

import datetime
import math
import re
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Callable

# ruamel.yaml's own YAML 1.2 implicit resolvers (``ruamel.yaml.resolver.implicit_resolvers``) and
# timestamp pattern (``ruamel.yaml.util.timestamp_regexp``), copied here so that a header read
# line by line (:mod:`.frontmatter_flat`) does not load ruamel.yaml, whose package loads all of
# it (about 1.3 MB resident and 18 ms). ``tests/unit/test_yaml_scalars.py`` holds each copy equal
# to ruamel's: its tag, pattern, flags and first characters, in ruamel's order.
#: (tag, pattern, flags, first characters; "" the empty scalar) of each YAML 1.2 resolver :data:`_CONVERTERS` reads.
IMPLICIT_12: Final[tuple[tuple[str, str, int, tuple[str, ...]], ...]] = (
    ("tag:yaml.org,2002:bool", """^(?:true|True|TRUE|false|False|FALSE)$""", re.X, tuple("tTfF")),
    (
        "tag:yaml.org,2002:float",
        """^(?:
         [-+]?(?:[0-9][0-9_]*)\\.[0-9_]*(?:[eE][-+]?[0-9]+)?
        |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
        |[-+]?\\.[0-9_]+(?:[eE][-+][0-9]+)?
        |[-+]?\\.(?:inf|Inf|INF)
        |\\.(?:nan|NaN|NAN))$""",
        re.X,
        tuple("-+0123456789."),
    ),
    (
        "tag:yaml.org,2002:int",
        """^(?:[-+]?0b[0-1_]+
        |[-+]?0o?[0-7_]+
        |[-+]?[0-9_]+
        |[-+]?0x[0-9a-fA-F_]+)$""",
        re.X,
        tuple("-+0123456789"),
    ),
    (
        "tag:yaml.org,2002:null",
        """^(?: ~
        |null|Null|NULL
        | )$""",
        re.X,
        ("~", "n", "N", ""),  # "" : an empty plain scalar is null
    ),
    (
        "tag:yaml.org,2002:timestamp",
        """^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
        |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
        (?:[Tt]|[ \\t]+)[0-9][0-9]?
        :[0-9][0-9] :[0-9][0-9] (?:\\.[0-9]*)?
        (?:[ \\t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""",
        re.X,
        tuple("0123456789"),
    ),
)
#: ruamel.yaml's ``timestamp_regexp``: a timestamp's parts, for ``create_timestamp``.
TIMESTAMP_PATTERN: Final = """^(?P<year>[0-9][0-9][0-9][0-9])
       -(?P<month>[0-9][0-9]?)
       -(?P<day>[0-9][0-9]?)
       (?:((?P<t>[Tt])|[ \\t]+)   # explictly not retaining extra spaces
       (?P<hour>[0-9][0-9]?)
       :(?P<minute>[0-9][0-9])
       :(?P<second>[0-9][0-9])
       (?:\\.(?P<fraction>[0-9]*))?
        (?:[ \\t]*(?P<tz>Z|(?P<tz_sign>[-+])(?P<tz_hour>[0-9][0-9]?)
       (?::(?P<tz_minute>[0-9][0-9]))?))?)?$"""


def _to_int(s: str) -> int:
    v = s.replace("_", "")
    sign = -1 if v[0] == "-" else 1
    if v[0] in "+-":
        v = v[1:]
    for prefix, base in (("0b", 2), ("0x", 16), ("0o", 8)):
        if v.startswith(prefix):
            return sign * int(v[2:], base)
    return sign * int(v)


def _to_float(s: str) -> float | str:
    v = s.replace("_", "").lower()
    sign = -1 if v[0] == "-" else 1
    if v[0] in "+-":
        v = v[1:]
    value = math.nan if v == ".nan" else math.inf if v == ".inf" else float(v)
    return float_value(sign * value)


def float_value(value: float) -> float | str:
    """Non-finite floats are not JSON; keep them as the YAML spelling instead."""
    if math.isfinite(value):
        return value
    return ".nan" if math.isnan(value) else ".inf" if value > 0 else "-.inf"


_timestamp_match: Callable[[str], re.Match[str] | None] = re.compile(TIMESTAMP_PATTERN, re.X).match


def _to_timestamp(s: str) -> str:
    match = _timestamp_match(s)
    if match is None:
        return s
    parts = match.groupdict()
    try:
        if parts["hour"] is None:  # a date alone, the usual case: ruamel.yaml makes it the same way
            return datetime.date(int(parts["year"]), int(parts["month"]), int(parts["day"])).isoformat()
        from ruamel.yaml.util import create_timestamp  # a time of day: ruamel.yaml's own rules, loaded then

        return create_timestamp(**parts).isoformat()
    except ValueError:  # 2023-02-30 and friends stay as written
        return s


_CONVERTERS: dict[str, Callable[[str], Any]] = {
    "tag:yaml.org,2002:bool": lambda s: s.lower() == "true",
    "tag:yaml.org,2002:float": _to_float,
    "tag:yaml.org,2002:int": _to_int,
    "tag:yaml.org,2002:null": lambda s: None,
    "tag:yaml.org,2002:timestamp": _to_timestamp,
}
# ruamel.yaml's own YAML 1.2 implicit resolvers, by first character, in ruamel's order. A plain
# "<<" or "=" stays a string (ruamel keeps those as tagged strings); a "<<" key is a merge key,
# which the walk leaves to the careful path.
_RESOLVERS: dict[str, list[tuple[Callable[[str], Any], Callable[[str], Any]]]] = {}
for _tag, _pattern, _flags, _firsts in IMPLICIT_12:
    _match = re.compile(_pattern, _flags).match
    for _first in _firsts:
        _RESOLVERS.setdefault(_first, []).append((_match, _CONVERTERS[_tag]))

#: The first characters of the plain scalars YAML may read as something other than a string.
TYPED_FIRST: Final = frozenset(_RESOLVERS)


def resolve_plain(s: str) -> Any:
    """The value of an untagged plain scalar under YAML 1.2 core, as ruamel.yaml reads it."""
    for match, convert in _RESOLVERS.get(s[:1], ()):
        if match(s):
            return convert(s)
    return s


def key_string(key: Any) -> str:
    """A mapping key as a string: its JSON spelling when it is not one already."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool):
        return "null" if key is None else "true" if key else "false"
    if isinstance(key, float):
        value = float_value(key)
        return value if isinstance(value, str) else repr(value)
    return str(key)
