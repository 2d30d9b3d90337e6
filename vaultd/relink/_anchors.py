"""Links into a note's headings that an edit of the note breaks, and their rewrite.

Renaming a heading with ``note.patch`` is a one-line edit, but every ``[[Note#Old heading]]``
in the vault then points nowhere, and Obsidian says nothing. The edit is judged against the
links as the index has them: a link whose anchor found its heading (or block) before the edit
and finds none after is broken by it. Each is reported as a V03 warning naming the link, and when
the edit renames exactly one heading the patch can repoint them (``rewrite_anchors``): a
mechanical rewrite of the anchor part of each wiki-link, in the same transaction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from vaultd.txn.plan import Change
from vaultd.vault import frontmatter, markdown
from vaultd.vault.link_targets import check_anchor, heading_key
from vaultd.vault.model import Heading, Link, LinkKind, MarkdownScan

if TYPE_CHECKING:
    from vaultd.relink._files import Reads

MAX_LISTED = 20  #: broken links named in the warning; the rest are counted
_LINK_UNSAFE = re.compile(r"[#^|\[\]:\\]+")


@dataclass(frozen=True, slots=True)
class Broken:
    source: str  #: the note holding the link ("" for the edited note's own [[#H]] links)
    link: Link


@dataclass(frozen=True, slots=True)
class Rename:
    old: Heading
    new: Heading


def _scan(text: str) -> MarkdownScan:
    fm = frontmatter.parse(text)
    return markdown.scan(text, fm.body_offset, fm.body_line)


def broken_links(ctx: Reads, path: str, before: str, after: str) -> tuple[list[Broken], Rename | None]:
    """The links into ``path`` that resolve before the edit and not after, and the heading rename
    the edit makes if it makes exactly one."""
    was, now = _scan(before), _scan(after)
    if [heading_key(h.text) for h in was.headings] == [heading_key(h.text) for h in now.headings] and [b.id for b in was.blocks] == [
        b.id for b in now.blocks
    ]:
        return [], None
    found: list[Broken] = []
    incoming = [(s, link) for s, link in ctx.index.backlinks(path) if s != path]
    own = [("", link) for link in now.links if not link.target.strip()]
    for source, link in (*incoming, *own):
        if (
            link.anchor
            and check_anchor(link.anchor, was.headings, was.blocks) is None
            and check_anchor(link.anchor, now.headings, now.blocks) is not None
        ):
            found.append(Broken(source, link))
    return found, _rename(was.headings, now.headings)


def _rename(was: list[Heading], now: list[Heading]) -> Rename | None:
    old_keys = [heading_key(h.text) for h in was]
    new_keys = [heading_key(h.text) for h in now]
    gone = [h for h, k in zip(was, old_keys, strict=True) if k not in new_keys]
    added = [h for h, k in zip(now, new_keys, strict=True) if k not in old_keys]
    if len(gone) == 1 and len(added) == 1 and len(was) == len(now) and gone[0].level == added[0].level:
        return Rename(gone[0], added[0])
    return None


def warnings_for(ctx: Reads, path: str, broken: list[Broken], rename: Rename | None) -> list[Issue]:
    """One V03 warning per note holding broken links (named up to MAX_LISTED), and what to do."""
    if not broken:
        return []
    hidden = ctx.visibility.hidden
    shown = [b for b in broken if not (b.source and hidden(b.source))]
    unseen = len(broken) - len(shown)
    names = [f"{b.source or path}:{b.link.line} #{b.link.anchor}" for b in shown[:MAX_LISTED]]
    more = len(shown) - len(names)
    what = (
        ", ".join(names)
        + (f" and {more} more" if more else "")
        + (f"{', and ' if names else ''}{unseen} in notes this channel cannot see" if unseen else "")
    )
    fix = (
        f"; run the patch again with rewrite_anchors to repoint them to #{rename.new.text}"
        if rename
        else "; point them at another heading (or keep the old one)"
    )
    return [
        Issue(
            code=IssueCode.V03,
            severity=Severity.WARNING,
            path=path,
            message=f"the edit breaks {len(broken)} link(s) to headings of {path}: {what}{fix}",
        )
    ]


def repointed(ctx: Reads, path: str, after: str, broken: list[Broken], rename: Rename) -> tuple[str, list[Change], int]:
    """The edited note's text and the other notes' changes with every broken wiki-link's anchor
    repointed to the renamed heading, and how many links were left (Markdown links, whose anchors
    are URL slugs, are reported, not rewritten)."""
    by_source: dict[str, list[Link]] = {}
    left = 0
    for b in broken:
        if b.link.kind == LinkKind.MARKDOWN:
            left += 1
            continue
        by_source.setdefault(b.source, []).append(b.link)
    old_key, new_text = heading_key(rename.old.text), _LINK_UNSAFE.sub(" ", rename.new.text).strip()
    changes: list[Change] = []
    for source, links in sorted(by_source.items()):
        if source:
            raw, text = ctx.read_text(source)
            changes.append(Change(path=source, before=raw, after=_rewrite(text, links, old_key, new_text).encode("utf-8")))
        else:
            after = _rewrite(after, links, old_key, new_text)
    return after, changes, left


def _rewrite(text: str, links: list[Link], old_key: str, new_text: str) -> str:
    out, pos = [], 0
    for link in sorted(links, key=lambda item: item.start):
        raw = text[link.start : link.end]
        out += [text[pos : link.start], repoint_anchor(raw, old_key, new_text)]
        pos = link.end
    out.append(text[pos:])
    return "".join(out)


def repoint_anchor(raw: str, old_key: str, new_text: str) -> str:
    """``[[T#A#Old|label]]`` with the part naming the old heading replaced; else unchanged."""
    open_at = raw.find("[[")
    close_at = raw.rfind("]]")
    if open_at < 0 or close_at < open_at:
        return raw
    inner = raw[open_at + 2 : close_at]
    label_at = inner.find("|")
    body, label = (inner, "") if label_at < 0 else (inner[:label_at], inner[label_at:])
    if body.endswith("\\"):  # a table row's escaped pipe: the backslash belongs to the label
        body, label = body[:-1], "\\" + label
    target, sep, anchor = body.partition("#")
    if not sep:
        return raw
    parts = anchor.split("#")
    parts = [new_text if heading_key(p) == old_key else p for p in parts]
    return f"{raw[: open_at + 2]}{target}#{'#'.join(parts)}{label}{raw[close_at:]}"
