"""``--set`` values: ``key=value`` for a string, ``key:=JSON`` for any JSON value, or a JSON object.

The ``=`` / ``:=`` pair is HTTPie's: what a shell user types most (a string) needs no quoting
beyond the shell's, and numbers, booleans, lists and null are still one ``:=`` away, so
``status=done`` never turns into something else by accident (``year=2024`` stays the string
"2024"; ``year:=2024`` is the number).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence


class BadAssignment(ValueError):
    """A ``--set`` value that is none of the three forms; the message says which and why."""


def parse(values: Sequence[str], flag: str = "--set") -> dict[str, Any]:
    """Merge every ``--set`` into one mapping of keys to values.

    Raises:
        BadAssignment: a value has no ``=``, an empty key, bad JSON, or sets a key twice.
    """
    merged: dict[str, Any] = {}

    def put(key: str, value: Any) -> None:
        if key in merged:
            raise BadAssignment(f"{flag} sets {key!r} twice")
        merged[key] = value

    for raw in values:
        if raw.lstrip().startswith("{"):
            try:
                data = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise BadAssignment(f"{flag} {raw!r} is not a valid JSON object: {exc.msg}") from exc
            if not isinstance(data, dict):
                raise BadAssignment(f"{flag} {raw!r} is not a JSON object")
            for key, value in data.items():
                put(key, value)
            continue
        key, eq, value = raw.partition("=")
        typed = key.endswith(":")
        key = key.removesuffix(":").strip()
        if not eq or not key:
            raise BadAssignment(f"{flag} takes key=value, key:=JSON or a JSON object, not {raw!r}")
        if typed:
            try:
                put(key, json.loads(value))
            except json.JSONDecodeError as exc:
                raise BadAssignment(f"{flag} {key}:= needs a JSON value ({exc.msg}); for a string use {key}=...") from exc
        else:
            put(key, value)
    return merged
