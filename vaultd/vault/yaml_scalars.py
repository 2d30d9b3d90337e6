"""Plain YAML scalars under the YAML 1.2 core schema, resolved exactly as ruamel.yaml resolves them.

The frontmatter reader's fast path resolves the scalars libyaml leaves untyped with these rules,
and the writer asks them whether a string would read back as itself when written plain; both must
agree with ruamel.yaml, the reference view, so the rules are ruamel's own implicit resolvers (only
``true`` and ``false`` are booleans, ``012`` is the integer 12, ``1e3`` is a float).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Final

from ruamel.yaml.resolver import implicit_resolvers
from ruamel.yaml.util import create_timestamp, timestamp_regexp

if TYPE_CHECKING:
    import re
    from collections.abc import Callable

_YAML12: Final = (1, 2)


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


# ruamel.yaml's patterns are lazy wrappers that look the compiled pattern up at every use; the
# compiled patterns' ``match`` are taken once.
_timestamp_match: Callable[[str], re.Match[str] | None] = timestamp_regexp.match


def _to_timestamp(s: str) -> str:
    match = _timestamp_match(s)
    if match is None:
        return s
    try:
        return create_timestamp(**match.groupdict()).isoformat()
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
for _versions, _tag, _regexp, _firsts in implicit_resolvers:
    if _YAML12 in _versions and _tag in _CONVERTERS:
        for _first in _firsts:
            _RESOLVERS.setdefault(_first, []).append((_regexp.match, _CONVERTERS[_tag]))

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
