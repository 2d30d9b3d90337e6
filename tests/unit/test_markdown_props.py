"""Properties of the scanner over generated text: it never raises, its offsets point at what it
reports, fenced code hides everything, and generated link syntax parses back to its parts."""

from __future__ import annotations

import re
from urllib.parse import unquote

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultd.vault.markdown import _mask, scan, section_spans
from vaultd.vault.model import Block, Heading, LinkKind, Tag

# Text biased toward the characters the scanner cares about, plus some of everything else.
SYNTAX = ["[[", "]]", "\\|", "```", "~~~", "%%", "<!--", "-->", "%20", ".md", "e\u0301", "\n", "\t", "\r"]
MARKDOWN_BITS = st.sampled_from([*SYNTAX, *"[]()!#|^`-=><:/ aBé한東"])
MARKDOWN_TEXT = st.lists(st.one_of(MARKDOWN_BITS, st.text(max_size=4)), max_size=60).map("".join)

SAFE_NAME = (
    st.text(
        alphabet=st.characters(categories=("L", "N"), include_characters=" -_.,'", exclude_characters="\u2028\u2029\x85"),
        min_size=1,
        max_size=20,
    )
    .map(str.strip)
    .filter(bool)
)


@settings(max_examples=400)
@given(MARKDOWN_TEXT, st.integers(min_value=0, max_value=70))
def test_scan_never_raises_and_offsets_are_consistent(text: str, cut: int) -> None:
    offset = min(cut, len(text))
    result = scan(text, offset, text.count("\n", 0, offset) + 1)
    for link in result.links:
        raw = text[link.start : link.end]
        assert offset <= link.start < link.end <= len(text)
        assert raw[0] in "[!" and raw[-1] in "])"
        assert link.line == text.count("\n", 0, link.start) + 1
        assert link.target in raw or link.target in unquote(raw)
        if link.anchor is not None:
            assert link.anchor in raw or link.anchor in unquote(raw)
    items: list[Heading | Block | Tag] = [*result.headings, *result.blocks, *result.tags]
    for item in items:
        assert text.count("\n", 0, offset) + 1 <= item.line <= text.count("\n") + 1
    assert result.words >= 0
    section_spans(text, offset, "a")


@given(
    MARKDOWN_TEXT,
    st.sampled_from(["```", "~~~", "````", "~~~~~"]),
    st.text(alphabet="[]!#^|ab \n", max_size=80),
)
def test_links_inside_fences_never_appear(before: str, fence: str, code: str) -> None:
    code = code.replace("`", "").replace("~", "")
    # ``before`` must not open code or a comment of its own, or our fence would close it.
    prefix = "".join(c for c in before if c not in "`~%<") + "\n"
    text = f"{prefix}{fence}\n[[Fenced]] #fenced ^fenced\n{code}\n{fence}\nafter"
    opened = text.index(fence, len(prefix))
    closed = text.rindex(fence) + len(fence)
    result = scan(text)
    fenced_lines = range(text.count("\n", 0, opened) + 1, text.count("\n", 0, closed) + 2)
    assert all(not (opened <= k.start < closed) for k in result.links)
    assert all(t.line not in fenced_lines for t in result.tags)
    assert all(b.line not in fenced_lines for b in result.blocks)


@given(
    st.booleans(),
    SAFE_NAME.filter(lambda s: "|" not in s),
    st.one_of(st.none(), SAFE_NAME, SAFE_NAME.map(lambda s: "^" + "".join(c for c in s if c.isalnum()) or "^x")),
    st.one_of(st.none(), SAFE_NAME),
    st.booleans(),
)
def test_wiki_link_round_trip(embed: bool, target: str, anchor: str | None, label: str | None, escaped: bool) -> None:
    raw = ("!" if embed else "") + "[[" + target + (f"#{anchor}" if anchor else "")
    raw += (("\\|" if escaped else "|") + label if label else "") + "]]"
    text = f"Intro line\nsee {raw} here"
    (link,) = scan(text).links
    assert link.kind is (LinkKind.EMBED if embed else LinkKind.WIKI)
    assert (link.target, link.anchor, link.label) == (target, anchor, label)
    assert text[link.start : link.end] == raw
    assert link.line == 2


@given(SAFE_NAME.filter(lambda s: "(" not in s and ")" not in s), st.one_of(st.none(), SAFE_NAME), SAFE_NAME)
def test_markdown_link_round_trip(target: str, anchor: str | None, label: str) -> None:
    encoded = target.replace("%", "%25").replace(" ", "%20")
    dest = encoded + ("#" + anchor.replace("%", "%25").replace(" ", "%20") if anchor else "")
    label = label.replace("[", "").replace("]", "") or "x"
    raw = f"[{label}]({dest})"
    (link,) = scan(f"x {raw} y").links
    assert (link.kind, link.target, link.anchor, link.label) == (LinkKind.MARKDOWN, target, anchor, label)


@given(
    st.lists(
        st.text(alphabet=st.characters(categories=("Lu", "Ll", "Lt", "Lm", "Lo")), min_size=1, max_size=8),
        min_size=1,
        max_size=3,
    )
)
def test_tag_round_trip(parts: list[str]) -> None:
    name = "/".join(parts)
    (tag,) = scan(f"text #{name} more").tags
    assert tag.name == name


# Whitespace of every kind str.split knows (the file separators, NEL, no-break and ideographic
# spaces), punctuation alone and inside words, NUL (a masked code span), CJK, marks, a surrogate.
WORD_BITS = st.sampled_from(
    [*" \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u2003\u3000", *"-|#>*—“”…\x00_1a", "é", "e\u0301", "東京", "한", "\ud800", "a-b", "--"]
)


def _words_by_tokens(clean: str) -> int:
    """The word count's definition, a token at a time: each Han or kana character is a word,
    and so is every whitespace-separated token holding a letter, digit or underscore."""
    cjk = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f]")
    han = len(cjk.findall(clean))
    return han + sum(1 for token in cjk.sub(" ", clean).split() if re.search(r"\w", token))


@settings(max_examples=600)
@given(st.lists(st.one_of(WORD_BITS, st.text(max_size=3)), max_size=40).map("".join))
def test_word_count_is_the_tokens_holding_a_word_character(text: str) -> None:
    assert scan(text).words == _words_by_tokens(_mask("\n" + text))
