"""Wikify's finder: whole words, any case, the first free mention of each note only, never where
Obsidian reads no prose."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vaultd.wikify.find import mentions, names_table

NAMES = names_table([("Alpha.md", ["Alpha", "First Letter"]), ("Beta.md", ["Beta"]), ("Me.md", ["Me", "Myself"])])


def _found(text: str, body_offset: int = 0, spans: list[tuple[int, int]] | None = None) -> list[tuple[str, str]]:
    return [(m.text, m.path) for m in mentions(text, body_offset, spans or [], NAMES, "Me.md")]


def test_whole_words_any_case_first_mention_only() -> None:
    assert _found("alphabet ALPHA alpha beta") == [("ALPHA", "Alpha.md"), ("beta", "Beta.md")]
    assert _found("the first letter, then Alpha") == [("first letter", "Alpha.md")]
    assert _found("myself and me") == [], "a note never links to itself"


def test_never_in_code_headings_tables_urls_tags_links_or_frontmatter() -> None:
    text = "---\nname: alpha\n---\n# Alpha\n`alpha` ~~~\n```\nalpha\n```\n| alpha |\nhttps://x.org/alpha #alpha [[Alpha]] %% alpha %%\n"
    link = text.index("[[Alpha]]")
    assert _found(text, body_offset=text.index("# Alpha"), spans=[(link, link + len("[[Alpha]]"))]) == []


def test_a_name_two_notes_share_is_left_out_and_short_names_too() -> None:
    table = names_table([("a/Same.md", ["Same"]), ("b/Same.md", ["Same"]), ("Go.md", ["Go"])])
    assert table == {}


@given(st.lists(st.sampled_from(["alpha", "Beta", "x", "#alpha", "`beta`", "first", "letter", "\n", "[[Alpha]]"]), max_size=20))
def test_mentions_are_whole_words_of_the_text_and_unique_per_note(words: list[str]) -> None:
    text = " ".join(words)
    found = mentions(text, 0, [], NAMES, "Me.md")
    assert len({m.path for m in found}) == len(found)
    for m in found:
        assert text[m.start : m.end] == m.text
        assert m.start == 0 or not text[m.start - 1].isalnum()
        assert m.end == len(text) or not text[m.end].isalnum()
        assert "`" not in text[max(0, m.start - 1) : m.end + 1]


def test_mentions_stop_at_their_bound() -> None:
    from vaultd.wikify.find import MAX_MENTIONS

    table = names_table([(f"N{i:03}.md", [f"name{i:03}"]) for i in range(MAX_MENTIONS + 1)])
    text = " ".join(f"name{i:03}" for i in range(MAX_MENTIONS + 1))
    found = mentions(text, 0, [], table, "Me.md")
    assert len(found) == MAX_MENTIONS and found[-1].text == f"name{MAX_MENTIONS - 1:03}"
    assert len(mentions(" ".join(text.split()[:MAX_MENTIONS]), 0, [], table, "Me.md")) == MAX_MENTIONS
