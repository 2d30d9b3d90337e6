"""Obsidian Bases, evaluated headless: a view's rows and summaries, and the Bases of a vault.

A Base is read from a ``.base`` file, from a ```` ```base ```` block inside a note, or given
inline as YAML; its views are evaluated over the index as Obsidian's table shows them. A note
private to the caller's channel is never a row, nor named by a link in one.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any

import msgspec

from protocol.methods.common import OptionalVault, Params, Result
from protocol.methods.reads import Cursor, Fresh
from protocol.methods.spec import Effect, MethodSpec, P, R, Trait, spec

MAX_BASE_ROWS = 5000  #: rows one page may hold
MAX_INLINE_BASE_CHARS = 256 * 1024  #: a Base sent inline as YAML


class RowFormat(enum.StrEnum):
    """How a page of rows is returned."""

    JSON = "json"  #: rows as structured values
    CSV = "csv"  #: also a CSV table in ``text``
    TSV = "tsv"  #: also a TSV table in ``text``
    MD = "md"  #: also a Markdown table in ``text``


BasePath = Annotated[
    str,
    msgspec.Meta(min_length=1, max_length=1024, description="A .base file, or a note with base code blocks (then give block)."),
]
InlineBase = Annotated[str, msgspec.Meta(max_length=MAX_INLINE_BASE_CHARS, description="A Base given inline as YAML, instead of path.")]
BlockNumber = Annotated[int, msgspec.Meta(ge=1, le=1000, description="Which base code block of the note, 1 for the first.")]
ViewName = Annotated[str, msgspec.Meta(min_length=1, max_length=512, description="The view's name; the first view when absent.")]


class BaseQueryParams(Params):
    path: BasePath | None = None
    yaml: InlineBase | None = None
    block: BlockNumber | None = None
    view: ViewName | None = None
    format: Annotated[RowFormat, msgspec.Meta(description="json, or csv, tsv or md to have the page also as text.")] = RowFormat.JSON
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_BASE_ROWS, description="At most this many rows in this page.")] = 200
    cursor: Cursor | None = None
    vault: OptionalVault = None
    fresh: Fresh = False


class BaseColumn(msgspec.Struct, kw_only=True):
    id: str  #: ``note.status``, ``file.name``, ``formula.ppu``
    name: str  #: its display name in the Base


class BaseRow(msgspec.Struct, kw_only=True):
    path: str
    values: dict[str, Any]  #: column id -> value (dates as ISO text, links as [[target]], durations in milliseconds)
    group: Any = None  #: the row's group key when the view is grouped


class BaseGroup(msgspec.Struct, kw_only=True):
    key: Any
    rows: int
    summaries: dict[str, Any]


class BaseQueryResult(Result):
    base: str | None  #: the .base file or note the Base came from; None when given inline
    view: str
    type: str  #: the view's type in the Base (table, cards, list, map); rows are the same for each
    columns: list[BaseColumn]
    rows: list[BaseRow]  #: this page, in the view's order
    total: int  #: rows the filters kept, before the view's limit
    returned: int  #: rows after the view's limit, over every page
    groups: list[BaseGroup] | None  #: when the view is grouped: each group, with its summaries
    summaries: dict[str, Any]  #: column id -> summary over every returned row
    text: str | None = None  #: this page as CSV, TSV or Markdown, when asked
    next_cursor: str | None = None


class BaseListParams(Params):
    vault: OptionalVault = None
    fresh: Fresh = False


class BaseViewInfo(msgspec.Struct, kw_only=True):
    name: str
    type: str


class BaseInfo(msgspec.Struct, kw_only=True):
    path: str
    views: list[BaseViewInfo]
    error: str | None = None  #: why the file cannot be evaluated, when it cannot


class BaseListResult(Result):
    bases: list[BaseInfo]


def _read(name: str, params: type[P], result: type[R], summary: str) -> MethodSpec[P, R]:
    return spec(name, params, result, summary, Effect.READ, Trait.MCP)


QUERY = _read(
    "base.query",
    BaseQueryParams,
    BaseQueryResult,
    "Run a view of an Obsidian Base (a .base file, a ```base block in a note, or inline YAML): rows with the view's columns "
    "and formulas, groups and summaries, as Obsidian shows them. INVALID for an expression vaultd does not evaluate (named, "
    "with line and column); LIMIT when the evaluation passes its step or time budget.",
)
LIST = _read("base.list", BaseListParams, BaseListResult, "The .base files of the vault, with their views.")
SPECS = (QUERY, LIST)
