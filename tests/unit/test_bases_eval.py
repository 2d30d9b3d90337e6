"""Bases evaluated over a small vault: each documented function and construct, with the rows or
values written by hand from the examples of Obsidian's help ("Bases syntax", "Functions",
"Formulas", "Views"), and every bound at its edge."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from vaultd.obsidian.bases import BaseFailed, BaseInvalid, Universe, read_base, run_view
from vaultd.obsidian.bases.engine import Budget
from vaultd.obsidian.bases.expr import MAX_DEPTH, MAX_EXPRESSION_CHARS
from vaultd.obsidian.bases.model import MAX_FILTER_NODES, MAX_VIEWS, base_blocks
from vaultd.obsidian.bases.regex_guard import MAX_SUBJECT_CHARS
from vaultd.obsidian.bases.values import to_json
from vaultd.vault.model import Link, LinkKind, NoteRecord, Tag
from vaultd.vault.walk import FileStat

NOW = dt.datetime(2025, 6, 15, 14, 30, 0)  # a Sunday
MTIME = int(dt.datetime(2025, 6, 10, 9, 0, 0).timestamp() * 1e9)


def note(
    path: str, fm: dict[str, Any] | None = None, tags: tuple[str, ...] = (), links: tuple[str, ...] = (), embeds: tuple[str, ...] = ()
) -> NoteRecord:
    made = [Link(LinkKind.WIKI, t, None, None, 1, 0, 1) for t in links] + [Link(LinkKind.EMBED, t, None, None, 1, 0, 1) for t in embeds]
    return NoteRecord(
        path=path,
        size=100,
        mtime_ns=MTIME,
        ino=1,
        sha256="",
        title=path,
        frontmatter=fm,
        aliases=[],
        tags=[Tag(t, 0) for t in tags],
        headings=[],
        blocks=[],
        links=made,
        issues=[],
        words=0,
        body_offset=0,
    )


NOTES = [
    note(
        "Books/Dune.md",
        {"price": 9.5, "age": 2, "status": "reading", "due": "2025-06-20", "author": "[[Frank Herbert]]", "done": False},
        ("book",),
        ("Textbook",),
    ),
    note("Books/Foundation.md", {"price": 7, "age": 7, "status": "done", "due": "2025-06-01", "done": True}, ("book", "classic")),
    note("Required Reading/Emma.md", {"price": 3, "age": 1, "status": "reading"}, ("book",)),
    note("Textbook.md", {"status": "active", "pages": [3, 1, 2]}, ("book/reference",), ("Books/Dune",), ("cover.png",)),
    note("Journal.md", {"mood": "good", "tags": ["daily"]}, ("daily",)),
]
FILES = [FileStat("cover.png", 2048, MTIME, 2, False), FileStat("Library.base", 300, MTIME, 3, False)]


def universe() -> Universe:
    notes = {n.path: n for n in NOTES}
    files = {f.path: f for f in FILES}

    def resolve(target: str, source: str) -> str | None:
        for path in (*notes, *files):
            if path in (target, target + ".md") or path.rpartition("/")[2] in (target, target + ".md"):
                return path
        return None

    def backlinks(path: str) -> list[str]:
        return sorted(n.path for n in NOTES if any(resolve(link.target, n.path) == path for link in n.links))

    return Universe(notes=notes, files=files, resolve=resolve, backlinks=backlinks)


def rows(yaml: str, view: str | None = None, **kw: Any) -> list[str]:
    return [r.path for r in run_view(read_base(yaml), view, universe(), now=NOW, **kw).rows]


def value(expression: str, path: str = "Books/Dune.md") -> Any:
    escaped = expression.replace("'", "''")
    base = read_base(f"formulas:\n  x: '{escaped}'\nfilters: 'file.path == \"{path}\"'\nviews:\n  - order: [formula.x]\n")
    found = run_view(base, None, universe(), now=NOW, this="Library.base").rows
    assert [r.path for r in found] == [path]
    return to_json(found[0].values["formula.x"])


def test_the_syntax_pages_filter_example() -> None:
    # filters: or: [hasTag("tag"), and: [hasTag("book"), hasLink("Textbook")], not: [hasTag("book"), inFolder("Required Reading")]]
    base = """filters:
  or:
    - file.hasTag("tag")
    - and:
        - file.hasTag("book")
        - file.hasLink("Textbook")
    - not:
        - file.hasTag("book")
        - file.inFolder("Required Reading")
"""
    # Dune: book and links Textbook. Not-group: every file that is neither a book nor in Required Reading.
    assert rows(base) == ["Books/Dune.md", "cover.png", "Journal.md", "Library.base"]


def test_the_syntax_pages_view_example() -> None:
    base = """formulas:
  formatted_price: 'if(price, price.toFixed(2) + " dollars")'
  ppu: "(price / age).toFixed(2)"
properties:
  status:
    displayName: Status
  formula.formatted_price:
    displayName: "Price"
  file.ext:
    displayName: Extension
views:
  - type: table
    name: "My table"
    limit: 10
    filters:
      and:
        - 'status != "done"'
        - or:
            - "formula.ppu > 5"
            - "price > 2.1"
    order: [file.name, file.ext, note.age, formula.ppu, formula.formatted_price]
    summaries:
      formula.ppu: Average
"""
    result = run_view(read_base(base), "My table", universe(), now=NOW)
    assert [(r.path, r.values) for r in result.rows] == [
        (
            "Books/Dune.md",
            {"file.name": "Dune.md", "file.ext": "md", "note.age": 2, "formula.ppu": "4.75", "formula.formatted_price": "9.50 dollars"},
        ),
        (
            "Required Reading/Emma.md",
            {"file.name": "Emma.md", "file.ext": "md", "note.age": 1, "formula.ppu": "3.00", "formula.formatted_price": "3.00 dollars"},
        ),
    ]
    assert result.columns[1] == ("file.ext", "Extension") and result.columns[4] == ("formula.formatted_price", "Price")
    assert result.summaries == {"formula.ppu": pytest.approx(3.875)}


def test_sort_group_and_limit() -> None:
    base = """filters: 'file.ext == "md"'
views:
  - type: table
    name: t
    sort:
      - property: file.name
        direction: DESC
    groupBy:
      property: status
      direction: DESC
    limit: 4
"""
    result = run_view(read_base(base), None, universe(), now=NOW)
    assert [(r.group, r.path) for r in result.rows] == [
        ("reading", "Required Reading/Emma.md"),
        ("reading", "Books/Dune.md"),
        ("done", "Books/Foundation.md"),
        ("active", "Textbook.md"),
    ]
    assert result.total == 5 and [(k, n) for k, n, _s in result.groups] == [("reading", 2), ("done", 1), ("active", 1)]


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        # operators
        ("price * 2 + 1", 20.0),
        ("(price - 0.5) / 3", 3.0),
        ("age % 2", 0),
        ('status == "reading" && !done', True),
        ("price > 10 || age >= 2", True),
        ("-price", -9.5),
        ("[1, 2, 3][1]", 2),
        ('note["status"]', "reading"),
        ("note.status", "reading"),
        ("missing + 1", None),
        ('"a" + 1', "a1"),
        # globals
        ('if(price > 5, "dear", "cheap")', "dear"),
        ('if(price > 50, "dear")', None),
        ('date("2025-01-02 03:04:05")', "2025-01-02T03:04:05"),
        ('date("2025-01-02")', "2025-01-02"),
        ("now()", "2025-06-15T14:30:00"),
        ("today()", "2025-06-15"),
        ('duration("1d").hours', 24.0),
        ('now() + (duration("1d") * 2)', "2025-06-17T14:30:00"),
        ('number("3.5") + number(true)', 4.5),
        ("max(1, 5, 3)", 5),
        ("min(4, 2, 8)", 2),
        ('list("value")', ["value"]),
        ("list(tags)", []),
        ('escapeHTML("<b>&")', "&lt;b&gt;&amp;"),
        ('link("Textbook")', "[[Textbook]]"),
        ('link("Textbook", "the book")', "[[Textbook|the book]]"),
        ('file("Textbook").name', "Textbook.md"),
        ('file(link("[[Textbook]]")).properties.status', "active"),
        # any
        ("1.isTruthy()", True),
        ('"".isTruthy()', False),
        ('"a".isType("string")', True),
        ('price.isType("number")', True),
        ("price.toString()", "9.5"),
        # dates
        ('date("2025-03-04 05:06:07").year', 2025),
        ('date("2025-03-04 05:06:07").month', 3),
        ('date("2025-03-04 05:06:07").day', 4),
        ('date("2025-03-04 05:06:07").hour', 5),
        ('date("2025-03-04 05:06:07").minute', 6),
        ('date("2025-03-04 05:06:07").second', 7),
        ('date("2025-03-04 05:06:07").date()', "2025-03-04"),
        ('date("2025-03-04 05:06:07").time()', "05:06:07"),
        ('date("2025-03-04").format("YYYY-MM-DD")', "2025-03-04"),
        ('date("2025-03-04 17:06").format("dddd, MMMM Do YYYY [at] h:mm A")', "Tuesday, March 4th 2025 at 5:06 PM"),
        ('date("2025-06-12").relative()', "4 days ago"),  # 3 days 14.5 hours, rounded as Moment rounds
        ('date("2025-07-15").relative()', "in a month"),
        ('date("2025-01-31") + "1M"', "2025-02-28"),
        ('date("2025-01-01") + "1 year"', "2026-01-01"),
        ('today() - "1w"', "2025-06-08"),
        ('now() + "1 day"', "2025-06-16T14:30:00"),
        ('date("2025-01-01") - "2h"', "2024-12-31T22:00:00"),
        ("(date(due) - today()).days", 5.0),
        ('due < today() + "1w"', True),
        ("due > today()", True),
        ('file.mtime > date("2025-06-09")', True),
        ('file.mtime.format("YYYY-MM-DD HH:mm")', "2025-06-10 09:00"),
        # strings
        ('"hello".contains("ell")', True),
        ('"hello".containsAll("h", "o")', True),
        ('"hello".containsAny("x", "o")', True),
        ('"hello".endsWith("lo")', True),
        ('"hello".startsWith("he")', True),
        ('"".isEmpty()', True),
        ('"HeLLo".lower()', "hello"),
        ('"a-b-a".replace("a", "c")', "c-b-a"),
        ('"a-b-a".replace(/a/g, "c")', "c-b-c"),
        ('"ab".repeat(3)', "ababab"),
        ('"abc".reverse()', "cba"),
        ('"hello".slice(1, 4)', "ell"),
        ('"a,b,c".split(",")', ["a", "b", "c"]),
        ('"a,b,c".split(",", 2)', ["a", "b"]),
        ('"hello world".title()', "Hello World"),
        ('"  x  ".trim()', "x"),
        ('"hello".length', 5),
        # numbers
        ("(-3).abs()", 3),
        ("2.1.ceil()", 3),
        ("2.9.floor()", 2),
        ("2.5.round()", 3),
        ("2.3333.round(2)", 2.33),
        ("3.14159.toFixed(2)", "3.14"),
        ("price.isEmpty()", False),
        # lists
        ("[1, 2, 3].contains(2)", True),
        ("[1, 2, 3].containsAll(2, 3)", True),
        ("[1, 2, 3].containsAny(4, 3)", True),
        ("[1, 2, 3, 4].filter(value > 2)", [3, 4]),
        ("[1, 2, 3].filter(index == 0)", [1]),
        ("[1, 2, 3].map(value + 1)", [2, 3, 4]),
        ("[1, 2, 3].reduce(acc + value, 10)", 16),
        ("[[1, 2], [3]].flat()", [1, 2, 3]),
        ("[].isEmpty()", True),
        ('[1, 2].join("+")', "1+2"),
        ("[1, 2, 3].reverse()", [3, 2, 1]),
        ("[1, 2, 3, 4].slice(1, 3)", [2, 3]),
        ("[3, 1, 2].sort()", [1, 2, 3]),
        ("[1, 1, 2].unique()", [1, 2]),
        ("[1, 2, 3].length", 3),
        ("[2, 4].mean()", 3.0),
        ("[2, 4].sum()", 6),
        # objects
        ("file.properties.keys()", ["price", "age", "status", "due", "author", "done"]),
        ("note.isEmpty()", False),
        # files
        ("file.name", "Dune.md"),
        ("file.basename", "Dune"),
        ("file.path", "Books/Dune.md"),
        ("file.folder", "Books"),
        ("file.ext", "md"),
        ("file.size", 100),
        ("file.mtime", "2025-06-10T09:00:00"),
        ("file.tags", ["#book"]),
        ("file.links", ["[[Textbook]]"]),
        ("file.backlinks", ["[[Textbook]]"]),
        ('file.hasTag("book")', True),
        ('file.hasTag("classic", "book")', True),
        ('file.hasTag("boo")', False),
        ('file.hasLink("Textbook")', True),
        ('file.hasLink(file("Textbook"))', True),
        ('file.hasProperty("price")', True),
        ('file.hasProperty("pages")', False),
        ('file.inFolder("Books")', True),
        ('file.inFolder("Book")', False),
        ('file.asLink("Dune!")', "[[Books/Dune|Dune!]]"),
        # links
        ('link("Textbook").asFile().properties.status', "active"),
        ('link("Textbook").linksTo(file("Books/Dune.md"))', False),
        ("file.links[0].asFile().name", "Textbook.md"),
        # this
        ("this.file.name", "Library.base"),
        ('html("<i>x</i>")', "<i>x</i>"),
        ('icon("arrow-right")', "arrow-right"),
        ('image("cover.png")', "cover.png"),
        ("file.ctime", "2025-06-10T09:00:00"),  # no creation time known here: the modification time
        ('file("Textbook").links[0].linksTo(file("Books/Dune.md"))', True),
        ("[5, 6].reduce(acc + index, 0)", 1),
        ('"a1b22c".split(/[0-9]+/)', ["a", "b", "c"]),
        ("author", "[[Frank Herbert]]"),
        ('author == link("Frank Herbert")', True),
        ("note.missing.isEmpty()", True),
        ("null.isTruthy()", False),
        ('[date("2025-01-02"), date("2025-01-01")].sort()[0]', "2025-01-01"),
        ('status != "done" && file.hasTag("book")', True),
        # regular expressions
        ("/^D/.matches(file.basename)", True),
        ("/^d/i.matches(file.basename)", True),
        ("/^x/.matches(file.basename)", False),
    ],
)
def test_documented_functions(expression: str, expected: Any) -> None:
    assert value(expression) == expected


def test_file_fields_of_other_files() -> None:
    assert value("file.embeds", "Textbook.md") == ["[[cover.png]]"]
    assert value('file.hasTag("book")', "Textbook.md") is True  # nested tags count: book/reference
    assert value("file.ext", "cover.png") == "png" and value("file.size", "cover.png") == 2048
    assert value("file.folder", "Journal.md") == "/"
    assert value("file.backlinks.length", "Textbook.md") == 1


@pytest.mark.parametrize(
    ("summary", "expected"),
    [
        ("Average", 6.5),
        ("Min", 3),
        ("Max", 9.5),
        ("Sum", 19.5),
        ("Range", 6.5),
        ("Median", 7),
        ("Stddev", pytest.approx((21.5 / 3) ** 0.5)),  # population deviation of 9.5, 7, 3
        ("Empty", 2),
        ("Filled", 3),
        ("Unique", 3),
    ],
)
def test_summaries_over_numbers(summary: str, expected: Any) -> None:
    base = f"filters: 'file.ext == \"md\"'\nviews:\n  - order: [price]\n    summaries:\n      price: {summary}\n"
    assert run_view(read_base(base), None, universe(), now=NOW).summaries == {"note.price": expected}


def test_summaries_over_dates_and_checkboxes() -> None:
    base = "views:\n  - order: [due, done]\n    summaries:\n      due: Earliest\n      done: Checked\n"
    got = run_view(read_base(base), None, universe(), now=NOW).summaries
    assert {k: to_json(v) for k, v in got.items()} == {"note.due": "2025-06-01", "note.done": 1}
    for name, expected in (("Latest", "2025-06-20"), ("Range", 19 * 86_400_000.0)):
        base = f"views:\n  - order: [due]\n    summaries:\n      due: {name}\n"
        assert to_json(run_view(read_base(base), None, universe(), now=NOW).summaries["note.due"]) == expected
    base = "filters: 'file.ext == \"md\"'\nviews:\n  - order: [done]\n    summaries:\n      done: Unchecked\n"
    assert run_view(read_base(base), None, universe(), now=NOW).summaries == {"note.done": 4}


def test_a_custom_summary_formula() -> None:
    base = "summaries:\n  customAverage: 'values.mean().round(3)'\nviews:\n  - order: [age]\n    summaries:\n      age: customAverage\n"
    assert run_view(read_base(base), None, universe(), now=NOW).summaries == {"note.age": pytest.approx(3.333)}


def test_a_base_block_in_a_note() -> None:
    text = "# Note\n\n```base\nfilters: 'status == \"done\"'\n```\n\n~~~~ base\nviews: []\n~~~~\n"
    assert base_blocks(text) == ["filters: 'status == \"done\"'", "views: []"]
    assert rows(base_blocks(text)[0]) == ["Books/Foundation.md"]


@pytest.mark.parametrize(
    ("yaml", "message"),
    [
        ("filters: 'price.frobnicate()'\n", "filters: the method frobnicate() is not supported at line 1, column 7"),
        ("filters: 'nosuch(1)'\n", "filters: the function nosuch() is not supported at line 1, column 1"),
        ("filters: 'file.nope'\n", "filters: file.nope is not a file field at line 1, column 6"),
        ("filters: 'a ? b : c'\n", "the '?' operator is not supported (use if()) at line 1, column 3"),
        ("filters: '{a: 1}'\n", "object literals are not supported at line 1, column 1"),
        ("filters: 'a = 1'\n", "'=' is not an operator (compare with '==') at line 1, column 3"),
        ("filters: 'formula.nope > 1'\n", "filters: no formula named 'nope' at line 1, column 9"),
        ("formulas:\n  a: 'formula.b'\n  b: 'formula.a'\nviews:\n  - order: [formula.a]\n", "refers to itself"),
        ("filters: '/(a+)+/.matches(status)'\n", "repeats a group that itself repeats or alternates"),
        ("filters: '/(a)\\1/.matches(status)'\n", "back-reference"),
        ("filters: 'status.round()'\n", "round() is not a method of a string at line 1, column 8 (in Books/Dune.md)"),
        ("filters: 'date(\"soon\")'\n", "date() cannot read 'soon'"),
        ("filters:\n  xor: [a]\n", "filters: unknown filter group 'xor'"),
        ("views:\n  - sort:\n      - property: a\n        direction: UP\n", "views[0].sort[0].direction: ASC or DESC"),
        ("views:\n  - order: [formula.x]\n", "the view names formula.x, which the Base does not define"),
        ("views:\n  - order: [a]\n    summaries:\n      a: Mode\n", "neither a built-in summary nor one of the Base's"),
        ("views: 3\n", "views: expected a list"),
        ("a: [\n", "the Base is not valid YAML at line"),
    ],
)
def test_unsupported_and_wrong_constructs_are_named_and_located(yaml: str, message: str) -> None:
    with pytest.raises((BaseInvalid, BaseFailed)) as caught:
        run_view(read_base(yaml), None, universe(), now=NOW)
    assert message in str(caught.value)


def test_expression_length_and_depth_at_their_bounds() -> None:
    at = "1" + " " * (MAX_EXPRESSION_CHARS - 1)
    assert value(at) == 1
    with pytest.raises(BaseInvalid, match=f"longer than {MAX_EXPRESSION_CHARS} characters"):
        read_base(f"filters: '{at} '\n")
    # each ( counts once and the number inside once more: MAX_DEPTH - 1 parentheses is at the bound
    deep = "(" * (MAX_DEPTH - 1) + "1" + ")" * (MAX_DEPTH - 1)
    assert value(deep) == 1
    with pytest.raises(BaseInvalid, match=f"nests deeper than {MAX_DEPTH} levels"):
        read_base(f"filters: '({deep})'\n")


def test_a_chain_of_operators_counts_as_nesting() -> None:
    # a + a + ... is a tree as deep as the chain is long: bounded like parentheses, so no printer,
    # sizer or evaluator recursion can pass Python's own limit
    at = "1" + " + 1" * (MAX_DEPTH - 2)  # the outer expression and the last operand take one level each
    assert value(at) == MAX_DEPTH - 1
    with pytest.raises(BaseInvalid, match=f"nests deeper than {MAX_DEPTH} levels"):
        read_base(f"filters: '{at} + 1'\n")
    with pytest.raises(BaseInvalid, match="nests deeper"):
        read_base("filters: '" + "1" + "+1" * 2000 + "'\n")


def test_filters_views_and_regex_subjects_at_their_bounds() -> None:
    items = "\n".join(["    - 'true'"] * (MAX_FILTER_NODES - 1))
    assert len(rows(f"filters:\n  and:\n{items}\n")) == len(NOTES) + len(FILES)
    with pytest.raises(BaseInvalid, match=f"more than {MAX_FILTER_NODES} statements"):
        read_base(f"filters:\n  and:\n{items}\n    - 'true'\n")
    views = "".join(f"  - name: v{i}\n" for i in range(MAX_VIEWS))
    assert len(read_base(f"views:\n{views}").views) == MAX_VIEWS
    with pytest.raises(BaseInvalid, match=f"more than {MAX_VIEWS}"):
        read_base(f"views:\n{views}  - name: one more\n")
    assert value(f'/b$/.matches("a".repeat({MAX_SUBJECT_CHARS - 1}) + "b")') is True
    with pytest.raises(BaseFailed, match="longer than"):
        value(f'/b$/.matches("a".repeat({MAX_SUBJECT_CHARS}) + "b")')


def test_the_step_budget_at_its_bound_and_one_past() -> None:
    base = read_base("formulas:\n  x: '[1, 2, 3].map(value + 1)'\nviews:\n  - order: [formula.x]\n")
    one = Universe(notes={NOTES[0].path: NOTES[0]}, files={}, resolve=lambda t, s: None, backlinks=lambda p: [])
    # one row (1) + the formula once (9 nodes) + its body per element (3 x 3)
    exact = Budget(max_steps=19)
    run_view(base, None, one, now=NOW, budget=exact)
    assert exact.steps == 19
    with pytest.raises(BaseFailed) as caught:
        run_view(base, None, one, now=NOW, budget=Budget(max_steps=18))
    assert caught.value.limit and "more than 18 evaluation steps" in str(caught.value)


def test_the_time_budget_stops_a_long_query() -> None:
    base = read_base("formulas:\n  x: '[1, 2, 3].map(value)'\nviews:\n  - order: [formula.x]\n")
    with pytest.raises(BaseFailed) as caught:
        run_view(base, None, universe(), now=NOW, budget=Budget(max_steps=10**9, seconds=-1.0), paths=["Books/Dune.md"] * 5000)
    assert caught.value.limit and "time budget" in str(caught.value)


def test_values_that_build_too_much_are_refused() -> None:
    with pytest.raises(BaseFailed, match="a string longer than"):
        value('"ab".repeat(1000000)')
    with pytest.raises(BaseFailed, match="a string longer than"):
        value('[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22].reduce(acc + acc, "ab")')
    assert (
        value(
            "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70].reduce(acc * acc, 2)"
        )
        is None
    )  # an overflowing number is not a million-digit integer: Infinity, shown as null


def test_list_methods_charge_their_length() -> None:
    items = ", ".join(str(i) for i in range(300))
    base = read_base(f"formulas:\n  x: '[{items}].unique()'\nviews:\n  - order: [formula.x]\n")
    one = Universe(notes={NOTES[0].path: NOTES[0]}, files={}, resolve=lambda t, s: None, backlinks=lambda p: [])
    # one row (1) + the formula's nodes (call, member, list and its 300 numbers: 303) + the walk of 300 items
    exact = Budget(max_steps=604)
    assert len(run_view(base, None, one, now=NOW, budget=exact).rows[0].values["formula.x"]) == 300
    assert exact.steps == 604
    with pytest.raises(BaseFailed, match="more than 603 evaluation steps"):
        run_view(base, None, one, now=NOW, budget=Budget(max_steps=603))


def test_unique_is_linear_and_keeps_first_ones() -> None:
    assert value('[1, 1.0, "1", date("2025-01-01"), date("2025-01-01"), [1], [1], file, file("Books/Dune.md")].unique().length') == 5
    base = "views:\n  - order: [status]\n    summaries:\n      status: Unique\n"
    assert run_view(read_base(base), None, universe(), now=NOW).summaries == {"note.status": 3}  # reading, done, active
