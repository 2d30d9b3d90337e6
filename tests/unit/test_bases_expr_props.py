"""Properties of the Bases expression language: the printer writes any tree as text the parser
reads back as the same tree; the parser answers any text with a tree or a located ExprError,
never another exception; and evaluating any expression over a vault stays within its step
budget, ending in a value or a named refusal."""

from __future__ import annotations

import datetime as dt
import string

import yaml  # type: ignore[import-untyped]
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.unit.test_bases_eval import NOTES, universe
from vaultd.obsidian.bases import BaseFailed, BaseInvalid, read_base, run_view
from vaultd.obsidian.bases.engine import Budget
from vaultd.obsidian.bases.expr import (
    MAX_EXPRESSION_CHARS,
    Binary,
    Call,
    ExprError,
    Ident,
    Index,
    ListLit,
    Literal,
    Member,
    Node,
    RegexLit,
    Unary,
    parse,
    to_text,
)
from vaultd.obsidian.bases.model import Expression, load

_KEYWORDS = {"true", "false", "null"}
names = st.from_regex(r"[A-Za-z_$][A-Za-z0-9_$]{0,8}", fullmatch=True).filter(lambda n: n not in _KEYWORDS)
numbers = st.one_of(st.integers(min_value=0, max_value=10**15), st.floats(min_value=0, allow_nan=False, allow_infinity=False))
literals = st.builds(lambda v: Literal(value=v), st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=12)))
regexes = st.builds(
    lambda s, f: RegexLit(source=s, flags=f),
    st.from_regex(r"[a-z.^$][a-z.*+?^$]{0,6}", fullmatch=True),
    st.sampled_from(["", "g", "i", "gi", "m"]),
)
atoms = st.one_of(literals, st.builds(lambda n: Ident(name=n), names), regexes)


def _extend(inner: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
    return st.one_of(
        st.builds(lambda t, n: Member(target=t, name=n), inner, names),
        st.builds(lambda t, k: Index(target=t, key=k), inner, inner),
        st.builds(lambda n, a: Call(callee=Ident(name=n), args=tuple(a)), names, st.lists(inner, max_size=3)),
        st.builds(lambda t, n, a: Call(callee=Member(target=t, name=n), args=tuple(a)), inner, names, st.lists(inner, max_size=3)),
        st.builds(lambda op, x: Unary(op=op, operand=x), st.sampled_from(["!", "-"]), inner),
        st.builds(
            lambda op, a, b: Binary(op=op, left=a, right=b),
            st.sampled_from(["||", "&&", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%"]),
            inner,
            inner,
        ),
        st.builds(lambda items: ListLit(items=tuple(items)), st.lists(inner, max_size=3)),
    )


trees = st.recursive(atoms, _extend, max_leaves=12)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(trees)
def test_print_then_parse_gives_the_same_tree(tree: Node) -> None:
    text = to_text(tree)
    if len(text) <= MAX_EXPRESSION_CHARS:
        assert parse(text) == tree, text


SAMPLES = [
    'file.hasTag("a") && price > 2.1',
    "(price / age).toFixed(2)",
    'if(price, price.toFixed(2) + " dollars")',
    "[1, 2].map(value * 2)[0]",
    "/a+b/gi.matches(x)",
    'now() - "1d" < file.mtime',
    "!a || -b.c[d]",
]
pieces = st.sampled_from(list("()[]{},.!-+*/%<>=&|?:\"'\\ \n\t") + ["&&", "||", "==", "file", "formula", "note", "this", "value"])
noise = st.lists(st.one_of(pieces, st.text(alphabet=string.ascii_letters + string.digits, max_size=3)), max_size=40).map("".join)


@settings(max_examples=600)
@given(st.one_of(st.text(max_size=80), noise, st.sampled_from(SAMPLES).flatmap(lambda s: st.integers(0, len(s)).map(lambda i: s[:i]))))
@example("(" * 4000)
@example("-" * 4000 + "1")
@example("a" + ".b" * 2000)
@example("f(" * 2000)
@example("1" + " + 1" * 1000)
@example("a" + " && a" * 1000)
@example("[" * 4000)
@example('"\\u12')
@example("/[/")
@example("1e999")
def test_any_text_parses_or_is_refused_with_a_place(text: str) -> None:
    try:
        tree = parse(text)
    except ExprError as exc:
        assert 1 <= exc.line and 1 <= exc.column and exc.reason
    else:
        assert parse(to_text(tree)) == tree


STEPS = 2_000


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(trees.map(to_text), st.sampled_from(SAMPLES), noise))
@example("[1,2,3,4,5,6,7,8].map([1,2,3,4,5,6,7,8].map([1,2,3,4,5,6,7,8].map(value)))")
@example('"ab".repeat(999999).length')
@example("[1,2,3].reduce(acc + acc, [1,2,3])")
def test_any_expression_ends_within_its_budget(text: str) -> None:
    try:
        tree = parse(text)
    except ExprError:
        return
    base = load({"views": [{"order": ["formula.x"]}]})
    base.formulas["x"] = Expression("formulas.x", text, tree)
    budget = Budget(max_steps=STEPS)
    try:
        run_view(base, None, universe(), now=dt.datetime(2025, 6, 15), budget=budget, this="Library.base")
    except BaseFailed as exc:
        if exc.limit:
            assert budget.steps > STEPS
    except BaseInvalid:
        pass
    # one charge past the bound at most: the last one is one expression's size or one list body's
    assert budget.steps <= STEPS + MAX_EXPRESSION_CHARS


def test_the_budget_property_is_not_vacuous() -> None:
    budget = Budget(max_steps=STEPS)
    base = read_base(
        "formulas:\n  x: '[1,2,3,4,5,6,7,8].map([1,2,3,4,5,6,7,8].map([1,2,3,4,5,6,7,8].map(value)))'\nviews:\n  - order: [formula.x]\n"
    )
    try:
        run_view(base, None, universe(), now=dt.datetime(2025, 6, 15), budget=budget)
    except BaseFailed as exc:
        assert exc.limit
    else:
        raise AssertionError(f"{len(NOTES)} notes of 512 steps each passed a {STEPS}-step budget")


yaml_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False), st.text(max_size=10), st.sampled_from(SAMPLES)
)
yaml_values = st.recursive(
    yaml_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["and", "or", "not", "property", "direction", "name", "type", "order", "limit", "x"]), inner, max_size=3
        ),
    ),
    max_leaves=10,
)
base_documents = st.fixed_dictionaries(
    {},
    optional={
        "filters": yaml_values,
        "formulas": st.dictionaries(st.sampled_from(["a", "b"]), yaml_scalars, max_size=2),
        "properties": yaml_values,
        "summaries": yaml_values,
        "views": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "type": yaml_scalars,
                    "name": yaml_scalars,
                    "order": st.lists(st.sampled_from(["file.name", "status", "formula.a", "note.price", "formula.b"]), max_size=3),
                    "sort": yaml_values,
                    "groupBy": yaml_values,
                    "limit": yaml_scalars,
                    "filters": yaml_values,
                    "summaries": st.dictionaries(
                        st.sampled_from(["status", "file.name"]), st.sampled_from(["Sum", "Unique", "Nope"]), max_size=2
                    ),
                },
            ),
            max_size=2,
        ),
    },
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(base_documents.map(lambda d: yaml.safe_dump(d, allow_unicode=True)), st.text(max_size=200)))
@example("a: &a [1]\nb: *a\n")
@example("!!python/object:os.system {}\n")
@example("views:\n  - limit: 2024-01-01\n")
def test_any_base_text_is_read_or_refused_and_runs_within_its_budget(text: str) -> None:
    try:
        base = read_base(text)
    except BaseInvalid:
        return
    for name in [None, *(v.name for v in base.views)]:
        budget = Budget(max_steps=STEPS)
        try:
            run_view(base, name, universe(), now=dt.datetime(2025, 6, 15), budget=budget)
        except (BaseInvalid, BaseFailed):
            pass
        assert budget.steps <= STEPS + MAX_EXPRESSION_CHARS
