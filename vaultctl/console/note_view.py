"""A note as the console shows it: rendered body, properties, backlinks, dead links, embeds.

Three kinds of call, all reads on the ``editor`` channel: ``note.read`` (the body and
frontmatter), ``note.links`` (how each link resolves, and the backlinks), and ``note.read`` again
for each embedded note (at most :data:`~vaultctl.console.render.MAX_EMBEDS`, one level deep).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from protocol.limits import MAX_READ_PAGE_BYTES
from protocol.methods import reads
from protocol.methods.reads import InLink, LinkKind, LinksParams, LinksResult, LinkStatus, OutLink, ReadParams, ReadResult
from vaultctl.client import CallError
from vaultctl.console import render

if TYPE_CHECKING:
    from vaultctl.console.daemon_connection import DaemonConnection

EMBED_BYTES = 16 * 1024  #: of an embedded note's text; the rest is a link away
LINKS_LIMIT = 500


class NoteView(msgspec.Struct, kw_only=True):
    vault: str
    path: str
    title: str
    frontmatter: dict[str, Any] | None
    html: str  #: rendered by vaultctl.console.render: markup of the renderer's choosing only
    sha256: str
    size: int
    truncated: bool  #: the body is longer than one page: the rest is not shown
    headings: list[str]
    backlinks: list[InLink]
    dead: list[OutLink]
    links: int  #: outgoing links in the note


_read = msgspec.json.Decoder(ReadResult)
_links = msgspec.json.Decoder(LinksResult)


def _resolution(out: list[OutLink]) -> dict[str, str | None]:
    """Wiki-link target (casefolded) -> the note it opens, None for a dead one."""
    found: dict[str, str | None] = {}
    for link in out:
        if link.kind not in (LinkKind.WIKI, LinkKind.EMBED):
            continue
        key = link.target.casefold()
        if link.status in (LinkStatus.RESOLVED, LinkStatus.BAD_ANCHOR) and link.resolved:
            found[key] = link.resolved
        else:
            found.setdefault(key, None)
    return found


async def _embedded(daemon: DaemonConnection, vault: str, target: str, anchor: str | None) -> ReadResult | None:
    """The embedded note (its H2 section when the embed names one), or None when it cannot be read."""
    sections = [anchor, None] if anchor and not anchor.startswith("^") else [None]
    for section in sections:
        try:
            raw = await daemon.call(reads.READ.name, ReadParams(target=target, vault=vault, section=section, max_bytes=EMBED_BYTES))
        except CallError:
            continue
        return _read.decode(raw)
    return None


async def note_view(daemon: DaemonConnection, vault: str, target: str) -> NoteView:
    """Raises CallError (NOT_FOUND, AMBIGUOUS, ...) as note.read does for the note itself."""
    note = _read.decode(await daemon.call(reads.READ.name, ReadParams(target=target, vault=vault, max_bytes=MAX_READ_PAGE_BYTES)))
    links = _links.decode(await daemon.call(reads.LINKS.name, LinksParams(target=note.path, vault=vault, limit=LINKS_LIMIT)))
    ctx = render.NoteContext(vault=vault, path=note.path, resolved=_resolution(links.out))
    tokens = render.parse(note.body, ctx)
    embeds: dict[str, str] = {}
    for link in render.wikilinks(tokens):
        key = link.target.casefold()
        if not link.embed or not link.is_note or not link.target or key in embeds or ctx.resolved.get(key, "") is None:
            continue
        if len(embeds) >= render.MAX_EMBEDS:
            break
        shown = await _embedded(daemon, vault, ctx.resolved.get(key) or link.target, link.anchor)
        if shown is not None:
            inner = render.NoteContext(vault=vault, path=shown.path)  # its own embeds stay links
            more = '<p class="embed-more">…</p>' if shown.truncated else ""
            embeds[key] = render.render_text(shown.body, inner) + more
    ctx.embeds = embeds
    return NoteView(
        vault=vault,
        path=note.path,
        title=note.title,
        frontmatter=note.frontmatter,
        html=render.render(tokens, ctx),
        sha256=note.sha256,
        size=note.size,
        truncated=note.truncated,
        headings=note.headings,
        backlinks=links.incoming,
        dead=links.dead,
        links=len(links.out),
    )
