"""A spec's body read a page at a time: the pages put back together are the body, none splits a
character, and a section is the text under its heading to the next heading of its level."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultd.errors import InvalidParams
from vaultd.specs.documents import headings, page, section


@given(st.text(st.characters(codec="utf-8"), max_size=300), st.integers(min_value=1, max_value=64))
def test_pages_put_back_together_are_the_body(body: str, size: int) -> None:
    offset: int | None = 0
    parts = []
    while offset is not None:
        text, offset_next, total = page(body, offset, size)
        assert len(text.encode("utf-8")) <= max(size, 4) and total == len(body.encode("utf-8"))
        assert text or offset_next is None  # every page moves on
        parts.append(text)
        offset = offset_next
    assert "".join(parts) == body


def test_an_offset_inside_a_character_is_refused() -> None:
    with pytest.raises(InvalidParams):
        page("é", 1, 10)
    with pytest.raises(InvalidParams):
        page("abc", 4, 10)


def test_a_section_ends_at_the_next_heading_of_its_level() -> None:
    body = "# T\n\n## A\n\na\n\n### A1\n\nx\n\n```\n## not a heading\n```\n## B\n\nb\n"
    assert [(level, text) for level, _, text in headings(body)] == [(1, "T"), (2, "A"), (3, "A1"), (2, "B")]
    assert section(body, "a") == "## A\n\na\n\n### A1\n\nx\n\n```\n## not a heading\n```\n"
    assert section(body, "## B") == "## B\n\nb\n"
    assert section(body, "C") is None
