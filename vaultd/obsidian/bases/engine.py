"""Evaluating a Base's expressions over the index, one row at a time.

A pure function of the index it is given (:class:`~vaultd.obsidian.bases.files.Universe`): it
reads no file and writes none. Each expression is compiled once into Python closures and then run
per row, charging the query's :class:`Budget`; a construct the evaluator does not support is
refused when the Base is compiled, before any row is read, with where it stands.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import TYPE_CHECKING, Any, Final

from vaultd.obsidian.bases.expr import Binary, Call, ExprError, Ident, Index, ListLit, Literal, Member, Node, RegexLit, Unary, size
from vaultd.obsidian.bases.files import FILE_FIELDS, FileAccess, Universe, props
from vaultd.obsidian.bases.functions import (
    FILE_METHODS,
    LINK_METHODS,
    METHODS,
    EvalError,
    arith,
    compare,
    equal,
    escape_html,
    to_number,
    value_field,
    value_method,
)
from vaultd.obsidian.bases.model import Base, BaseInvalid, Expression
from vaultd.obsidian.bases.regex_guard import RegexRefused, compile_pattern
from vaultd.obsidian.bases.values import Date, Duration, FileRef, Link, Pattern, as_date, display, parse_duration, truthy

if TYPE_CHECKING:
    from collections.abc import Callable

    from vaultd.vault.model import NoteRecord

__all__ = ["GLOBALS", "MAX_QUERY_SECONDS", "MAX_STEPS", "BaseFailed", "Budget", "BudgetExceeded", "Engine", "Scope"]

GLOBALS: Final = frozenset(
    {"date", "duration", "escapeHTML", "file", "html", "icon", "image", "if", "link", "list", "max", "min", "now", "number", "today"}
)
_LAMBDA_METHODS: Final = frozenset({"filter", "map", "reduce"})


# -- the budget: every expression charges its size each time it runs, and every element a list
# method walks charges its body's size, so the count follows the real work; the clock is read
# every few thousand steps.

MAX_STEPS: Final = 20_000_000  #: nodes evaluated in one query: 2,000 per row at 10,000 rows
MAX_QUERY_SECONDS: Final = 10.0
_CLOCK_EVERY: Final = 4096


class BudgetExceeded(Exception):
    """The query passed its step or time budget; the message says which."""


class Budget:
    __slots__ = ("deadline", "max_steps", "next_clock", "steps")

    def __init__(self, max_steps: int = MAX_STEPS, seconds: float = MAX_QUERY_SECONDS) -> None:
        self.steps = 0
        self.max_steps = max_steps
        self.deadline = time.monotonic() + seconds
        self.next_clock = min(_CLOCK_EVERY, max_steps + 1)

    def charge(self, steps: int) -> None:
        self.steps += steps
        if self.steps >= self.next_clock:
            if self.steps > self.max_steps:
                raise BudgetExceeded(f"the query took more than {self.max_steps} evaluation steps")
            self.next_clock = min(self.steps + _CLOCK_EVERY, self.max_steps + 1)
            if time.monotonic() > self.deadline:
                raise BudgetExceeded("the query ran past its time budget")


class BaseFailed(Exception):
    """The query stopped: ``limit`` is True when it passed its budget, False when an expression
    met a value it cannot work on (the message names the expression, where in it, and the
    note)."""

    def __init__(self, message: str, *, limit: bool = False) -> None:
        super().__init__(message)
        self.limit = limit


class Scope:
    """One row while it is evaluated: its file, the formulas computed so far, the formulas being
    computed (a cycle is refused), and the names a list method or a summary binds. The maps are
    made when first needed: most rows are only filtered."""

    __slots__ = ("busy", "formulas", "path", "record", "vars")

    def __init__(self, path: str, record: NoteRecord | None, bound: dict[str, Any] | None = None) -> None:
        self.path = path
        self.record = record
        self.formulas: dict[str, Any] | None = None
        self.busy: set[str] | None = None
        self.vars: dict[str, Any] = bound if bound is not None else _NO_VARS


_NO_VARS: dict[str, Any] = {}  #: shared and never written: a lambda call replaces it with its own map


class Engine:
    def __init__(self, base: Base, universe: Universe, budget: Budget, now: dt.datetime, this: str | None) -> None:
        self.base = base
        self.u = universe
        self.budget = budget
        self.now = Date(now, True)
        self.today = Date(dt.datetime(now.year, now.month, now.day), False)
        self.this = this
        self.formulas: dict[str, Callable[[Scope], Any]] = {}
        self.files = FileAccess(universe, this)
        for name, expression in base.formulas.items():
            self.formulas[name] = self.expression(expression)

    # -- compiling ---------------------------------------------------------------------

    def expression(self, expression: Expression, bound: frozenset[str] = frozenset()) -> Callable[[Scope], Any]:
        try:
            inner = self.compile(expression.node, bound)
        except EvalError as exc:
            raise BaseInvalid(f"{expression.where}: {ExprError(exc.message, expression.text, exc.pos)}") from None
        cost = size(expression.node)
        charge = self.budget.charge

        def run(scope: Scope) -> Any:
            charge(cost)
            try:
                return inner(scope)
            except EvalError as exc:
                located = ExprError(exc.message, expression.text, exc.pos)
                raise BaseFailed(f"{expression.where}: {located} (in {scope.path})") from None

        return run

    def compile(self, node: Node, bound: frozenset[str]) -> Callable[[Scope], Any]:
        if isinstance(node, Literal):
            value = node.value
            return lambda _s: value
        if isinstance(node, RegexLit):
            try:
                pattern = Pattern(node.source, node.flags, compile_pattern(node.source, node.flags))
            except RegexRefused as exc:
                raise EvalError(f"the regular expression {exc}", node.pos) from None
            return lambda _s: pattern
        if isinstance(node, ListLit):
            items = [self.compile(i, bound) for i in node.items]
            return lambda s: [f(s) for f in items]
        if isinstance(node, Ident):
            return self.ident(node, bound)
        if isinstance(node, Member):
            return self.member(node, bound)
        if isinstance(node, Index):
            return self.index(node, bound)
        if isinstance(node, Call):
            return self.call(node, bound)
        if isinstance(node, Unary):
            operand = self.compile(node.operand, bound)
            if node.op == "!":
                return lambda s: not truthy(operand(s))
            pos = node.pos

            def negate(s: Scope) -> Any:
                v = operand(s)
                if v is None:
                    return None
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    if isinstance(v, Duration):
                        return v.scaled(-1)
                    raise EvalError(f"'-' does not apply to a {type(v).__name__}", pos)
                return -v

            return negate
        if isinstance(node, Binary):
            return self.binary(node, bound)
        raise EvalError(f"unsupported construct {type(node).__name__}", node.pos)

    def binary(self, node: Binary, bound: frozenset[str]) -> Callable[[Scope], Any]:
        left, right, op, pos = self.compile(node.left, bound), self.compile(node.right, bound), node.op, node.pos
        if op == "&&":
            return lambda s: (lambda a: right(s) if truthy(a) else a)(left(s))
        if op == "||":
            return lambda s: (lambda a: a if truthy(a) else right(s))(left(s))
        if op == "==":
            return lambda s: equal(left(s), right(s))
        if op == "!=":
            return lambda s: not equal(left(s), right(s))
        if op in ("<", "<=", ">", ">="):
            wanted = {"<": (-1,), "<=": (-1, 0), ">": (1,), ">=": (1, 0)}[op]

            def ordered(s: Scope) -> bool:
                return compare(left(s), right(s)) in wanted

            return ordered

        def arithmetic(s: Scope) -> Any:
            try:
                return arith(op, left(s), right(s))
            except EvalError as exc:
                raise EvalError(exc.message, pos) from None

        return arithmetic

    def ident(self, node: Ident, bound: frozenset[str]) -> Callable[[Scope], Any]:
        name = node.name
        if name in bound:
            return lambda s: s.vars.get(name)
        if name == "file":
            return lambda s: FileRef(s.path)
        if name == "note":
            return lambda s: props(s.record)
        if name == "this":
            this = self.this
            return lambda _s: None if this is None else FileRef(this)
        if name == "formula":
            raise EvalError("'formula' is used on its own; name a formula, as formula.name", node.pos)
        if name in GLOBALS:
            raise EvalError(f"the function {name}() is used without calling it", node.pos)
        return lambda s: props(s.record).get(name)

    def member(self, node: Member, bound: frozenset[str]) -> Callable[[Scope], Any]:
        name, pos = node.name, node.pos
        target = node.target
        if isinstance(target, Ident) and target.name not in bound:
            if target.name == "formula":
                if name not in self.base.formulas:
                    raise EvalError(f"no formula named {name!r}", node.pos)
                return lambda s: self.formula(s, name, pos)
            if target.name == "note":
                return lambda s: props(s.record).get(name)
            if target.name == "file":
                if name not in FILE_FIELDS:
                    raise EvalError(f"file.{name} is not a file field", node.pos)
                return lambda s: self.files.field(s.path, name, s.record)
        inner = self.compile(target, bound)

        def field_of(s: Scope) -> Any:
            value = inner(s)
            if isinstance(value, FileRef):
                if value.path == self.this and name not in FILE_FIELDS:
                    return props(self.files.u.notes.get(value.path)).get(name)
                if name not in FILE_FIELDS:
                    raise EvalError(f"file.{name} is not a file field", pos)
                return self.files.field(value.path, name)
            if isinstance(value, Link):
                raise EvalError(f"a link has no field {name!r} (use asFile())", pos)
            try:
                return value_field(name, value)
            except EvalError as exc:
                raise EvalError(exc.message, pos) from None

        return field_of

    def index(self, node: Index, bound: frozenset[str]) -> Callable[[Scope], Any]:
        target, key, pos = self.compile(node.target, bound), self.compile(node.key, bound), node.pos

        def at(s: Scope) -> Any:
            value, k = target(s), key(s)
            if value is None or k is None:
                return None
            if isinstance(value, dict) and isinstance(k, str):
                return value.get(k)
            if isinstance(value, list | str) and isinstance(k, int) and not isinstance(k, bool):
                return value[k] if 0 <= k < len(value) else None
            if isinstance(value, FileRef) and isinstance(k, str):
                return props(self.files.u.notes.get(value.path)).get(k)
            raise EvalError(f"a {type(value).__name__} cannot be indexed by a {type(k).__name__}", pos)

        return at

    def call(self, node: Call, bound: frozenset[str]) -> Callable[[Scope], Any]:
        callee = node.callee
        if isinstance(callee, Ident):
            if callee.name not in GLOBALS:
                raise EvalError(f"the function {callee.name}() is not supported", callee.pos)
            return self.global_call(callee.name, node, bound)
        if not isinstance(callee, Member):
            raise EvalError("only a function or a method can be called", node.pos)
        name, pos = callee.name, callee.pos
        if name not in METHODS:
            raise EvalError(f"the method {name}() is not supported", pos)
        if (
            isinstance(callee.target, Ident)
            and callee.target.name == "file"
            and "file" not in bound
            and name == "hasTag"
            and node.args
            and all(isinstance(a, Literal) and isinstance(a.value, str) for a in node.args)
        ):
            return self.has_tag([str(a.value) for a in node.args if isinstance(a, Literal)])  # the common filter, made direct
        receiver = self.compile(callee.target, bound)
        if name in _LAMBDA_METHODS:
            return self.lambda_call(name, receiver, node, bound)
        args = [self.compile(a, bound) for a in node.args]

        charge = self.budget.charge

        def method(s: Scope) -> Any:
            value = receiver(s)
            values = [a(s) for a in args]
            if isinstance(value, list):
                charge(len(value))  # a list method walks its list: the work follows its length
            elif isinstance(value, str) and len(value) > 4096:
                charge(len(value) >> 6)  # and a long string's, in C, about a step per 64 characters
            try:
                if isinstance(value, FileRef) and name in FILE_METHODS:
                    return self.files.method(value.path, name, values)
                if isinstance(value, Link) and name in LINK_METHODS:
                    return self.files.link_method(value, name, values)
                if isinstance(value, FileRef | Link) and name not in ("isTruthy", "isType", "toString"):
                    raise EvalError(f"{name}() is not a method of a {'file' if isinstance(value, FileRef) else 'link'}")
                return value_method(name, value, values, self.now)
            except EvalError as exc:
                raise EvalError(exc.message, pos) from None

        return method

    def has_tag(self, wanted: list[str]) -> Callable[[Scope], Any]:
        """``file.hasTag("a", ...)`` with written tags: a tag matches itself and its nested tags."""
        names = frozenset(w.lstrip("#").casefold() for w in wanted)
        nested = tuple(n + "/" for n in names)

        def has(s: Scope) -> bool:
            record = s.record
            if record is None:
                return False
            for tag in record.tags:
                folded = tag.name.casefold()
                if folded in names or folded.startswith(nested):
                    return True
            return False

        return has

    def lambda_call(self, name: str, receiver: Callable[[Scope], Any], node: Call, bound: frozenset[str]) -> Callable[[Scope], Any]:
        want = 2 if name == "reduce" else 1
        if len(node.args) != want:
            raise EvalError(f"{name}() takes {want} argument{'s' if want > 1 else ''}", node.callee.pos)
        inner = bound | {"value", "index", "acc"}
        body = self.compile(node.args[0], inner)
        start = self.compile(node.args[1], bound) if name == "reduce" else None
        cost = size(node.args[0])
        charge, pos = self.budget.charge, node.callee.pos

        def run(s: Scope) -> Any:
            items = receiver(s)
            if items is None:
                return None
            if not isinstance(items, list):
                raise EvalError(f"{name}() is not a method of a {type(items).__name__}", pos)
            saved = s.vars
            s.vars = dict(saved)
            try:
                acc = start(s) if start is not None else None
                out: list[Any] = []
                for i, item in enumerate(items):
                    charge(cost)
                    s.vars["value"], s.vars["index"], s.vars["acc"] = item, i, acc
                    result = body(s)
                    if name == "filter":
                        if truthy(result):
                            out.append(item)
                    elif name == "map":
                        out.append(result)
                    else:
                        acc = result
                return acc if name == "reduce" else out
            finally:
                s.vars = saved

        return run

    def global_call(self, name: str, node: Call, bound: frozenset[str]) -> Callable[[Scope], Any]:
        args = [self.compile(a, bound) for a in node.args]
        pos = node.pos

        def need(low: int, high: int | None = None) -> None:
            high = low if high is None else high
            if not low <= len(args) <= high:
                want = str(low) if low == high else f"{low} to {high}"
                raise EvalError(f"{name}() takes {want} arguments, got {len(args)}", pos)

        if name == "if":
            need(2, 3)
            cond, yes = args[0], args[1]
            no = args[2] if len(args) > 2 else None
            return lambda s: yes(s) if truthy(cond(s)) else (no(s) if no is not None else None)
        if name in ("now", "today"):
            need(0)
            value = self.now if name == "now" else self.today
            return lambda _s: value
        if name in ("max", "min"):
            pick = max if name == "max" else min

            def extreme(s: Scope) -> Any:
                values = [v for a in args if (v := a(s)) is not None]
                if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in values):
                    raise EvalError(f"{name}() takes numbers", pos)
                return pick(values) if values else None

            return extreme
        if name == "date":
            need(1)
            return lambda s: self.to_date(args[0](s), pos)
        if name == "duration":
            need(1)

            def span(s: Scope) -> Any:
                v = args[0](s)
                if v is None or isinstance(v, Duration):
                    return v
                found = parse_duration(v) if isinstance(v, str) else None
                if found is None:
                    raise EvalError(f"duration() cannot read {display(v)!r}", pos)
                return found

            return span
        if name == "number":
            need(1)

            def number(s: Scope) -> Any:
                try:
                    return to_number(args[0](s))
                except EvalError as exc:
                    raise EvalError(exc.message, pos) from None

            return number
        if name == "list":
            need(1)
            return lambda s: (lambda v: v if isinstance(v, list) else ([] if v is None else [v]))(args[0](s))
        if name in ("escapeHTML", "html", "icon", "image"):
            need(1)
            convert = escape_html if name == "escapeHTML" else (lambda text: text)
            return lambda s: (lambda v: None if v is None else convert(display(v)))(args[0](s))
        if name == "link":
            need(1, 2)
            return lambda s: self.files.make_link(s.path, args[0](s), args[1](s) if len(args) > 1 else None, pos)
        if name == "file":
            need(1)
            return lambda s: self.files.make_file(s.path, args[0](s))
        raise EvalError(f"the function {name}() is not supported", pos)

    # -- runtime -----------------------------------------------------------------------

    def to_date(self, value: Any, pos: int) -> Date | None:
        if value is None:
            return None
        date = as_date(value)
        if date is None:
            raise EvalError(f"date() cannot read {display(value)!r} (YYYY-MM-DD HH:mm:ss)", pos)
        return date

    def formula(self, s: Scope, name: str, pos: int) -> Any:
        if s.formulas is None:
            s.formulas, s.busy = {}, set()
        assert s.busy is not None
        if name in s.formulas:
            return s.formulas[name]
        if name in s.busy:
            raise EvalError(f"the formula {name!r} refers to itself", pos)
        s.busy.add(name)
        try:
            saved, s.vars = s.vars, _NO_VARS
            value = self.formulas[name](s)
        finally:
            s.vars = saved
            s.busy.discard(name)
        s.formulas[name] = value
        return value

    # -- columns -----------------------------------------------------------------------

    def column(self, prop: str) -> Callable[[Scope], Any]:
        head, _dot, rest = prop.partition(".")
        if head == "formula":
            if rest not in self.base.formulas:
                raise BaseInvalid(f"the view names formula.{rest}, which the Base does not define")
            return lambda s: self.formula(s, rest, 0)
        if head == "file":
            if rest not in FILE_FIELDS:
                raise BaseInvalid(f"the view names file.{rest}, which is not a file field")
            return lambda s: self.files.field(s.path, rest, s.record)
        return lambda s: props(s.record).get(rest)
