"""note.links: a note's outgoing links, each resolved and checked, and the notes that link to it.

Seen through the caller's visibility like every read: a link to a private note is reported as
not dead and nothing more, and a suggestion for a dead link is only ever a title the caller sees.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.methods import reads
from protocol.methods.reads import InLink, LinksParams, LinksResult, LinkStatus, OutLink
from vaultd.api.handlers import CallContext, handles
from vaultd.api.read_methods import live_view, log_path_of
from vaultd.vault.link_targets import ResolutionStatus, check_anchor
from vaultd.vault.lookup import find_note
from vaultd.vault.model import Link, LinkKind, NoteRecord
from vaultd.vault.note_table import TitleOf

if TYPE_CHECKING:
    from vaultd.policy.visibility import Visibility
    from vaultd.vault.index import VaultIndex

PRIVATE_TARGET = "a note that is private to this channel"


class _VisibleTitles:
    """Whether a suggested title belongs to a note the caller sees (built once, on first need)."""

    def __init__(self, index: VaultIndex, view: Visibility) -> None:
        self.index, self.view = index, view
        self.titles: set[str] | None = None

    def __contains__(self, title: str) -> bool:
        if not self.view.hides_anything:
            return True
        if self.titles is None:
            self.titles = {r.title for p, r in self.index.notes.fields(TitleOf) if self.view.visible(p)}
        return title in self.titles


def _out_link(index: VaultIndex, source: str, link: Link, view: Visibility, titles: _VisibleTitles) -> OutLink:
    res = view.resolution(index.resolve(link, source))
    out = OutLink(
        target=link.target,
        anchor=link.anchor,
        kind=reads.LinkKind(link.kind),
        line=link.line,
        status=LinkStatus.RESOLVED,
        resolved=res.path,
        reason=res.reason or None,
    )
    if res.status == ResolutionStatus.AMBIGUOUS:
        out.status, out.candidates, out.resolved = LinkStatus.AMBIGUOUS, view.only_visible(res.candidates), None
    elif res.status == ResolutionStatus.MISSING:
        out.status, out.resolved = LinkStatus.MISSING, None
        hint = index.suggester.suggest(link.target)
        out.suggestion = hint[0] if hint and hint[0] in titles else None
    elif res.path is not None and view.hidden(res.path):
        # The link is not dead, and that is all this caller learns: no path, no anchor check.
        out.resolved, out.reason = None, PRIVATE_TARGET
    elif link.anchor and res.path is not None and res.path in index.notes:
        target = index.notes[res.path]
        problem = check_anchor(link.anchor, target.headings, target.blocks)
        if problem:
            out.status, out.reason = LinkStatus.BAD_ANCHOR, problem
    return out


def _source_order(record: NoteRecord) -> list[Link]:
    return sorted(record.links, key=lambda lk: (lk.kind != LinkKind.FRONTMATTER, lk.start, lk.line))


@handles(reads.LINKS)
async def links(ctx: CallContext, params: LinksParams) -> LinksResult:
    live, view = await live_view(ctx, params.vault, params.fresh)
    index = live.index
    log_path = log_path_of(ctx, params.vault)  # vaultd's log is not a note here, as in search, list, tags and stats

    def absent(p: str) -> bool:
        return p == log_path or view.hidden(p)

    path = find_note(index, params.target, absent)
    record = index.notes[path]
    ordered = _source_order(record)
    titles = _VisibleTitles(index, view)
    out = [_out_link(index, path, lk, view, titles) for lk in ordered[: params.limit]]
    incoming: list[InLink] = []
    for source, link in index.backlinks(path, view.resolution if view.hides_anything else None):
        if absent(source):
            continue
        if len(incoming) > params.limit:
            break
        incoming.append(InLink(path=source, line=link.line, kind=reads.LinkKind(link.kind)))
    truncated = len(ordered) > params.limit or len(incoming) > params.limit
    return LinksResult(
        path=path, out=out, incoming=incoming[: params.limit], dead=[o for o in out if o.status != LinkStatus.RESOLVED], truncated=truncated
    )
