"""The Markdown scanner on a fixed corpus of tricky inputs: each case names the rule it pins."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultd.vault.markdown import links_in_value, parse_wiki_inner, scan, section_spans
from vaultd.vault.model import Block, Heading, Link, LinkKind, Tag


def headings(body: str) -> list[tuple[int, str]]:
    return [(h.level, h.text) for h in scan(body).headings]


def links(body: str) -> list[tuple[str, str, str | None, str | None]]:
    return [(link.kind.value, link.target, link.anchor, link.label) for link in scan(body).links]


def tags(body: str) -> list[str]:
    return [t.name for t in scan(body).tags]


# -- headings -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("# One", [(1, "One")]),
        ("###### Six", [(6, "Six")]),
        ("####### Seven", []),
        ("#NoSpace", []),
        ("   # Three spaces", [(1, "Three spaces")]),
        ("    # Four spaces", []),
        ("## Closed ##", [(2, "Closed")]),
        ("## Hash#inside #", [(2, "Hash#inside")]),
        ("## Escaped \\#", [(2, "Escaped \\#")]),
        ("#", [(1, "")]),
        ("# Title with `code` and [[Link]]", [(1, "Title with `code` and [[Link]]")]),
    ],
)
def test_atx_headings(body: str, expected: list[tuple[int, str]]) -> None:
    assert headings(body) == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("Title\n===", [(1, "Title")]),
        ("Title\n---", [(2, "Title")]),
        ("Two\nlines\n---", [(2, "Two lines")]),
        ("Para\n\n---", []),  # after a blank line: a thematic break
        ("---\ntext", []),  # at the start: a thematic break
        ("- item\n---", []),  # under a list item: a thematic break
        ("- item\nlazy\n---", []),  # lazy continuation of the item: still a break
        ("> quote\n---", []),
        ("# ATX\n---", [(1, "ATX")]),
        ("Text\n- - -", []),  # spaced dashes are never an underline
        ("```\ncode\n```\n---", []),  # under a fence: a break
        ("`code`\n---", [(2, "`code`")]),  # a line of inline code is paragraph text
    ],
)
def test_setext_headings(body: str, expected: list[tuple[int, str]]) -> None:
    assert headings(body) == expected


def test_heading_lines_are_whole_file_lines() -> None:
    text = "---\ntitle: x\n---\n\n# A\n\nB\n---\n"
    offset = text.index("\n\n# A") + 1
    result = scan(text, offset, 4)
    assert result.headings == [Heading(1, "A", 5), Heading(2, "B", 7)]


# -- code, comments -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "```\n[[Hidden]] #hidden\n```",
        "~~~python\n[[Hidden]] #hidden\n~~~",
        "````\n```\n[[Hidden]] #hidden\n````",  # a shorter run does not close
        "~~~~\n~~~\n[[Hidden]] #hidden\n~~~~",
        "```\n[[Hidden]] #hidden",  # unclosed: runs to the end
        "- item\n    ```\n    [[Hidden]] #hidden\n    ```",  # nested in a list item
        "> ```\n> [[Hidden]] #hidden\n> ```",
        "`[[Hidden]] #hidden`",
        "``a ` [[Hidden]] #hidden``",
        "%% [[Hidden]] #hidden %%",
        "%%\n[[Hidden]]\n#hidden\n%%",
        "%% unclosed [[Hidden]] #hidden",
        "<!-- [[Hidden]] #hidden -->",
        "<!--\n[[Hidden]]\n#hidden\n-->",
        "# `[[Hidden]]`",
    ],
)
def test_code_and_comments_hide_links_and_tags(body: str) -> None:
    result = scan(body)
    assert result.links == []
    assert result.tags == []


def test_fence_closes_and_text_after_it_counts() -> None:
    body = "```js\nlet a = '[[No]]'\n```\n[[Yes]] #yes\n~~~\n#no\n~~~~~\n[[Also]]"
    assert links(body) == [("wiki", "Yes", None, None), ("wiki", "Also", None, None)]
    assert tags(body) == ["yes"]


def test_unmatched_backticks_are_literal() -> None:
    assert links("a ` b [[Seen]] c") == [("wiki", "Seen", None, None)]
    assert links("``a` [[Seen]]") == [("wiki", "Seen", None, None)]


def test_code_span_does_not_cross_a_blank_line() -> None:
    assert links("`open\n\n[[Seen]] `") == [("wiki", "Seen", None, None)]


def test_backtick_info_string_with_backtick_is_not_a_fence() -> None:
    assert links("``` a`b\n[[Seen]]") == [("wiki", "Seen", None, None)]


def test_comment_opener_inside_code_is_ignored() -> None:
    assert links("`%%` [[Seen]] `<!--` [[Also]]") == [
        ("wiki", "Seen", None, None),
        ("wiki", "Also", None, None),
    ]


# -- wiki-links -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("[[t]]", ("wiki", "t", None, None)),
        ("[[t|label]]", ("wiki", "t", None, "label")),
        ("[[t#Heading]]", ("wiki", "t", "Heading", None)),
        ("[[t#H1#H2]]", ("wiki", "t", "H1#H2", None)),
        ("[[t#^id-1]]", ("wiki", "t", "^id-1", None)),
        ("[[#Heading]]", ("wiki", "", "Heading", None)),
        ("[[#^blk]]", ("wiki", "", "^blk", None)),
        ("[[t.md]]", ("wiki", "t.md", None, None)),
        ("[[folder/t]]", ("wiki", "folder/t", None, None)),
        ("[[t\\|label]]", ("wiki", "t", None, "label")),
        ("[[t#H\\|label]]", ("wiki", "t", "H", "label")),
        ("[[ spaced | label ]]", ("wiki", "spaced", None, " label ")),
        ("![[t]]", ("embed", "t", None, None)),
        ("![[image.png|300]]", ("embed", "image.png", None, "300")),
        ("![[t#Section]]", ("embed", "t", "Section", None)),
        ("[[한국어 노트]]", ("wiki", "한국어 노트", None, None)),
    ],
)
def test_wiki_link_forms(raw: str, expected: tuple[str, str, str | None, str | None]) -> None:
    assert links(f"see {raw}.") == [expected]


@pytest.mark.parametrize("raw", ["[[]]", "[[#]]", "[[|x]]", "[[a\nb]]", "[[a]b]]"])
def test_not_wiki_links(raw: str) -> None:
    assert scan(raw).links == []


def test_parse_wiki_inner() -> None:
    assert parse_wiki_inner("a#b#c|d|e") == ("a", "b#c", "d|e")
    assert parse_wiki_inner("a#") == ("a", None, None)
    assert parse_wiki_inner("   ") is None


def test_link_offsets_and_lines_are_whole_file() -> None:
    text = "---\nk: v\n---\nLine [[A|b]] and\n![[c.png]]\n"
    result = scan(text, 13, 4)
    assert result.links == [
        Link(LinkKind.WIKI, "A", None, "b", 4, 18, 25),
        Link(LinkKind.EMBED, "c.png", None, None, 5, 30, 40),
    ]
    assert [text[k.start : k.end] for k in result.links] == ["[[A|b]]", "![[c.png]]"]


def test_body_offset_excludes_frontmatter_links() -> None:
    text = "---\nup: '[[Parent]]'\n---\n[[Child]]"
    assert [k.target for k in scan(text, text.index("[[Child")).links] == ["Child"]


# -- Markdown links -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("[x](Note.md)", ("markdown", "Note.md", None, "x")),
        ("[x](Note%20Name.md)", ("markdown", "Note Name.md", None, "x")),
        ("[x](<Note Name.md>)", ("markdown", "Note Name.md", None, "x")),
        ("[x](../a/b.md#heading)", ("markdown", "../a/b.md", "heading", "x")),
        ("[x](b.md#Two%20Words)", ("markdown", "b.md", "Two Words", "x")),
        ("[x](b.md#^blk)", ("markdown", "b.md", "^blk", "x")),
        ("[x](#h)", ("markdown", "", "h", "x")),
        ('[x](Note.md "a title")', ("markdown", "Note.md", None, "x")),
        ("[x](Note_(draft).md)", ("markdown", "Note_(draft).md", None, "x")),
        ("[a [nested] label](n.md)", ("markdown", "n.md", None, "a [nested] label")),
        ("![alt](pic.png)", ("embed", "pic.png", None, "alt")),
    ],
)
def test_markdown_link_forms(raw: str, expected: tuple[str, str, str | None, str | None]) -> None:
    assert links(f"see {raw}.") == [expected]


@pytest.mark.parametrize(
    "raw",
    [
        "[x](https://example.com/a.md)",
        "[x](http://x.com/#frag)",
        "[x](mailto:a@b.c)",
        "[x](obsidian://open?vault=v)",
        "[x](//cdn.example.com/a.png)",
        "[x]()",
        "[x](Note Name.md)",  # a bare space ends the destination: not a link
        "[x] (Note.md)",
    ],
)
def test_not_markdown_links(raw: str) -> None:
    assert scan(raw).links == []


def test_wiki_link_wins_over_markdown_brackets() -> None:
    assert links("[[a]](b.md)") == [("wiki", "a", None, None)]


# -- tags -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("#tag", ["tag"]),
        ("a #tag, b #other.", ["tag", "other"]),
        ("#a/b/c #snake_case #kebab-case", ["a/b/c", "snake_case", "kebab-case"]),
        ("#123 #1a #2024/q1", ["1a", "2024/q1"]),
        ("#한국어 #東京 #Café", ["한국어", "東京", "Café"]),
        ("#Cafe\u0301", ["Cafe\u0301"]),  # NFD accents stay in the tag
        ('(#paren) [#bracket] "#quoted"', ["paren", "bracket", "quoted"]),
        ("foo#bar a/#b a&#39; \\#esc ##double", []),
        ("http://x.com/#frag https://x.com/?q=a#frag x.com/page#frag", []),
        ("[[Note#Heading]] [[#Local]] [x](#anchor) [y](n.md#h)", []),
        ("# Heading #intag", ["intag"]),
    ],
)
def test_tags(body: str, expected: list[str]) -> None:
    assert tags(body) == expected


def test_tag_lines() -> None:
    assert scan("a\n\n#x y #z", 0, 10).tags == [Tag("x", 12), Tag("z", 12)]


# -- block ids ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("A paragraph. ^abc-1", [Block("abc-1", 1)]),
        ("A paragraph. ^abc  ", [Block("abc", 1)]),
        ("- one\n- two\n\n^list-id", [Block("list-id", 4)]),
        ("> quote\n\n^q", [Block("q", 3)]),
        ("x^sup", []),
        ("^id then text", []),
        ("footnote[^1]", []),
        ("[[t#^ref]]", []),
        ("bad ^under_score", []),
        ("```\nx ^fenced\n```", []),
    ],
)
def test_block_ids(body: str, expected: list[Block]) -> None:
    assert scan(body).blocks == expected


# -- words ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("", 0),
        ("one two  three\nfour", 4),
        ("# Heading - with — dashes |", 3),
        ("code `not counted here` and\n```\nnor here\n```\nend", 3),
        ("東京オフィス", 6),  # Han and kana: one word per character
        ("해외사업단 회의 기록", 3),  # Hangul is written with spaces: one word per word
        ("Alpha 東京 test", 4),
        ("%% hidden words %% seen", 1),
    ],
)
def test_word_count(body: str, expected: int) -> None:
    assert scan(body).words == expected


# -- frontmatter values ---------------------------------------------------------------------------


def test_links_in_value() -> None:
    assert links_in_value("[[Parent#H|p]] and ![[x.png]]", 3) == [
        Link(LinkKind.FRONTMATTER, "Parent", "H", "p", 3, -1, -1),
        Link(LinkKind.FRONTMATTER, "x.png", None, None, 3, -1, -1),
    ]
    assert links_in_value("no links", 1) == []
    assert links_in_value("[[]]", 1) == []


# -- sections -------------------------------------------------------------------------------------

SECTIONS = """---
title: s
---
# Top
## Alpha
text
### Deeper
more
```
## Alpha
```
## Beta
b
# Next
## Alpha
last
"""


def test_section_spans_run_to_the_next_h1_or_h2() -> None:
    offset = SECTIONS.index("# Top")
    spans = section_spans(SECTIONS, offset, "Alpha")
    assert len(spans) == 2  # the fenced "## Alpha" is not a heading
    first, second = spans
    assert SECTIONS[first[0] : first[1]] == "## Alpha\ntext\n### Deeper\nmore\n```\n## Alpha\n```\n"
    assert SECTIONS[second[0] : second[1]] == "## Alpha\nlast\n"
    beta = section_spans(SECTIONS, offset, " Beta ")
    assert [SECTIONS[a:b] for a, b in beta] == ["## Beta\nb\n"]


def test_section_spans_match_exactly() -> None:
    assert section_spans("## alpha\n", 0, "Alpha") == []
    assert section_spans("# Alpha\n", 0, "Alpha") == []
    assert section_spans("Alpha\n---\nx", 0, "Alpha") == [(0, 11)]


# -- line endings ---------------------------------------------------------------------------------

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample-vault"


SAMPLE_NOTES = sorted(rel for p in SAMPLE.rglob("*.md") if not (rel := p.relative_to(SAMPLE).as_posix()).startswith("."))


@pytest.mark.parametrize("path", SAMPLE_NOTES)
def test_crlf_notes_scan_like_lf_notes(path: str) -> None:
    """Notes saved on Windows end lines in CRLF; only the offsets may differ."""
    lf = (SAMPLE / path).read_text(encoding="utf-8")
    crlf = lf.replace("\n", "\r\n")
    lf_offset = lf.find("\n---\n", 3) + 5
    crlf_offset = lf_offset + lf.count("\n", 0, lf_offset)
    line = lf.count("\n", 0, lf_offset) + 1
    a, b = scan(lf, lf_offset, line), scan(crlf, crlf_offset, line)
    assert (a.headings, a.blocks, a.tags, a.words) == (b.headings, b.blocks, b.tags, b.words)
    strip = [(k.kind, k.target, k.anchor, k.label, k.line) for k in a.links]
    assert strip == [(k.kind, k.target, k.anchor, k.label, k.line) for k in b.links]
    assert [crlf[k.start : k.end] for k in b.links] == [lf[k.start : k.end] for k in a.links]
