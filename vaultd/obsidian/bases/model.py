"""A ``.base`` file as data: global filters, formulas, property display names, summaries and
views, read from YAML that has already passed the bounds of :mod:`vaultd.vault.yaml_bounds`.

Only what changes which rows a view returns, and in what order, is kept; display-only keys of a
view (column sizes, card images, map coordinates) are accepted and left alone. A key of the wrong
shape is refused with where it stands (``views[1].sort[0].direction``), so a Base is evaluated as
written or not at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

import yaml  # type: ignore[import-untyped]

from vaultd.obsidian.bases.expr import ExprError, Node, parse
from vaultd.vault.yaml_bounds import YamlRefused, load_base

__all__ = [
    "Base",
    "BaseInvalid",
    "Expression",
    "Filter",
    "SortKey",
    "View",
    "base_blocks",
    "load",
    "read_base",
]

MAX_BASE_CHARS: Final = 1_000_000  #: the YAML of one Base
MAX_VIEWS: Final = 100
MAX_FORMULAS: Final = 500
MAX_FILTER_NODES: Final = 2_000  #: statements and and/or/not groups in one Base's filters
_FENCE: Final = re.compile(r"^( {0,3})(`{3,}|~{3,})[ \t]*base[ \t]*$")


class BaseInvalid(ValueError):
    """The Base cannot be evaluated as written: the message says where and why."""


@dataclass(frozen=True, slots=True)
class Expression:
    """One expression with where it was written, for errors (``formulas.ppu``)."""

    where: str
    text: str
    node: Node


@dataclass(frozen=True, slots=True)
class Filter:
    """An and/or/not group of statements; a bare statement is ``Filter("and", (expr,))``."""

    op: str  #: "and", "or", "not" (true when none of its items is)
    items: tuple[Filter | Expression, ...]


@dataclass(frozen=True, slots=True)
class SortKey:
    property: str
    descending: bool


@dataclass(frozen=True, slots=True)
class View:
    type: str
    name: str
    order: tuple[str, ...]
    sort: tuple[SortKey, ...]
    group_by: SortKey | None
    limit: int | None
    filters: Filter | None
    summaries: dict[str, str]


@dataclass(frozen=True, slots=True)
class Base:
    filters: Filter | None
    formulas: dict[str, Expression]
    display_names: dict[str, str]  #: property id (``note.x``, ``file.x``, ``formula.x``) -> shown name
    summaries: dict[str, Expression]  #: custom summaries: name -> expression over ``values``
    views: tuple[View, ...] = field(default=())

    def view(self, name: str | None) -> View:
        """The view named ``name``, or the first; a Base without views has one table of every
        column it names."""
        if not self.views:
            if name is not None:
                raise BaseInvalid(f"the Base has no views, so none named {name!r}")
            return View("table", "Table", (), (), None, None, None, {})
        if name is None:
            return self.views[0]
        for view in self.views:
            if view.name == name:
                return view
        raise BaseInvalid(f"no view named {name!r} (views: {', '.join(v.name for v in self.views)})")


def property_id(text: str) -> str:
    """``status`` and ``note.status`` name one property; the canonical id has its prefix."""
    head, dot, _rest = text.partition(".")
    if dot and head in ("note", "file", "formula"):
        return text
    return f"note.{text}"


def _expression(where: str, value: Any) -> Expression:
    if isinstance(value, bool) or value is None:
        text = "true" if value is True else "false" if value is False else "null"
    elif isinstance(value, int | float | str):
        text = str(value)
    else:
        raise BaseInvalid(f"{where}: an expression must be text, not {type(value).__name__}")
    try:
        return Expression(where, text, parse(text))
    except ExprError as exc:
        raise BaseInvalid(f"{where}: {exc}") from None


def _filter(where: str, value: Any, budget: list[int]) -> Filter:
    budget[0] -= 1
    if budget[0] < 0:
        raise BaseInvalid(f"{where}: the filters hold more than {MAX_FILTER_NODES} statements")
    if isinstance(value, str | int | float | bool):
        return Filter("and", (_expression(where, value),))
    if not isinstance(value, dict) or len(value) != 1:
        raise BaseInvalid(f"{where}: a filter is a statement or a mapping with one key: and, or, not")
    ((op, items),) = value.items()
    if op not in ("and", "or", "not"):
        raise BaseInvalid(f"{where}: unknown filter group {op!r} (and, or, not)")
    if not isinstance(items, list):
        items = [items]
    parts: list[Filter | Expression] = []
    for i, item in enumerate(items):
        inner = f"{where}.{op}[{i}]"
        if isinstance(item, dict):
            parts.append(_filter(inner, item, budget))
        else:
            budget[0] -= 1
            if budget[0] < 0:
                raise BaseInvalid(f"{inner}: the filters hold more than {MAX_FILTER_NODES} statements")
            parts.append(_expression(inner, item))
    return Filter(op, tuple(parts))


def _text(where: str, value: Any) -> str:
    if not isinstance(value, str | int | float):
        raise BaseInvalid(f"{where}: expected text")
    return str(value)


def _sort_key(where: str, value: Any) -> SortKey:
    if isinstance(value, str):
        return SortKey(property_id(value), False)
    if not isinstance(value, dict) or "property" not in value:
        raise BaseInvalid(f"{where}: expected a mapping with a property")
    direction = str(value.get("direction", "ASC")).upper()
    if direction not in ("ASC", "DESC"):
        raise BaseInvalid(f"{where}.direction: ASC or DESC, not {value.get('direction')!r}")
    return SortKey(property_id(_text(f"{where}.property", value["property"])), direction == "DESC")


def _mapping(where: str, value: Any) -> dict[Any, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BaseInvalid(f"{where}: expected a mapping")
    return value


def _view(where: str, value: Any, budget: list[int]) -> View:
    data = _mapping(where, value)
    order = data.get("order") or []
    if not isinstance(order, list):
        raise BaseInvalid(f"{where}.order: expected a list")
    sort = data.get("sort") or []
    if not isinstance(sort, list):
        raise BaseInvalid(f"{where}.sort: expected a list")
    group = data.get("groupBy")
    limit = data.get("limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise BaseInvalid(f"{where}.limit: expected a whole number of 0 or more")
    filters = data.get("filters")
    summaries = _mapping(f"{where}.summaries", data.get("summaries"))
    return View(
        type=_text(f"{where}.type", data.get("type", "table")),
        name=_text(f"{where}.name", data.get("name", data.get("type", "table"))),
        order=tuple(property_id(_text(f"{where}.order[{i}]", p)) for i, p in enumerate(order)),
        sort=tuple(_sort_key(f"{where}.sort[{i}]", s) for i, s in enumerate(sort)),
        group_by=None if group is None else _sort_key(f"{where}.groupBy", group),
        limit=limit,
        filters=None if filters is None else _filter(f"{where}.filters", filters, budget),
        summaries={property_id(_text(f"{where}.summaries", k)): _text(f"{where}.summaries.{k}", v) for k, v in summaries.items()},
    )


def load(data: Any) -> Base:
    """The Base of a YAML document (already loaded).

    Raises:
        BaseInvalid: a key has the wrong shape, or an expression does not parse.
    """
    root = _mapping("the Base", data)
    budget = [MAX_FILTER_NODES]
    formulas = _mapping("formulas", root.get("formulas"))
    if len(formulas) > MAX_FORMULAS:
        raise BaseInvalid(f"formulas: more than {MAX_FORMULAS}")
    properties = _mapping("properties", root.get("properties"))
    names: dict[str, str] = {}
    for key, spec in properties.items():
        if isinstance(spec, dict) and "displayName" in spec:
            names[property_id(str(key))] = _text(f"properties.{key}.displayName", spec["displayName"])
    views = root.get("views") or []
    if not isinstance(views, list):
        raise BaseInvalid("views: expected a list")
    if len(views) > MAX_VIEWS:
        raise BaseInvalid(f"views: more than {MAX_VIEWS}")
    filters = root.get("filters")
    return Base(
        filters=None if filters is None else _filter("filters", filters, budget),
        formulas={str(k): _expression(f"formulas.{k}", v) for k, v in formulas.items()},
        display_names=names,
        summaries={str(k): _expression(f"summaries.{k}", v) for k, v in _mapping("summaries", root.get("summaries")).items()},
        views=tuple(_view(f"views[{i}]", v, budget) for i, v in enumerate(views)),
    )


def read_base(text: str) -> Base:
    """The Base written as YAML in ``text``, read within the YAML bounds.

    Raises:
        BaseInvalid: over a bound, not YAML, or not a Base.
    """
    if len(text) > MAX_BASE_CHARS:
        raise BaseInvalid(f"the Base is longer than {MAX_BASE_CHARS} characters")
    try:
        data = load_base(text)
    except YamlRefused as exc:
        where = f" (line {exc.line + 1})" if exc.line is not None else ""
        raise BaseInvalid(f"the Base {exc}{where}") from None
    except (yaml.YAMLError, ValueError, RecursionError) as exc:  # the text is not YAML
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise BaseInvalid(f"the Base is not valid YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    if data is None:
        data = {}
    return load(data)


def base_blocks(text: str) -> list[str]:
    """The bodies of the ```` ```base ```` blocks in a note, in order."""
    blocks: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        opened = _FENCE.match(lines[i].rstrip("\r"))
        if opened is None:
            i += 1
            continue
        fence = opened.group(2)
        body: list[str] = []
        i += 1
        while i < len(lines):
            line = lines[i].rstrip("\r")
            stripped = line.lstrip(" ")
            if len(line) - len(stripped) <= 3 and stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
                break
            body.append(line)
            i += 1
        blocks.append("\n".join(body))
        i += 1
    return blocks
