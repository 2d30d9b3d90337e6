"""Heading-aware chunks: each sits under its heading path, and its line range names its lines."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultd.retrieve.chunks import MAX_WORDS, chunk_note
from vaultd.vault import frontmatter, markdown

NOTE = """---
title: T
---
# Top

Intro line.

## Goals

First goal.
Second goal.

### Detail

Deep text.

## Empty

## Risks
Risky.
"""


def chunks_of(text: str):  # type: ignore[no-untyped-def]
    fm = frontmatter.parse(text)
    scan = markdown.scan(text, fm.body_offset, fm.body_line)
    return chunk_note(text[fm.body_offset :], fm.body_line, scan.headings)


def test_chunks_follow_headings_and_lines() -> None:
    found = chunks_of(NOTE)
    assert [(c.heading, c.line_start, c.line_end) for c in found] == [
        (("Top",), 4, 6),
        (("Top", "Goals"), 8, 11),
        (("Top", "Goals", "Detail"), 13, 15),
        (("Top", "Risks"), 19, 20),
    ]
    lines = NOTE.split("\n")
    for c in found:
        assert c.text == "\n".join(lines[c.line_start - 1 : c.line_end])


def test_long_sections_are_cut() -> None:
    body = "# H\n\n" + "\n\n".join(" ".join(["word"] * 50) for _ in range(20)) + "\n"
    found = chunks_of(body)
    assert len(found) > 1 and all(len(c.text.split()) <= MAX_WORDS + 60 for c in found)
    assert all(c.heading == ("H",) for c in found)


lines_st = st.lists(
    st.one_of(
        st.sampled_from(["", "# A", "## B", "### C", "text here", "```", "more words and more"]),
        st.text(alphabet="abc #\t", max_size=12),
    ),
    max_size=60,
)


@settings(max_examples=200)
@given(lines_st)
def test_chunks_are_ordered_disjoint_and_quote_their_lines(lines: list[str]) -> None:
    text = "\n".join(lines)
    found = chunks_of(text)
    all_lines = text.split("\n")
    last = 0
    for c in found:
        assert last < c.line_start <= c.line_end <= len(all_lines)
        assert c.text == "\n".join(all_lines[c.line_start - 1 : c.line_end])
        assert c.text.strip()
        last = c.line_end
