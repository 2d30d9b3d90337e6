"""Running one view of a Base: the candidate files filtered (the Base's filters and the view's,
joined by and), sorted, grouped, cut at the view's limit, then the view's columns and summaries
computed for the rows kept. Expressions are compiled and run by :mod:`.engine`."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vaultd.obsidian.bases.engine import BaseFailed, Budget, BudgetExceeded, Engine, Scope
from vaultd.obsidian.bases.functions import equal
from vaultd.obsidian.bases.model import Base, BaseInvalid, Filter, View
from vaultd.obsidian.bases.summaries import SUMMARIES, empty, summary
from vaultd.obsidian.bases.values import sort_key, truthy

if TYPE_CHECKING:
    from collections.abc import Callable

    from vaultd.obsidian.bases.files import Universe

__all__ = ["QueryResult", "Row", "run_view"]


@dataclass(slots=True)
class Row:
    path: str
    values: dict[str, Any]
    group: Any = None


@dataclass(slots=True)
class QueryResult:
    columns: list[tuple[str, str]]  #: (property id, shown name)
    rows: list[Row]
    total: int  #: rows that passed the filters, before the view's limit
    grouped: bool
    groups: list[tuple[Any, int, dict[str, Any]]]  #: (key, rows, summaries) in view order
    summaries: dict[str, Any]  #: property id -> value over every returned row
    steps: int


def _filter_fn(engine: Engine, tree: Filter) -> Callable[[Scope], bool]:
    parts: list[Callable[[Scope], Any]] = [
        _filter_fn(engine, item) if isinstance(item, Filter) else engine.expression(item) for item in tree.items
    ]
    if tree.op == "and":
        if not parts:
            return lambda _s: True
        if len(parts) == 1:
            (only,) = parts
            return lambda s: truthy(only(s))
        if len(parts) == 2:
            first, second = parts

            def both(s: Scope) -> bool:
                a = first(s)
                if a is not True and (a is False or not truthy(a)):
                    return False
                b = second(s)
                return b is True or (b is not False and truthy(b))

            return both
        return lambda s: all(truthy(p(s)) for p in parts)
    if tree.op == "or":
        return lambda s: any(truthy(p(s)) for p in parts)
    return lambda s: not any(truthy(p(s)) for p in parts)


def _summaries(engine: Engine, view: View, rows: list[Row], custom: dict[str, Callable[[Scope], Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for prop, name in view.summaries.items():
        values = [row.values.get(prop) for row in rows]
        if name in custom:
            scope = Scope(engine.this or "", None, {"values": values})
            out[prop] = custom[name](scope)
        else:
            out[prop] = summary(name, values)
    return out


def run_view(
    base: Base,
    view_name: str | None,
    universe: Universe,
    *,
    now: dt.datetime | None = None,
    this: str | None = None,
    budget: Budget | None = None,
    paths: list[str] | None = None,
) -> QueryResult:
    """The rows of one view of ``base`` over ``universe``: filtered (the Base's filters and the
    view's, joined by and), sorted, grouped, cut at the view's limit, with the view's columns and
    summaries. ``paths`` are the candidate files (default: every file, notes and others, in path
    order); ``this`` is the file ``this`` names (the ``.base`` itself, or the note embedding it).

    Raises:
        BaseInvalid: the view or an expression cannot be evaluated as written.
        BaseFailed: a value met an expression it cannot work on, or the budget ran out.
    """
    budget = budget if budget is not None else Budget()
    engine = Engine(base, universe, budget, now if now is not None else dt.datetime.now(), this)
    view = base.view(view_name)
    order = list(view.order) or ["file.name"]
    for prop in view.summaries:
        if prop not in order:
            raise BaseInvalid(f"the view summarises {prop}, which is not one of its columns")
    names = set(SUMMARIES) | set(base.summaries)
    for prop, name in view.summaries.items():
        if name not in names:
            raise BaseInvalid(f"the view's summary of {prop} is {name!r}, neither a built-in summary nor one of the Base's")
    custom = {name: engine.expression(expr, frozenset({"values"})) for name, expr in base.summaries.items()}
    check = _filter_fn(engine, Filter("and", tuple(f for f in (base.filters, view.filters) if f is not None)))
    columns = {prop: engine.column(prop) for prop in order}
    sorts = [(engine.column(k.property), k.descending) for k in view.sort]
    group = (engine.column(view.group_by.property), view.group_by.descending) if view.group_by is not None else None

    candidates = paths if paths is not None else sorted([*universe.notes, *universe.files])
    kept: list[tuple[Scope, Row]] = []
    try:
        budget.charge(len(candidates))  # a step per candidate row, charged at once
        record_of = universe.notes.get
        for path in candidates:
            scope = Scope(path, record_of(path))
            if check(scope):
                kept.append((scope, Row(path=path, values={})))
        total = len(kept)
        kept.sort(key=lambda pair: (pair[0].path.casefold(), pair[0].path))
        for column, descending in reversed(sorts):
            keyed = [(column(s), s, r) for s, r in kept]
            present = [k for k in keyed if not empty(k[0])]
            absent = [k for k in keyed if empty(k[0])]
            present.sort(key=lambda k: sort_key(k[0]), reverse=descending)
            kept = [(s, r) for _v, s, r in present + absent]
        if group is not None:
            column, descending = group
            for s, r in kept:
                r.group = column(s)
            filled = [p for p in kept if not empty(p[1].group)]
            blank = [p for p in kept if empty(p[1].group)]
            filled.sort(key=lambda p: sort_key(p[1].group), reverse=descending)
            kept = filled + blank
        if view.limit is not None:
            kept = kept[: view.limit]
        for s, r in kept:
            r.values = {prop: fn(s) for prop, fn in columns.items()}
        rows = [r for _s, r in kept]
        groups: list[tuple[Any, int, dict[str, Any]]] = []
        if group is not None:
            runs: list[tuple[Any, list[Row]]] = []
            for row in rows:
                if runs and equal(runs[-1][0], row.group):
                    runs[-1][1].append(row)
                else:
                    runs.append((row.group, [row]))
            groups = [(key, len(members), _summaries(engine, view, members, custom)) for key, members in runs]
        summaries = _summaries(engine, view, rows, custom)
    except BudgetExceeded as exc:
        raise BaseFailed(str(exc), limit=True) from None
    except RecursionError:
        raise BaseFailed("the query nests too deeply to evaluate", limit=True) from None
    shown = [(prop, base.display_names.get(prop, prop.partition(".")[2] if prop.startswith("note.") else prop)) for prop in order]
    return QueryResult(
        columns=shown,
        rows=rows,
        total=total,
        grouped=group is not None,
        groups=groups,
        summaries=summaries,
        steps=budget.steps,
    )
