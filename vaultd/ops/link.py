"""note.link: a ``- [[target]] — relation`` line under a note's ``## Relevant Notes``, and back.

The section is created when absent, before ``## Topics``. A note that already shows a link to the
other (any form that resolves to it, outside code and frontmatter) is left as it is, so linking
twice changes nothing. The link is written as the vault's Obsidian writes a new one (wiki or
Markdown, its path per "New link format"). The reverse link carries the relation only when it reads the same both ways
(``contradicts``); the others are directed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.methods import writes
from protocol.methods.writes import LinkParams, Relation
from vaultd.errors import ValidationFailed
from vaultd.ops._runner import no_detail
from vaultd.ops._stamps import stamp_updated
from vaultd.ops.append import append_to_section
from vaultd.ops.catalog import operation
from vaultd.txn.plan import Change, Plan
from vaultd.vault import frontmatter, markdown
from vaultd.vault.link_targets import ResolutionStatus
from vaultd.vault.model import LinkKind

if TYPE_CHECKING:
    from vaultd.ops._context import OpContext

RELEVANT = "Relevant Notes"
SYMMETRIC = frozenset({Relation.CONTRADICTS})


def links_to(ctx: OpContext, text: str, source: str, target: str) -> bool:
    """Whether the body of ``text`` (the note at ``source``) shows a link that resolves to ``target``."""
    fm = frontmatter.parse(text)
    for link in markdown.scan(text, fm.body_offset, fm.body_line).links:
        if link.kind == LinkKind.FRONTMATTER or not link.target.strip():
            continue
        res = ctx.index.resolver.resolve(link.target, source)
        if res.status == ResolutionStatus.RESOLVED and res.path == target:
            return True
    return False


def add_relevant_link(ctx: OpContext, path: str, text: str, target: str, relation: str | None) -> str:
    """``text`` with a link to ``target`` under Relevant Notes (and ``updated`` stamped), or ``text``
    itself when the note already links there."""
    if links_to(ctx, text, path, target):
        return text
    line = f"- {ctx.link(target, path)}" + (f" — {relation}" if relation else "")
    return stamp_updated(ctx, path, append_to_section(text, RELEVANT, line))


@operation(writes.LINK, detail=no_detail)
def plan_link(ctx: OpContext, params: LinkParams) -> Plan:
    """Plan a ``- [[target]]`` line under the source's Relevant Notes (and back, when asked);
    linking twice changes nothing.

    Raises:
        ValidationFailed: VALIDATION, the two notes are one.
    """
    source = ctx.find(params.source)
    target = ctx.find(params.target)
    if source == target:
        raise ValidationFailed(f"{source} cannot be linked to itself")
    relation = str(params.relation) if params.relation is not None else None
    raw, text = ctx.read_text(source)
    changes = [Change(path=source, before=raw, after=add_relevant_link(ctx, source, text, target, relation).encode())]
    if params.bidirectional:
        back = relation if params.relation in SYMMETRIC else None
        t_raw, t_text = ctx.read_text(target)
        changes.append(Change(path=target, before=t_raw, after=add_relevant_link(ctx, target, t_text, source, back).encode()))
    how = "both ways" if params.bidirectional else "one way"
    return Plan(
        op="note.link",
        changes=changes,
        log_type="CONNECT",
        log_dest=target,
        summary=f"linked {source} to {target}, {how}" + (f" ({relation})" if relation else ""),
    )
