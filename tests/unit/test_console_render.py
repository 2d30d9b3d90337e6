"""The console's Markdown renderer: Obsidian's links as the console's links, and no way for a
note's text to put script, event handlers or a dangerous address into the page.

A fixed table of hostile notes, and a property over generated text built from the pieces such
notes are made of: whatever the note, every tag and attribute in the output is one the renderer
chose, and every address is a console route or an http(s)/mailto link.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultctl.console.render import NoteContext, Wikilink, parse, render, render_text, safe_link, wikilinks

ALLOWED_TAGS = {
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "a", "em", "strong", "s", "code", "pre", "blockquote", "ul", "ol", "li",
    "hr", "br", "table", "thead", "tbody", "tr", "th", "td", "span", "section",
}  # fmt: skip
ALLOWED_ATTRS = {"class", "href", "title", "target", "rel", "data-source", "start", "style"}
STYLE = re.compile(r"^text-align:(left|right|center)$")


def ctx(**kw: object) -> NoteContext:
    return NoteContext(vault="notes", path="folder/Here.md", **kw)  # type: ignore[arg-type]


class Audit(HTMLParser):
    """Every tag, attribute and address in rendered HTML, and what is wrong with them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED_TAGS:
            self.problems.append(f"tag <{tag}>")
        for name, value in attrs:
            if name not in ALLOWED_ATTRS:
                self.problems.append(f"attribute {name} on <{tag}>")
            if name == "href" and not (value or "").startswith(("#/note/notes/", "http://", "https://", "mailto:")):
                self.problems.append(f"address {value!r}")
            if name == "style" and not STYLE.match(value or ""):
                self.problems.append(f"style {value!r}")
            if name == "target" and value != "_blank":
                self.problems.append(f"target {value!r}")

    def handle_comment(self, data: str) -> None:
        self.problems.append("a comment")

    def handle_decl(self, decl: str) -> None:
        self.problems.append("a declaration")

    def handle_pi(self, data: str) -> None:
        self.problems.append("a processing instruction")


def audit(html: str) -> list[str]:
    parser = Audit()
    parser.feed(html)
    parser.close()
    return parser.problems


HOSTILE = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    '<img src=x onerror="alert(1)">',
    "<svg/onload=alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    "[x](javascript:alert(1))",
    "[x](JAVASCRIPT:alert(1))",
    "[x](java\tscript:alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD4=)",
    "[x](vbscript:msgbox(1))",
    "[x](file:///etc/passwd)",
    "[x](//evil.example/)",
    "<javascript:alert(1)>",
    "![x](javascript:alert(1))",
    '![x](https://evil.example/track.png "t")',
    '[[x" onmouseover="alert(1)]]',
    "[[a|<img src=x onerror=alert(1)>]]",
    '![[y"><script>alert(1)</script>]]',
    "<iframe src=javascript:alert(1)></iframe>",
    '<details open ontoggle="alert(1)">x</details>',
    "<style>body{display:none}</style>",
    '<div style="background:url(javascript:alert(1))">x</div>',
    "```\n</code></pre><script>alert(1)</script>\n```",
    "`<script>alert(1)</script>`",
    '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    "<base href=//evil.example/>",
    "<form action=//evil.example><button>x</button></form>",
    '[x](https://ok.example/" onclick="alert(1))',
    "<!-- <script>alert(1)</script> -->",
    "%% <script>alert(1)</script> %%",
    "| a | b |\n|:-|-:|\n| <script> | [x](javascript:1) |",
]


@pytest.mark.parametrize("note", HOSTILE)
def test_a_hostile_note_renders_only_markup_of_our_choosing(note: str) -> None:
    html = render_text(note, ctx())
    assert audit(html) == [], html
    assert "<script" not in html.lower()


def test_raw_html_is_shown_as_text_and_comments_are_hidden() -> None:
    html = render_text("<b onclick=x>bold</b>\n\n<div>block</div>\n\n<!-- hidden -->\n\ntext %% hidden too %% end", ctx())
    assert '<code class="raw-html">&lt;b onclick=x&gt;</code>' in html
    assert '<pre class="raw-html">&lt;div&gt;block&lt;/div&gt;\n</pre>' in html
    assert "hidden" not in html and "text  end" in html


def test_wikilinks_open_notes_in_the_console_and_dead_ones_say_so() -> None:
    resolved = {"alpha plan": "projects/Alpha Plan.md", "gone": None}
    html = render_text("[[Alpha Plan#Goals|the plan]] [[Gone]] [[Unlisted]] [[#Here]] ![[pic.png]]", ctx(resolved=resolved))
    assert '<a class="wikilink" href="#/note/notes/projects%2FAlpha%20Plan.md" title="projects/Alpha Plan.md">the plan</a>' in html
    assert '<a class="wikilink dead" href="#/note/notes/Gone" title="no note \'Gone\' in this vault">Gone</a>' in html
    assert '<a class="wikilink" href="#/note/notes/Unlisted" title="Unlisted">Unlisted</a>' in html  # the daemon resolves it on open
    assert '<a class="wikilink" href="#/note/notes/folder%2FHere.md">Here</a>' in html
    assert '<span class="embed-file" title="pic.png">pic.png</span>' in html


def test_an_embedded_note_is_shown_once_within_the_budget() -> None:
    embeds = {"part": "<p>inner</p>"}
    html = render_text("![[Part]]\n\n![[Part]]", ctx(resolved={"part": "Part.md"}, embeds=embeds, embed_budget=1))
    assert html.count('<section class="embed" data-source="Part.md">') == 1
    assert html.count("<p>inner</p>") == 1 and 'href="#/note/notes/Part.md"' in html


def test_relative_links_to_notes_open_in_the_console_and_others_are_inert() -> None:
    note = ctx()
    assert safe_link("../people/Ada%20Lovelace.md", note) == ("#/note/notes/people%2FAda%20Lovelace.md", False)
    assert safe_link("Sub/Note.md", note) == ("#/note/notes/folder%2FSub%2FNote.md", False)
    assert safe_link("https://obsidian.md/x?a=1", note) == ("https://obsidian.md/x?a=1", True)
    assert safe_link("mailto:ada@example.org", note) == ("mailto:ada@example.org", True)
    for inert in ("../../outside.md", "/etc/passwd.md", "picture.png", "#heading", "//evil.example/a.md", "https:no-host", "ftp://x/y.md"):
        assert safe_link(inert, note) is None, inert


def test_obsidian_marks_tags_and_drops_block_ids() -> None:
    html = render_text("A line ^block-1\n\n#tag/nested and #123 and a#b", ctx())
    assert "^block-1" not in html and "A line" in html
    assert '<span class="tag">#tag/nested</span>' in html and "#123" in html and "a#b" in html


def test_wikilinks_are_parsed_as_obsidian_writes_them() -> None:
    assert Wikilink.parse("Note#Head|Label", embed=False) == Wikilink("Note", "Head", "Label", False)
    assert Wikilink.parse("#Head", embed=False) == Wikilink("", "Head", "Head", False)
    assert Wikilink.parse("pic.png", embed=True).is_note is False
    assert Wikilink.parse("Some.Name", embed=True).is_note is False  # an extension is a file, not a note
    assert [w.target for w in wikilinks(parse("`[[code]]` [[real]]\n\n```\n[[fenced]]\n```", ctx()))] == ["real"]


PIECES = st.sampled_from(
    [
        "<", ">", '"', "'", "`", "&", "[", "]", "(", ")", "!", "#", "%%", "^", "|", ":", "=", "/", "\\", " ", "\n", "\n\n",
        "*", "_", "-", "```", "<script>", "</script>", "<img src=x ", "onerror=", "onload=", "javascript:", "JaVaScRiPt:",
        "data:text/html,", "vbscript:", "[[", "]]", "![[", "](", "<a href=", "http://x", "https://y", "mailto:z", "<!--",
        "-->", "&#106;", "&lt;", "<svg", "<style>", "style=", "\t", "a", "Note", ".md", "../", "|:-|", "| a |", "> ", "1. ",
    ]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(
    st.lists(PIECES, max_size=40).map("".join), st.dictionaries(st.sampled_from(["a", "note", "x"]), st.one_of(st.none(), st.just("a.md")))
)
def test_no_note_can_put_script_or_a_bad_address_in_the_page(note: str, resolved: dict[str, str | None]) -> None:
    tokens = parse(note, ctx(resolved=resolved))
    html = render(tokens, ctx(resolved=resolved, embeds={"note": "<p>embedded</p>"}))
    assert audit(html) == [], (note, html)
