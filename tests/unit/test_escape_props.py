"""Properties of the terminal escaping: nothing a terminal acts on survives, printable text is
unchanged, data escaping is reversible (so injective), and escaped JSON decodes to the same value."""

from __future__ import annotations

import json
import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultctl.render import table
from vaultctl.terminal import escape, escape_json

ACTIVE = "[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
_ACTIVE_ANYWHERE = re.compile(ACTIVE)
_ACTIVE_IN_BLOCK = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]|\r(?!\n)")

# A reader for the escaped form: what a person (or a script) would undo.
_TOKEN = re.compile(r"\\(\\|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4})")


def unescape(text: str) -> str:
    return _TOKEN.sub(lambda m: "\\" if m.group(1) == "\\" else chr(int(m.group(1)[1:], 16)), text)


# Heavy on what matters: controls, bidi, surrogates, backslashes and the letters of an escape.
_tricky = st.sampled_from(
    [
        "\\",
        "x",
        "u",
        "1",
        "b",
        "e",
        "F",
        "\x1b",
        "\x07",
        "\x00",
        "\t",
        "\n",
        "\r",
        "\x7f",
        "\x9b",
        "\x85",
        "\u202e",
        "\u2066",
        "\u2069",
        "\ud800",
        "\udcff",
        "é",
        "漢",
        " ",
    ]
)
texts = st.lists(st.one_of(_tricky, st.characters(), st.characters(codec="utf-8", categories=["Cc", "Cf", "Cs"])), max_size=40).map("".join)
printable = st.text(
    st.characters(exclude_categories=["Cc", "Cs"], exclude_characters="\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"), max_size=40
)
modes = st.booleans()


@given(texts, modes)
def test_one_line_output_has_no_terminal_control(text: str, reversible: bool) -> None:
    out = escape(text, reversible=reversible)
    assert not _ACTIVE_ANYWHERE.search(out)


@given(texts, modes)
def test_block_output_keeps_only_newlines_tabs_and_crlf(text: str, reversible: bool) -> None:
    out = escape(text, multiline=True, reversible=reversible)
    assert not _ACTIVE_IN_BLOCK.search(out)
    assert out.count("\n") == text.count("\n")


@given(texts, modes)
def test_data_escaping_is_reversible(text: str, multiline: bool) -> None:
    assert unescape(escape(text, multiline=multiline)) == text


@given(texts, texts)
def test_data_escaping_is_injective(a: str, b: str) -> None:
    if a != b:
        assert escape(a) != escape(b)


@given(printable)
def test_printable_text_passes_unchanged_in_messages(text: str) -> None:
    assert escape(text, reversible=False) == text


@given(printable.filter(lambda t: "\\" not in t), modes)
def test_printable_text_without_backslashes_passes_unchanged(text: str, multiline: bool) -> None:
    assert escape(text, multiline=multiline) == text


@given(printable.filter(lambda t: not re.search(r"\\(\\|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4})", t)))
def test_a_backslash_that_starts_no_escape_is_left_alone(text: str) -> None:
    assert escape(text) == text


@pytest.mark.parametrize(
    "text, shown",
    [
        ("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07"),
        ("\x1b[2J", "\\x1b[2J"),
        ("a\u202eb", "a\\u202eb"),
        ("\x9b", "\\x9b"),
        ("C:\\Users", "C:\\Users"),
        ("\\x1b", "\\\\x1b"),  # the four printable characters, so they cannot pass for an ESC
        ("\\\x1b", "\\\\\\x1b"),
        ("line\r\nnext", "line\\x0d\\x0anext"),
    ],
)
def test_examples(text: str, shown: str) -> None:
    assert escape(text) == shown
    assert unescape(shown) == text


def test_a_block_keeps_crlf_but_not_a_lone_cr() -> None:
    assert escape("a\r\nb\rc\td", multiline=True) == "a\r\nb\\x0dc\td"


@given(texts.map(lambda t: t.encode("utf-8", "replace").decode("utf-8")))
def test_escaped_json_decodes_to_the_same_value(text: str) -> None:
    encoded = escape_json(json.dumps({"name": text}, ensure_ascii=False))
    assert not _ACTIVE_ANYWHERE.search(encoded)
    assert json.loads(encoded) == {"name": text}


def _columns(shown: str) -> int:
    """Columns by the terminal's rule (wcwidth): a combining mark draws on the character before it
    and takes none, East Asian wide and fullwidth characters take two, the rest one."""
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in shown)


def test_a_decomposed_accent_takes_one_column_and_keeps_the_columns_in_line() -> None:
    lines = escape(table(["a", "b"], [("e\u0301", "z"), ("ee", "z")]), multiline=True).splitlines()
    assert [line.index("z") - line.count("\u0301") for line in lines[1:]] == [lines[0].index("B")] * 2


@given(st.lists(st.tuples(texts.map(lambda t: t.replace("\t", " ")), texts.map(lambda t: t + "z")), min_size=1, max_size=5))
def test_table_columns_line_up_once_escaped(rows: list[tuple[str, str]]) -> None:
    """Widths are measured on the escaped cells, so the second column starts at one place; a cell
    is escaped as one line (a tab or newline in a name cannot move the columns or forge a row)."""
    lines = escape(table(["a", "b"], rows), multiline=True).splitlines()
    start = lines[0].index("B")
    assert len(lines) == len(rows) + 1
    for line, (_a, b) in zip(lines[1:], rows, strict=True):
        shown_b = escape(b)  # a cell is one value: escaped as one line, tabs and newlines too
        assert line.endswith(shown_b), (line, shown_b)
        assert _columns(line[: len(line) - len(shown_b)]) == start, (line, shown_b)
