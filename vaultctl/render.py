"""Text for people: tables with uppercase headers, objects as a title and aligned fields, checks
as LEVEL/CHECK/FINDING rows with a verdict. ``--json`` bypasses all of this.

Text is escaped on the way out by :func:`say` (see :mod:`vaultctl.terminal`), except tables and
fields: each cell is one value, so it is escaped as one line (a tab or newline in a file name
shows as ``\\x09`` or ``\\x0a`` and cannot break the layout), and the result is
:class:`~vaultctl.terminal.Escaped`, which ``say`` prints as it is. Column widths are measured on
the escaped cells, so tables line up when a cell holds an escaped control character.
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

import msgspec

from vaultctl.terminal import SGR, Escaped, compose, escape, escape_json


def to_builtins(value: Any) -> Any:
    return msgspec.to_builtins(value)


def json_line(value: Any) -> str:
    """Compact JSON that decodes to ``value`` exactly and carries no raw terminal control."""
    return escape_json(msgspec.json.encode(value).decode())


def say(text: str, *, file: TextIO | None = None, multiline: bool = True, reversible: bool = True) -> None:
    """Print text for a person, every terminal-active character escaped (see :func:`escape`);
    :class:`Escaped` text is printed as it is."""
    print(escape(text, multiline=multiline, reversible=reversible), file=file or sys.stdout)


def _cell(value: Any) -> str:
    if isinstance(value, Escaped):
        return value  # escaped already, perhaps styled (its width is measured without the styling)
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(_cell(v) for v in value) or "-"
    if isinstance(value, float):
        return f"{value:.3g}"
    return escape(str(value))  # one value, one line: tabs and newlines escaped too


def _columns(shown: str) -> int:
    if "\x1b" in shown:
        shown = SGR.sub("", shown)
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in shown)


def width(text: str) -> int:
    """Columns a terminal gives ``text`` once escaped: East Asian wide and fullwidth characters take two."""
    return _columns(escape(text, multiline=True))


def _pad(shown: str, columns: int) -> str:
    return shown + " " * (columns - _columns(shown))


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> Escaped:
    cells = [[_cell(v) for v in row] for row in rows]
    heads = [escape(h.upper()) for h in headers]
    widths = [max([_columns(h)] + [_columns(r[i]) for r in cells]) for i, h in enumerate(heads)]
    lines = ["  ".join(_pad(h, w) for h, w in zip(heads, widths, strict=True)).rstrip()]
    lines += ["  ".join(_pad(c, w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return Escaped("\n".join(lines))


def fields(title: str, items: Sequence[tuple[str, Any]]) -> Escaped:
    width = max((len(k) for k, _ in items), default=0)
    return Escaped("\n".join([escape(title), *(f"  {escape(k).ljust(width)}  {_cell(v)}" for k, v in items)]))


def checks(findings: Sequence[Any], verdict: str) -> Escaped:
    body = table(["level", "check", "finding"], [(f.level, f.check, f.finding) for f in findings])
    return body + f"\n\nverdict: {verdict}"


__all__ = ["Escaped", "checks", "compose", "fields", "json_line", "say", "table", "to_builtins", "width"]
