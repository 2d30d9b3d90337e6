"""Fitting text to a terminal: wrapping by columns, sharing a width among table columns, colour and
width decisions, search highlights, frontmatter values and ``--set`` assignments."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]
from hypothesis import given
from hypothesis import strategies as st

from protocol.methods.reads import SearchHit
from vaultctl import assignments, display, layout, render
from vaultctl.hits import hits_text, matched_text, snippet_lines
from vaultctl.note_view import scalar

TEXT = st.text(alphabet=st.sampled_from(list("ab  cd-/.해外")), max_size=120)


@given(TEXT, st.integers(min_value=1, max_value=40))
def test_wrapped_lines_fit_and_keep_every_visible_character(text: str, width: int) -> None:
    lines = layout.wrap(text, width)
    assert lines
    for line in lines:
        # a line is over the width only when it is a single character wider than the width itself
        assert layout.columns(line) <= width or len(line) == 1
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")


@given(TEXT, st.integers(min_value=1, max_value=40))
def test_wrap_spans_are_ordered_slices_of_the_text(text: str, width: int) -> None:
    spans = layout.wrap_spans(text, width)
    assert [text[a:b] for a, b in spans] == layout.wrap(text, width)
    assert all(a <= b for a, b in spans) and all(spans[i][1] <= spans[i + 1][0] for i in range(len(spans) - 1))


def test_wide_characters_take_two_columns() -> None:
    assert layout.columns("해외") == 4 and layout.columns("ab") == 2 and layout.columns("e\u0301") == 1
    assert layout.wrap("해외사업단 킥오프", 10) == ["해외사업단", "킥오프"]


@given(
    st.lists(st.integers(min_value=1, max_value=80), min_size=1, max_size=6),
    st.integers(min_value=10, max_value=200),
)
def test_share_fits_when_the_floors_allow_and_never_goes_below_them(natural: list[int], limit: int) -> None:
    floors = [min(n, layout.MIN_COLUMN) for n in natural]
    widths = layout.share(natural, floors, limit)
    assert all(f <= w <= n for f, w, n in zip(floors, widths, natural, strict=True))
    gaps = 2 * (len(widths) - 1)
    if sum(floors) + gaps <= limit:
        assert sum(widths) + gaps <= limit
    if sum(natural) + gaps <= limit:
        assert widths == natural


def test_a_table_fits_the_width_it_is_given() -> None:
    rows = [("projects/alpha/a very long note name that goes on and on.md", "Title " * 8, "project")] * 3
    out = render.table(["path", "title", "type"], rows, limit=50)
    assert all(layout.columns(line) <= 50 for line in out.splitlines()), out
    assert out.splitlines()[0].split() == ["PATH", "TITLE", "TYPE"]
    assert "project" in out and "goes" in out
    unlimited = render.table(["path", "title", "type"], rows, limit=None)
    assert len(unlimited.splitlines()) == 4


def _stream(tty: bool) -> io.StringIO:
    stream = io.StringIO()
    stream.isatty = lambda: tty  # type: ignore[method-assign]
    return stream


@pytest.mark.parametrize(
    ("mode", "env", "tty", "expected"),
    [
        (display.ColorMode.AUTO, {}, True, True),
        (display.ColorMode.AUTO, {}, False, False),
        (display.ColorMode.AUTO, {"NO_COLOR": "1"}, True, False),
        (display.ColorMode.AUTO, {"NO_COLOR": ""}, True, True),  # set but empty does not count (no-color.org)
        (display.ColorMode.AUTO, {"TERM": "dumb"}, True, False),
        (display.ColorMode.ALWAYS, {"NO_COLOR": "1", "TERM": "dumb"}, False, True),
        (display.ColorMode.NEVER, {}, True, False),
    ],
)
def test_colour_follows_the_flag_then_the_environment(mode: display.ColorMode, env: dict[str, str], tty: bool, expected: bool) -> None:
    display.set_mode(mode)
    try:
        assert display.colour(_stream(tty), env) is expected
    finally:
        display.set_mode(display.ColorMode.AUTO)


def test_width_is_columns_else_the_terminal_else_none() -> None:
    assert display.width(_stream(False), {"COLUMNS": "64"}) == 64
    assert display.width(_stream(False), {}) is None
    assert display.width(_stream(False), {"COLUMNS": "nope"}) is None
    assert display.width(_stream(False), {"COLUMNS": "3"}) == display.MIN_WIDTH


def test_highlights_turn_into_colour_and_a_notes_own_stars_stay() -> None:
    excerpt = "see alpha and 2 ** 3 alpha…"
    hit = SearchHit(
        path="a.md", title="A", score=1.0, snippet="see **alpha** and 2 ** 3 **alpha**…", excerpt=excerpt, highlights=[(4, 9), (21, 26)]
    )
    text, matched = matched_text(hit)
    assert text == excerpt
    assert "".join(c for c, m in zip(text, matched, strict=True) if m) == "alphaalpha"
    plain = snippet_lines(hit, None, on=False)
    assert plain == ["  see alpha and 2 ** 3 alpha…"]
    painted = snippet_lines(hit, None, on=True)[0]
    assert painted.count(display.Paint.MATCH) == 2 and "**alpha**" not in painted


def test_a_span_past_the_excerpt_is_ignored_and_a_hit_without_one_shows_its_snippet() -> None:
    hit = SearchHit(path="a.md", title="A", score=1.0, snippet="s", excerpt="plain text", highlights=[(2, 4), (50, 60)])
    assert matched_text(hit) == ("plain text", [False, False, True, True, *[False] * 6])
    bare = SearchHit(path="a.md", title="A", score=1.0, snippet="doi:10.1/x")
    assert matched_text(bare) == ("doi:10.1/x", [False] * 10)


def test_hits_fit_the_width_and_escape_what_a_terminal_would_act_on() -> None:
    hit = SearchHit(
        path="a/\x1b]0;x\x07.md",
        title="T",
        score=1.0,
        snippet="**word** " * 40,
        excerpt="word " * 40,
        highlights=[(5 * i, 5 * i + 4) for i in range(40)],
    )
    out = hits_text([hit], limit=40, on=False)
    assert "\x1b" not in out and "\\x1b" in out
    assert all(layout.columns(line) <= 40 for line in out.splitlines()), out
    assert "**" not in out


SCALARS = st.recursive(
    st.one_of(
        st.text(max_size=30),
        st.integers(min_value=-(10**9), max_value=10**9),
        st.booleans(),
        st.none(),
    ),
    lambda inner: st.lists(inner, max_size=4),
    max_leaves=8,
)


@given(SCALARS)
def test_a_frontmatter_value_reads_back_as_itself(value: Any) -> None:
    shown = scalar(value)
    assert "\n" not in shown
    assert yaml.safe_load(f"k: {shown}")["k"] == value


def test_assignments_take_strings_json_values_and_objects() -> None:
    got = assignments.parse(["status=done", "count:=3", 'tags:=["a","b"]', "year=2024", "eq=a=b", '{"draft": true}'])
    assert got == {"status": "done", "count": 3, "tags": ["a", "b"], "year": "2024", "eq": "a=b", "draft": True}


@pytest.mark.parametrize("bad", ["novalue", "=x", "n:=nope", "{not json", "[1]", "a=1|a=2"])
def test_bad_assignments_say_what_is_wrong(bad: str) -> None:
    with pytest.raises(assignments.BadAssignment) as info:
        assignments.parse(bad.split("|"))
    assert "--set" in str(info.value)


def test_json_object_assignment_round_trip() -> None:
    obj = {"a": [1, {"b": None}], "c": "x"}
    assert assignments.parse([json.dumps(obj)]) == obj
