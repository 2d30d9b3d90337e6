"""A flat frontmatter header read line by line, without a YAML parser, or declined.

Most headers are flat: a key per line and a scalar, a quoted string or a list of scalars as its
value (``title: x``, ``created: 2024-01-02``, ``tags: [a, b]``, ``aliases:`` then ``- "A"``
lines). Reading one with libyaml's composer and a walk of its nodes costs about 35 µs a note,
most of it building nodes; reading its lines with string methods costs a fraction of that, and a
cold build reads up to 100,000 headers.

:func:`load_flat` reads only what it can vouch for and answers None (declines) for anything
else: a comment, a tab, a carriage return, a character YAML does not print, an anchor, alias,
tag or block scalar, a nested or multi-line value, a flow mapping, a key that is not a plain
string, a repeated key, a value holding ``: `` or `` #``, more values than the YAML bound. A
declined header goes the usual way (:func:`vaultd.vault.frontmatter.load_header`), which alone
reports issues; the data this module gives is the data that way gives (plain scalars resolved
by the same YAML 1.2 core rules, :func:`~vaultd.vault.yaml_scalars.resolve_plain`), and a
hypothesis test holds the two together.
"""

from __future__ import annotations

from typing import Any, Final

from protocol.parse_limits import MAX_YAML_NODES
from vaultd.vault.yaml_scalars import TYPED_FIRST, resolve_plain

__all__ = ["load_flat"]

#: Characters that give a YAML value another meaning when it starts with one of them.
_INDICATORS: Final = frozenset("-?:,[]{}#&*!|>'\"%@`")
#: Characters a flow-list item may not hold (they end it, quote it or start a comment).
_FLOW_SPECIAL: Final = frozenset("[]{},#'\"")


#: Plain scalars YAML may read as a number, a date, a boolean or null, by their text: a vault
#: repeats its dates, numbers and keys from note to note. Values are immutable; kept up to a bound.
_RESOLVED: dict[str, Any] = {}
_RESOLVED_MAX: Final = 4096
_RESOLVED_LONGEST: Final = 40  #: longer text is resolved each time (a timestamp is 35 characters)


def _resolve(text: str) -> Any:
    if text[0] not in TYPED_FIRST:
        return text  # no YAML 1.2 core rule starts with this character
    try:
        return _RESOLVED[text]
    except KeyError:
        value = resolve_plain(text)
    if len(text) <= _RESOLVED_LONGEST:
        if len(_RESOLVED) >= _RESOLVED_MAX:
            _RESOLVED.clear()
        _RESOLVED[text] = value
    return value


def _plain(text: str) -> Any:
    """A plain scalar's value; raises ValueError when it is not one this reader vouches for."""
    first = text[0]
    if first in _INDICATORS and not (first == "-" and len(text) > 1 and (text[1].isdigit() or text[1] == ".")):
        raise ValueError(text)
    if ": " in text or " #" in text or text[-1] == ":":
        raise ValueError(text)
    return _resolve(text)


def _scalar(text: str) -> Any:
    """A one-line value: a quoted string without escapes, or a plain scalar."""
    first = text[0]
    if first == '"' or first == "'":
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != first or first in inner or (first == '"' and "\\" in inner):
            raise ValueError(text)
        return inner
    return _plain(text)


def _flow_list(text: str) -> list[Any]:
    """``[a, b, 3]``: plain items only, none empty."""
    inner = text[1:-1]
    if not inner.strip(" "):
        return []
    items = []
    for raw in inner.split(","):
        item = raw.strip(" ")
        if not item or not _FLOW_SPECIAL.isdisjoint(item):
            raise ValueError(text)
        items.append(_plain(item))
    return items


def load_flat(header: str) -> dict[str, Any] | None:
    """The header's data when it is flat (see the module docstring); None to decline."""
    if "\r" in header or "\t" in header:
        return None
    out: dict[str, Any] = {}
    nodes = 1
    key: str | None = None  #: the key whose empty value a block list may follow
    items: list[Any] | None = None  #: that block list, once its first item is read
    indent = 0
    try:
        for line in header.split("\n"):
            if not line:
                key = None  # a list does not go on past a blank line here
                continue
            if not line.isprintable():
                return None
            first = line[0]
            if first == " " or first == "-":
                if key is None:
                    return None
                dash = len(line) - len(line.lstrip(" "))
                if line[dash : dash + 2] != "- " or (items is not None and dash != indent):
                    return None
                value = line[dash + 2 :].strip(" ")
                if not value or value[0] == "[":
                    return None
                if items is None:
                    items, indent = [], dash
                    out[key] = items
                items.append(_scalar(value))
                nodes += 1
                continue
            colon = line.find(":")
            name, rest = line[:colon], line[colon + 1 :]
            if colon <= 0 or (rest and rest[0] != " ") or not (first.isalnum() or first == "_"):
                return None
            if name[-1] == " " or "#" in name or not _FLOW_SPECIAL.isdisjoint(name) or name in out:
                return None
            if _resolve(name) != name:
                return None  # a key YAML reads as a number, a boolean, null, or spelled otherwise
            value = rest.strip(" ")
            key, items = None, None
            nodes += 2
            if not value:
                out[name] = None
                key = name
            elif value[0] == "[" and value[-1] == "]":
                out[name] = parsed = _flow_list(value)
                nodes += len(parsed)
            else:
                out[name] = _scalar(value)
    except ValueError:
        return None
    return out if nodes <= MAX_YAML_NODES else None
