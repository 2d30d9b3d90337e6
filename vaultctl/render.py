"""Text for people: tables with uppercase headers, objects as a title and aligned fields, checks
as LEVEL/CHECK/FINDING rows with a verdict. ``--json`` bypasses all of this.

Everything here builds raw text; :func:`say` escapes it on the way out (see
:mod:`vaultctl.terminal`), and column widths are measured on the escaped form so tables still line
up when a cell holds an escaped control character.
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

import msgspec

from vaultctl.terminal import escape, escape_json


def to_builtins(value: Any) -> Any:
    return msgspec.to_builtins(value)


def json_line(value: Any) -> str:
    """Compact JSON that decodes to ``value`` exactly and carries no raw terminal control."""
    return escape_json(msgspec.json.encode(value).decode())


def say(text: str, *, file: TextIO | None = None, multiline: bool = True, reversible: bool = True) -> None:
    """Print text for a person, every terminal-active character escaped (see :func:`escape`)."""
    print(escape(text, multiline=multiline, reversible=reversible), file=file or sys.stdout)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(_cell(v) for v in value) or "-"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value).replace("\n", " ")


def width(text: str) -> int:
    """Columns a terminal gives ``text`` once escaped: East Asian wide and fullwidth characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in escape(text, multiline=True))


def _pad(text: str, columns: int) -> str:
    return text + " " * (columns - width(text))


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    cells = [[_cell(v) for v in row] for row in rows]
    heads = [h.upper() for h in headers]
    widths = [max([width(h)] + [width(r[i]) for r in cells]) for i, h in enumerate(heads)]
    lines = ["  ".join(_pad(h, w) for h, w in zip(heads, widths, strict=True)).rstrip()]
    lines += ["  ".join(_pad(c, w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join(lines)


def fields(title: str, items: Sequence[tuple[str, Any]]) -> str:
    width = max((len(k) for k, _ in items), default=0)
    return "\n".join([title, *(f"  {k.ljust(width)}  {_cell(v)}" for k, v in items)])


def checks(findings: Sequence[Any], verdict: str) -> str:
    body = table(["level", "check", "finding"], [(f.level, f.check, f.finding) for f in findings])
    return f"{body}\n\nverdict: {verdict}"
