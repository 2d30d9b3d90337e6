"""The shim's numeric settings from the environment: a bad value falls back, a wild one is clamped.

A host passes whatever its user wrote in its config; a typo there must not stop the server, so
an unparsable value means the default and an out-of-range one the nearest bound.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping


def bounded_int(environ: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    try:
        value = int(environ.get(name, ""))
    except ValueError:
        return default
    return min(max(value, low), high)
