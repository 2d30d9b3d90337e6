"""A view's rows as text: CSV, TSV or a Markdown table, one column per property in the view's
order (headed by its display name), after a first column naming the file, and a group column
when the view is grouped. Cells hold the text Obsidian's table shows (see
:func:`vaultd.obsidian.bases.values.display`)."""

from __future__ import annotations

import csv
import io
from typing import TYPE_CHECKING

from vaultd.obsidian.bases.values import display

if TYPE_CHECKING:
    from vaultd.obsidian.bases.engine import QueryResult, Row

__all__ = ["render"]


def _table(result: QueryResult, rows: list[Row]) -> tuple[list[str], list[list[str]]]:
    head = ["path"] + (["group"] if result.grouped else []) + [name for _prop, name in result.columns]
    body = [
        [row.path] + ([display(row.group)] if result.grouped else []) + [display(row.values.get(prop)) for prop, _name in result.columns]
        for row in rows
    ]
    return head, body


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def render(result: QueryResult, rows: list[Row], form: str) -> str:
    """``rows`` (a page of ``result``) as ``csv``, ``tsv`` or ``md``."""
    head, body = _table(result, rows)
    if form == "md":
        lines = ["| " + " | ".join(_md_cell(h) for h in head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(_md_cell(c) for c in cells) + " |" for cells in body]
        return "\n".join(lines) + "\n"
    out = io.StringIO()
    if form == "tsv":
        for cells in [head, *body]:
            out.write("\t".join(c.replace("\t", " ").replace("\r", " ").replace("\n", " ") for c in cells) + "\n")
        return out.getvalue()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows([head, *body])
    return out.getvalue()
