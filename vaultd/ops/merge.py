"""note.merge: fold one note (absorb) into another (keep), losslessly, and repoint its links.

The merged keep is keep's header and prose first, then ``## Merged from [[absorb]]`` (a Markdown
link in a vault whose Obsidian writes those, see :func:`~vaultd.relink.new_link`) with absorb's
body: its leading ``# title`` line dropped (only when it is the first non-blank line), its other
ATX headings one level deeper (H6 stays H6; Setext headings and code are left as they are), and
its ``## Topics`` moved into one final ``## Topics`` that lists keep's items then absorb's new
ones. The ``source``/``sources`` and ``topics`` frontmatter lists become unions, keep's entries
first. Nothing is summarized or dropped.

Absorb stays, marked ``status: superseded`` and ``superseded_by: "[[keep]]"``. Links to absorb
elsewhere (in notes, canvases, bases and bookmarks) are repointed to keep with move's rewrite
(each link's style, label and anchor kept); keep's own links to absorb are provenance and stay.
Only keep and absorb get ``updated``.

Refused: the same note twice; different ``type`` values; person and MOC notes (V01); a keep that
is older than absorb by their supersession fields (V10, swap them); a merge done already (V10);
inbound anchors the merged note would lose or hold twice (V03); Topics holding more than a list
(V05); a result over the note size limit (LIMIT).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from protocol.methods import writes
from protocol.methods.receipts import MAX_DETAIL_LINKS, MergeDetail
from vaultd.errors import LimitExceeded, ValidationFailed
from vaultd.ops._bounds import check_size_first
from vaultd.ops._stamps import stamp_updated
from vaultd.ops.catalog import operation
from vaultd.ops.supersede import linked_notes, mark_superseded
from vaultd.relink import Relocation, Rewrite, new_link, relink
from vaultd.txn.plan import MAX_NOTE_BYTES, Change, Plan
from vaultd.vault import frontmatter, markdown
from vaultd.vault.frontmatter_emit import emit
from vaultd.vault.link_targets import check_anchor

if TYPE_CHECKING:
    from protocol.methods.writes import MergeParams
    from vaultd.ops._context import OpContext
    from vaultd.vault.app_config import LinkFormat

TOPICS = "Topics"
UNION_KEYS = ("source", "sources", "topics")
REFUSED_TYPES = frozenset({"person", "moc"})
_ATX = re.compile(r" {0,3}(#{1,6})(?=[ \t\r]|$)")
_H1 = re.compile(r" {0,3}# ")
_ITEM = re.compile(r"[ \t]*[-*+][ \t]+\S")


@dataclass(slots=True)
class MergePlan(Plan):
    keep: str = ""
    absorb: str = ""
    body: str = ""
    unions: dict[str, list[Any]] = field(default_factory=dict)
    rewrites: list[Rewrite] = field(default_factory=list)


def _issue(code: str, path: str, message: str) -> ValidationFailed:
    return ValidationFailed(message, issues=[Issue(code=code, path=path, message=message)])


def drop_leading_h1(body: str) -> str:
    """``body`` without its first line when that is the first non-blank one and an ATX H1."""
    lines = body.split("\n")
    for i, line in enumerate(lines):
        if line.strip():
            if _H1.match(line) or line.strip() == "#":
                rest = lines[i + 1 :]
                while rest and not rest[0].strip():
                    rest = rest[1:]
                return "\n".join(lines[:i] + rest)
            return body
    return body


def take_topics(text: str, body_offset: int, path: str) -> tuple[str, list[str]]:
    """``text`` without its ``## Topics`` sections, and their list items in order.

    Raises:
        ValidationFailed: VALIDATION (V05), a Topics section holds more than a list.
    """
    spans = markdown.section_spans(text, body_offset, TOPICS)
    items: list[str] = []
    for start, end in spans:
        for line in text[start:end].split("\n")[1:]:
            if not line.strip():
                continue
            if not _ITEM.match(line):
                raise _issue(
                    IssueCode.V05,
                    path,
                    f"the Topics section of {path} holds more than a list; move that text to another section, then merge",
                )
            items.append(line.strip())
    for start, end in reversed(spans):
        text = text[:start] + text[end:]
    return text, items


def demote_headings(body: str) -> str:
    """Every ATX heading one level deeper (H6 stays); code, Setext headings and prose untouched."""
    lines = body.split("\n")
    for heading in markdown.scan(body).headings:
        i = heading.line - 1
        m = _ATX.match(lines[i])
        if m is not None and len(m.group(1)) < 6:
            lines[i] = lines[i][: m.start(1)] + "#" + lines[i][m.start(1) :]
    return "\n".join(lines)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def union(first: list[Any], second: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in first + second:
        if item not in out:
            out.append(item)
    return out


def _check_supersession(ctx: OpContext, keep: str, kd: dict[str, Any], absorb: str, ad: dict[str, Any]) -> None:
    """A merge must not run against the notes' own supersession: keep must be the newer note.

    Raises:
        ValidationFailed: VALIDATION (V10), keep is superseded by absorb, or absorb by keep already.
    """
    if absorb in linked_notes(ctx, kd.get("superseded_by"), keep) or keep in linked_notes(ctx, ad.get("supersedes"), absorb):
        raise _issue(IssueCode.V10, keep, f"{keep} is older than {absorb} (it is superseded by it); swap the two notes: keep the newer one")
    if keep in linked_notes(ctx, ad.get("superseded_by"), absorb):
        raise _issue(IssueCode.V10, absorb, f"{absorb} is already superseded by {keep}; it was merged before")


def _check_anchors(ctx: OpContext, keep: str, keep_text: str, merged: str, absorb: str, absorb_text: str) -> None:
    """Inbound links to absorb with an anchor must find it, once, in the merged note; so must
    absorb's links to its own headings and blocks, which move into keep.

    Raises:
        ValidationFailed: VALIDATION (V03), an anchor would be lost or would name another heading or
            block.
    """
    fm = frontmatter.parse(keep_text)
    before = markdown.scan(keep_text, fm.body_offset, fm.body_line)
    mfm = frontmatter.parse(merged)
    after = markdown.scan(merged, mfm.body_offset, mfm.body_line)
    issues = []
    for source, link in ctx.index.backlinks(absorb):
        if source in (keep, absorb) or not link.anchor:
            continue
        if check_anchor(link.anchor, after.headings, after.blocks) is not None:
            issues.append(
                Issue(
                    code=IssueCode.V03, path=source, line=link.line, message=f"#{link.anchor} would be missing from {keep} after the merge"
                )
            )
        elif check_anchor(link.anchor, before.headings, before.blocks) is None:
            issues.append(
                Issue(
                    code=IssueCode.V03,
                    path=source,
                    line=link.line,
                    message=f"#{link.anchor} is in {keep} already; rename one of them first",
                )
            )
    afm = frontmatter.parse(absorb_text)
    for link in markdown.scan(absorb_text, afm.body_offset, afm.body_line).links:
        # [[#Heading]] in absorb moves into keep with its text: a heading keep has already would capture it
        if not link.target.strip() and link.anchor and check_anchor(link.anchor, before.headings, before.blocks) is None:
            issues.append(
                Issue(
                    code=IssueCode.V03,
                    path=absorb,
                    line=link.line,
                    message=f"[[#{link.anchor}]] would point at {keep}'s own #{link.anchor} after the merge; rename one of them first",
                )
            )
    if issues:
        raise ValidationFailed(f"refused: {issues[0].message}", issues=issues)


def merged_text(
    ctx: OpContext, keep: str, keep_text: str, absorb: str, absorb_text: str, unions: dict[str, list[Any]], fmt: LinkFormat
) -> str:
    nl = "\r\n" if "\r\n" in keep_text else "\n"
    kfm = frontmatter.parse(keep_text)
    afm = frontmatter.parse(absorb_text)
    keep_rest, keep_topics = take_topics(keep_text, kfm.body_offset, keep)
    body = drop_leading_h1(absorb_text[afm.body_offset :])
    body, absorb_topics = take_topics(body, 0, absorb)
    body = demote_headings(body).strip("\r\n").replace("\r\n", "\n").replace("\n", nl)
    heading = f"## Merged from {new_link(Relocation(ctx.index.resolver, {}, fmt=fmt), absorb, keep)}"
    text = keep_rest.rstrip("\r\n") + nl + nl + heading + nl + (nl + body + nl if body.strip() else "")
    topics = union(keep_topics, absorb_topics)
    if topics:
        text += nl + f"## {TOPICS}" + nl + nl + nl.join(topics) + nl
    kd, ad = kfm.data or {}, afm.data or {}
    for key in UNION_KEYS:
        if key in kd or key in ad:
            joined = union(_as_list(kd.get(key)), _as_list(ad.get(key)))
            if joined != _as_list(kd.get(key)):
                unions[key] = joined
    return stamp_updated(ctx, keep, emit(text, unions) if unions else text)


def merge_detail(ctx: OpContext, plan: Plan) -> MergeDetail:
    assert isinstance(plan, MergePlan)
    return MergeDetail(
        keep=plan.keep, absorb=plan.absorb, unions=plan.unions, inbound=[str(r) for r in plan.rewrites[:MAX_DETAIL_LINKS]], body=plan.body
    )


@operation(writes.MERGE, detail=merge_detail)
def plan_merge(ctx: OpContext, params: MergeParams) -> MergePlan:
    """Plan a merge: ``absorb`` folds into ``keep`` and stays, superseded; links to it repoint to ``keep``.

    Raises:
        ValidationFailed: VALIDATION, a note is merged into itself.
        LimitExceeded: LIMIT, the merged note would be over the note bound.
    """
    keep = ctx.find(params.keep)
    absorb = ctx.find(params.absorb)
    if keep == absorb:
        raise ValidationFailed(f"{keep} cannot be merged into itself")
    k_raw, k_text = ctx.read_text(keep)
    a_raw, a_text = ctx.read_text(absorb)
    kd = frontmatter.parse(k_text).data or {}
    ad = frontmatter.parse(a_text).data or {}
    if kd.get("type") != ad.get("type"):
        types = f"{kd.get('type') or 'none'} and {ad.get('type') or 'none'}"
        raise _issue(IssueCode.V01, absorb, f"{keep} and {absorb} have different types ({types}); merge notes of one type")
    if kd.get("type") in REFUSED_TYPES:
        raise _issue(IssueCode.V01, keep, f"{kd.get('type')} notes are not merged; link them instead")
    _check_supersession(ctx, keep, kd, absorb, ad)
    unions: dict[str, list[Any]] = {}
    fmt = ctx.settings.app.link
    merged = merged_text(ctx, keep, k_text, absorb, a_text, unions, fmt)
    size = len(merged.encode("utf-8"))
    if size > MAX_NOTE_BYTES:
        raise LimitExceeded(f"the merged note would be {size} bytes; a note may be {MAX_NOTE_BYTES}")
    _check_anchors(ctx, keep, k_text, merged, absorb, a_text)
    changes = [
        Change(path=keep, before=k_raw, after=merged.encode("utf-8")),
        Change(path=absorb, before=a_raw, after=mark_superseded(ctx, absorb, a_text, keep).encode()),
    ]
    reloc = Relocation(ctx.index.resolver, {}, repoint={absorb: keep}, fmt=fmt)
    sources = sorted({src for src, _ in ctx.index.backlinks(absorb)} - {keep, absorb})
    check_size_first(ctx, f"merging {absorb} into {keep}", sources, [keep, absorb])
    relinked = relink(ctx, reloc, sources)
    changes += relinked.changes
    return MergePlan(
        warnings=relinked.warnings,
        op="note.merge",
        changes=changes,
        log_type="RETHINK",
        log_dest=keep,
        summary=f"merged {absorb} into {keep}",
        keep=keep,
        absorb=absorb,
        body=merged[frontmatter.parse(merged).body_offset :],
        unions=unions,
        rewrites=relinked.rewrites,
    )
