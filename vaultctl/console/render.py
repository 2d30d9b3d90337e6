"""A note's Markdown as HTML that cannot run anything: CommonMark plus Obsidian's links.

A note is other people's text (an agent's, a clipped web page's), so the renderer is built to emit
only markup it chose itself:

- raw HTML in a note (blocks and inline tags) is shown as text, escaped; HTML comments and
  Obsidian's ``%% comments %%`` are dropped, as Obsidian hides them;
- a link keeps its address only when it is ``http``, ``https`` or ``mailto`` (then it opens in a new
  page, with no referrer and no opener) or a relative path to a note (then it opens the note in
  the console); any other address (``javascript:``, ``data:``, ``file:``...) leaves the text, inert;
- images are never fetched: an image or an embedded file shows as a labelled box;
- wiki-links ``[[t]]``, ``[[t|label]]``, ``[[t#heading]]`` open the note in the console; a link the
  index could not resolve is marked dead; embeds ``![[note]]`` show the embedded note's text,
  rendered by this same renderer one level deep.

Every attribute value is escaped. The console's Content-Security-Policy (no inline script, no
``eval``, Trusted Types) is the second wall behind this one, not a reason to loosen it.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlsplit

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from markdown_it.renderer import RendererHTML
    from markdown_it.rules_inline import StateInline
    from markdown_it.token import Token
    from markdown_it.utils import OptionsDict

MAX_EMBEDS = 8  #: embedded notes rendered in one note; later embeds show as links
MAX_WIKILINK_CHARS = 1024
SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
NOTE_EXTENSIONS = ("", ".md")

_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]{1," + str(MAX_WIKILINK_CHARS) + r"})\]\]")
_TAG = re.compile(r"#([\w/-]*[^\W\d][\w/-]*)", re.UNICODE)
_BLOCK_ID = re.compile(r"\^[A-Za-z0-9-]+(?=[ \t]*(?:\n|$))")


@dataclass(frozen=True, slots=True)
class Wikilink:
    """One ``[[target#anchor|label]]`` as written."""

    target: str  #: the note named ('' for a link inside the same note)
    anchor: str | None
    label: str
    embed: bool

    @classmethod
    def parse(cls, inner: str, embed: bool) -> Wikilink:
        ref, _, label = inner.partition("|")
        target, _, heading = ref.partition("#")
        anchor = heading.strip() or None
        shown = label.strip() or (ref.strip() if target.strip() else (anchor or ""))
        return cls(target=target.strip(), anchor=anchor, label=shown, embed=embed)

    @property
    def is_note(self) -> bool:
        return posixpath.splitext(self.target)[1].lower() in NOTE_EXTENSIONS


@dataclass(slots=True)
class NoteContext:
    """What the renderer knows about the note being shown."""

    vault: str
    path: str  #: the note's vault-relative path (relative Markdown links resolve from its folder)
    resolved: Mapping[str, str | None] = field(default_factory=dict)  #: wiki-link target (casefolded) -> path, None: dead
    embeds: Mapping[str, str] = field(default_factory=dict)  #: embed target (casefolded) -> its rendered HTML
    embed_budget: int = MAX_EMBEDS


def note_href(vault: str, path: str) -> str:
    """The console's own address of a note (a hash route the page reads)."""
    return f"#/note/{quote(vault, safe='')}/{quote(path, safe='')}"


# -- inline rules -----------------------------------------------------------------------------


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    start = state.pos
    if state.src[start] not in "![":
        return False
    m = _WIKILINK.match(state.src, start)
    if m is None:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.meta = {"link": Wikilink.parse(m.group(2), embed=bool(m.group(1)))}
    state.pos = m.end()
    return True


def _comment_rule(state: StateInline, silent: bool) -> bool:
    """``%% hidden %%`` inside a paragraph: dropped, as Obsidian hides it."""
    src, start = state.src, state.pos
    if not src.startswith("%%", start):
        return False
    end = src.find("%%", start + 2)
    if end < 0:
        return False
    state.pos = end + 2
    return True


def _tag_rule(state: StateInline, silent: bool) -> bool:
    src, start = state.src, state.pos
    if src[start] != "#" or (start > 0 and not src[start - 1].isspace()):
        return False
    m = _TAG.match(src, start)
    if m is None:
        return False
    if not silent:
        token = state.push("tag", "", 0)
        token.content = m.group(1)
    state.pos = m.end()
    return True


def _block_id_rule(state: StateInline, silent: bool) -> bool:
    """A block id (``^id`` ending a line) is an anchor for links, not text: dropped."""
    src, start = state.src, state.pos
    if src[start] != "^" or (start > 0 and not src[start - 1].isspace()):
        return False
    m = _BLOCK_ID.match(src, start)
    if m is None:
        return False
    state.pos = m.end()
    return True


# -- render rules -------------------------------------------------------------------------------

Rule = Any  # markdown-it-py's render rules are untyped callables


def _attr(name: str, value: str) -> str:
    return f' {name}="{escapeHtml(value)}"'


def _render_wikilink(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: dict[str, Any]) -> str:
    link: Wikilink = tokens[idx].meta["link"]
    ctx: NoteContext = env["note"]
    label = escapeHtml(link.label)
    if link.embed and not link.is_note:
        return f'<span class="embed-file"{_attr("title", link.target)}>{escapeHtml(link.target)}</span>'
    if not link.target:  # [[#Heading]]: this note
        return f'<a class="wikilink"{_attr("href", note_href(ctx.vault, ctx.path))}>{label}</a>'
    key = link.target.casefold()
    if link.embed:
        body = ctx.embeds.get(key)
        if body is not None and ctx.embed_budget > 0:
            ctx.embed_budget -= 1
            source = ctx.resolved.get(key) or link.target
            head = f'<a class="embed-title"{_attr("href", note_href(ctx.vault, source))}>{escapeHtml(link.target)}</a>'
            return f'<section class="embed"{_attr("data-source", source)}>{head}{body}</section>'
    known = key in ctx.resolved
    path = ctx.resolved.get(key)
    dead = known and path is None
    classes = "wikilink dead" if dead else "wikilink"
    href = note_href(ctx.vault, path or link.target)
    title = f"no note {link.target!r} in this vault" if dead else (path or link.target)
    return f"<a{_attr('class', classes)}{_attr('href', href)}{_attr('title', title)}>{label}</a>"


def _render_tag(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: dict[str, Any]) -> str:
    return f'<span class="tag">#{escapeHtml(tokens[idx].content)}</span>'


_COMMENT = re.compile(r"\s*<!--.*?-->\s*", re.DOTALL)


def _render_raw_html(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: dict[str, Any]) -> str:
    """Raw HTML in a note is shown as the text it is (comments, as Obsidian does, are hidden)."""
    content = tokens[idx].content
    if _COMMENT.fullmatch(content):
        return ""
    shown = escapeHtml(content)
    return f'<pre class="raw-html">{shown}</pre>' if tokens[idx].type == "html_block" else f'<code class="raw-html">{shown}</code>'


def _render_image(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: dict[str, Any]) -> str:
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env)
    src = str(token.attrGet("src") or "")
    return f'<span class="embed-file"{_attr("title", src)}>{escapeHtml(alt or src)}</span>'


def _render_link_open(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: dict[str, Any]) -> str:
    token = tokens[idx]
    href = str(token.attrGet("href") or "")
    target = safe_link(href, env["note"])
    if target is None:
        return '<a class="inert">'
    href, external = target
    if external:
        return f'<a class="external"{_attr("href", href)} target="_blank" rel="noopener noreferrer">'
    return f'<a class="notelink"{_attr("href", href)}>'


def safe_link(href: str, ctx: NoteContext) -> tuple[str, bool] | None:
    """Where a Markdown link may point: (address, external), or None to leave it inert."""
    try:
        parts = urlsplit(href.strip())
    except ValueError:
        return None
    if parts.scheme:
        return (href, True) if parts.scheme.lower() in SAFE_SCHEMES and (parts.netloc or parts.scheme == "mailto") else None
    if parts.netloc or not parts.path:  # //host/... or a bare #fragment: nothing in the vault
        return None
    rel = posixpath.normpath(posixpath.join(posixpath.dirname(ctx.path), unquote(parts.path)))
    if rel.startswith("../") or rel == ".." or rel.startswith("/") or not rel.lower().endswith(".md"):
        return None
    return note_href(ctx.vault, rel), False


def build() -> MarkdownIt:
    """The renderer: CommonMark, GFM tables and strikethrough, Obsidian links, tags and comments."""
    md = MarkdownIt("commonmark", {"html": True, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    md.inline.ruler.before("emphasis", "obsidian_comment", _comment_rule)
    md.inline.ruler.before("emphasis", "tag", _tag_rule)
    md.inline.ruler.before("emphasis", "block_id", _block_id_rule)
    md.add_render_rule("wikilink", _render_wikilink)
    md.add_render_rule("tag", _render_tag)
    md.add_render_rule("html_block", _render_raw_html)
    md.add_render_rule("html_inline", _render_raw_html)
    md.add_render_rule("image", _render_image)
    md.add_render_rule("link_open", _render_link_open)
    return md


_MD = build()


def parse(body: str, ctx: NoteContext) -> list[Token]:
    return _MD.parse(body, {"note": ctx})


def wikilinks(tokens: Sequence[Token]) -> list[Wikilink]:
    """Every wiki-link and embed in parsed tokens, in order."""
    found: list[Wikilink] = []
    for token in tokens:
        for child in token.children or []:
            if child.type == "wikilink":
                found.append(child.meta["link"])
    return found


def render(tokens: Sequence[Token], ctx: NoteContext) -> str:
    return str(_MD.renderer.render(tokens, _MD.options, {"note": ctx}))


def render_text(body: str, ctx: NoteContext) -> str:
    """Parse and render in one step (embedded notes: their own embeds stay links)."""
    return render(parse(body, ctx), ctx)
