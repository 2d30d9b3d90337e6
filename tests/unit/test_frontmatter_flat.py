"""The flat header reader either declines or gives exactly what the YAML reader gives.

The YAML reader's careful path (ruamel.yaml) is the reference; every header the flat reader
accepts must read there with no issue, to the same data: the same keys in the same order, the
same values of the same types.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.parse_limits import MAX_YAML_NODES
from tests.unit.test_frontmatter_props import YAML_SOUP, headers
from vaultd.vault.frontmatter import parse
from vaultd.vault.frontmatter_flat import load_flat
from vaultd.vault.frontmatter_yaml import load_careful

SLOW = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def typed(value: Any) -> str:
    """JSON with the types kept apart (1, 1.0 and true differ), keys in their order."""
    return json.dumps(value, ensure_ascii=False)


def assert_declines_or_agrees(header: str) -> None:
    flat = load_flat(header)
    if flat is None:
        return
    careful, issues = load_careful(header)
    assert issues == []
    assert typed(flat) == typed(careful)


# Flat-looking headers, with the characters and spellings that make YAML read a line otherwise.
KEYS = st.sampled_from(
    ["title", "tags", "a", "b", "due date", "état", "_x", "k-1", "true", "null", "1", "x#y", "a'b", "<<", "=", "2024-1-2", "2024-01-02"]
)
VALUES = st.sampled_from(
    [
        "",
        "plain words",
        "2024-01-02",
        "2023-02-30",
        "2001-12-14 21:59:43.10",
        "12",
        "012",
        "-5",
        "-.inf",
        ".nan",
        "1e3",
        "0x1F",
        "1_000",
        "true",
        "False",
        "yes",
        "~",
        "null",
        '"quoted: # text"',
        '"with \\"escape"',
        "'single'",
        "'it''s'",
        '""',
        "''",
        "[]",
        "[ ]",
        "[a, b, 3]",
        "[a,b,]",
        "[a, [b]]",
        "[x: 1]",
        "[#tag, y]",
        "[- a]",
        "{a: 1}",
        "a: b",
        "a:b",
        "value # comment",
        "C#",
        "url http://x.y/z",
        "ends with:",
        "|",
        ">-",
        "&anchor x",
        "*alias",
        "!!str 1",
        "%x",
        "@x",
        "`x`",
        "-x",
        "- x",
        "?x",
        ":x",
        "é 한국어 😀",
        "[[Wiki Link]]",
        '"[[Wiki Link]]"',
        "a\\b",
        'say "hi"',
        "trailing   ",
    ]
)
ITEMS = st.sampled_from(["- a", "- 'b c'", '- "d"', "  - e", "  - 12", "- ", "-", "- [x]", "- a: b", "  - - n", "-x", "  sub: 1"])
LINES = st.one_of(
    st.tuples(KEYS, st.sampled_from([": ", ":", ":  ", " : "]), VALUES).map("".join),
    ITEMS,
    st.sampled_from(["", "# comment", "  continued", "\t", "a:\tb", "x: y\r", "...", "\x85", "a: \u2028", "k: \ufeff"]),
)
FLAT = st.lists(LINES, max_size=12).map("\n".join)

# Headers the flat reader mostly accepts: any printable text as plain words, quoted strings and
# list items, so the values' characters and their YAML readings are what varies.
PRINTABLE = st.text(st.characters(codec="utf-8", categories=("L", "M", "N", "P", "S", "Zs")), min_size=1, max_size=12)
PLAIN_KEY = st.from_regex(r"[A-Za-z_\u00e9][A-Za-z0-9 _.\u00e9-]{0,8}[A-Za-z0-9_]", fullmatch=True)
ONE_VALUE = st.one_of(
    PRINTABLE.map(lambda v: v.strip(" ")).filter(bool),
    PRINTABLE.map(lambda v: '"' + v.replace('"', "").replace("\\", "") + '"'),
    PRINTABLE.map(lambda v: "'" + v.replace("'", "") + "'"),
    VALUES,
)
ACCEPTED_LINE = st.one_of(
    st.tuples(PLAIN_KEY, ONE_VALUE).map(lambda kv: f"{kv[0]}: {kv[1]}"),
    st.tuples(PLAIN_KEY, st.lists(PRINTABLE.map(lambda v: v.strip(" ")).filter(bool), max_size=4)).map(
        lambda kv: f"{kv[0]}: [{', '.join(kv[1])}]"
    ),
    st.tuples(PLAIN_KEY, st.sampled_from(["", "  ", "    "]), st.lists(ONE_VALUE, min_size=1, max_size=3)).map(
        lambda kv: "\n".join([f"{kv[0]}:", *(f"{kv[1]}- {item}" for item in kv[2])])
    ),
)
MOSTLY_FLAT = st.lists(ACCEPTED_LINE, max_size=8).map("\n".join)


@SLOW
@given(MOSTLY_FLAT)
def test_flat_reader_declines_or_agrees_on_mostly_flat_headers(header: str) -> None:
    assert_declines_or_agrees(header)


@SLOW
@given(FLAT)
def test_flat_reader_declines_or_agrees_on_flat_looking_headers(header: str) -> None:
    assert_declines_or_agrees(header)


@SLOW
@given(headers())
def test_flat_reader_declines_or_agrees_on_generated_headers(header: str) -> None:
    assert_declines_or_agrees(header)


@SLOW
@given(YAML_SOUP)
def test_flat_reader_declines_or_agrees_on_yaml_soup(header: str) -> None:
    assert_declines_or_agrees(header)


@pytest.mark.parametrize(
    ("header", "data"),
    [
        ("", {}),
        ("title: Note\ncreated: 2024-01-02\ncount: 012\n", {"title": "Note", "created": "2024-01-02", "count": 12}),
        ("tags: [a, b, 3]\nempty: []\n", {"tags": ["a", "b", 3], "empty": []}),
        ("aliases:\n  - \"A\"\n  - 'B'\nnext: ~\n", {"aliases": ["A", "B"], "next": None}),
        ("tags:\n- x\n- y\n", {"tags": ["x", "y"]}),
        ("blank:\n\nafter: 1.5\n", {"blank": None, "after": 1.5}),
        ('up: "[[Parent]]"\n', {"up": "[[Parent]]"}),
    ],
)
def test_flat_headers_read(header: str, data: dict[str, Any]) -> None:
    assert load_flat(header) == data
    assert typed(load_careful(header)[0]) == typed(data)


@pytest.mark.parametrize(
    "header",
    [
        "a: 1\na: 2\n",  # a repeated key: the YAML reader reports it
        "true: x\n",  # a key YAML reads as a boolean
        "a: 1 # note\n",  # a comment
        "a: &x 1\nb: *x\n",  # an anchor and an alias
        "a: |\n  text\n",  # a block scalar
        "a:\n  b: 1\n",  # a nested mapping
        "a: plain\n  continued\n",  # a multi-line scalar
        "a: [x, [y]]\n",  # a nested list
        "a: {x: 1}\n",  # a flow mapping
        'a: "esc\\"aped"\n',  # an escape
        "a: 1\r\n",  # a carriage return
        "a:\n  - x\n    - y\n",  # items at two indentations
        "  a: 1\n",  # an indented mapping
        "a: b: c\n",  # a colon and a space inside a value
    ],
)
def test_flat_reader_declines(header: str) -> None:
    assert load_flat(header) is None


def test_values_past_the_bound_are_declined_and_refused() -> None:
    at_bound = "k: [" + ", ".join(["1"] * (MAX_YAML_NODES - 3)) + "]\n"  # root, key, list and items
    assert load_flat(at_bound) is not None
    past = "k: [" + ", ".join(["1"] * (MAX_YAML_NODES - 2)) + "]\n"
    assert load_flat(past) is None
    data, issues = load_careful(past)
    assert data is None and [i.code for i in issues] == ["N01"]


def test_parse_reads_a_flat_header_as_the_yaml_reader_does() -> None:
    text = "---\ntitle: Note\ntags: [a, b]\naliases:\n  - A\n---\n# Body\n"
    parsed = parse(text)
    assert parsed.data == {"title": "Note", "tags": ["a", "b"], "aliases": ["A"]}
    assert parsed.issues == [] and parsed.body_line == 7
