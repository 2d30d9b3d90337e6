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
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TextIO

import msgspec

from vaultctl import display, layout
from vaultctl.terminal import Escaped, compose, escape, escape_json


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


def width(text: str) -> int:
    """Columns a terminal gives ``text`` once escaped: East Asian wide and fullwidth characters take two."""
    return layout.columns(escape(text, multiline=True))


Tint = Callable[[str], display.Paint | None]  #: a cell's text -> its colour, or None


def table(
    headers: Sequence[str], rows: Iterable[Sequence[Any]], *, limit: int | None = None, tints: Mapping[int, Tint] | None = None
) -> Escaped:
    """Aligned columns under uppercase headers, fitted to ``limit`` columns (default: the
    terminal's, see :func:`vaultctl.display.width`): the widest columns wrap first, each cell on
    as many lines as it needs. Piped output without ``$COLUMNS`` is not wrapped. ``tints``
    colours the cells of a column (on a terminal that shows colour) after the layout is done."""
    cells = [[_cell(v) for v in row] for row in rows]
    heads = [escape(h.upper()) for h in headers]
    natural = [max([layout.columns(h)] + [layout.columns(r[i]) for r in cells]) for i, h in enumerate(heads)]
    fit = limit if limit is not None else display.width()
    widths = natural if fit is None else layout.share(natural, [layout.floor(h, n) for h, n in zip(heads, natural, strict=True)], fit)
    on = bool(tints) and display.colour()
    lines = [_line(heads, widths, [display.Paint.BOLD] * len(heads) if on else None)]
    for row in cells:
        paints = [(tints or {}).get(i, _plain)(c) for i, c in enumerate(row)] if on else None
        wrapped = [layout.wrap(c, w) for c, w in zip(row, widths, strict=True)]
        for k in range(max(len(w) for w in wrapped)):
            lines.append(_line([w[k] if k < len(w) else "" for w in wrapped], widths, paints))
    return Escaped("\n".join(lines))


def _plain(_text: str) -> display.Paint | None:
    return None


def _line(cells: Sequence[str], widths: Sequence[int], paints: Sequence[display.Paint | None] | None = None) -> str:
    padded = [layout.pad(c, w) for c, w in zip(cells, widths, strict=True)]
    if paints is not None:
        padded = [display.paint(c, p, True) if p is not None else c for c, p in zip(padded, paints, strict=True)]
    return "  ".join(padded).rstrip()


def painted(text: str, style: display.Paint, on: bool | None = None) -> Escaped:
    """``text`` escaped, then coloured when ``on`` (default: when stdout shows colour)."""
    return Escaped(display.paint(escape(text, multiline=True), style, display.colour() if on is None else on))


def fields(title: str, items: Sequence[tuple[str, Any]], *, limit: int | None = None) -> Escaped:
    """A title and its ``key  value`` lines, keys aligned; a long value wraps under itself."""
    keys = max((layout.columns(escape(k)) for k, _ in items), default=0)
    fit = limit if limit is not None else display.width()
    lines = [escape(title)]
    for key, value in items:
        head = f"  {layout.pad(escape(key), keys)}  "
        parts = layout.wrap(_cell(value), fit - len(head)) if fit is not None and fit - len(head) >= layout.MIN_COLUMN else [_cell(value)]
        lines.append(head + parts[0])
        lines += [" " * len(head) + p for p in parts[1:]]
    return Escaped("\n".join(lines))


_LEVELS = {"ok": display.Paint.OK, "warn": display.Paint.WARN, "fail": display.Paint.FAIL}


def level_tint(text: str) -> display.Paint | None:
    """The colour of a check's level (ok, warn, fail)."""
    return _LEVELS.get(text.strip())


def checks(findings: Sequence[Any], verdict: str) -> Escaped:
    body = table(["level", "check", "finding"], [(f.level, f.check, f.finding) for f in findings], tints={0: level_tint})
    shown = display.paint(escape(str(verdict)), level_tint(str(verdict)) or display.Paint.BOLD, display.colour())
    return body + Escaped(f"\n\nverdict: {shown}")


__all__ = ["Escaped", "checks", "compose", "fields", "json_line", "level_tint", "painted", "say", "table", "to_builtins", "width"]
