"""note.supersede: mark an old note as superseded by a new one, and link the new one back.

The old note gets ``status: superseded`` and ``superseded_by: "[[new]]"`` (every other header
byte kept); the new one gets ``- [[old]] — supersedes`` under Relevant Notes unless it already
links there. Both sides are authored, so both get ``updated``. A note cannot supersede itself,
nor one that it is itself superseded by (V10), and a note already superseded by a third note is
refused rather than silently re-pointed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from protocol.methods import writes
from vaultd.errors import ValidationFailed
from vaultd.ops._runner import no_detail
from vaultd.ops._stamps import stamp_updated
from vaultd.ops.catalog import operation
from vaultd.ops.link import add_relevant_link
from vaultd.txn.plan import Change, Plan
from vaultd.vault import frontmatter, markdown
from vaultd.vault.frontmatter_emit import emit

if TYPE_CHECKING:
    from protocol.methods.writes import SupersedeParams
    from vaultd.ops._context import OpContext

SUPERSEDES = "supersedes"


def linked_notes(ctx: OpContext, value: Any, source: str) -> set[str]:
    """The notes the wiki-links in one frontmatter value resolve to."""
    values = value if isinstance(value, list) else [value]
    found = set()
    for item in values:
        if isinstance(item, str):
            for link in markdown.links_in_value(item, 0):
                res = ctx.index.resolver.resolve(link.target, source)
                if res.path is not None:
                    found.add(res.path)
    return found


def _v10(path: str, message: str) -> ValidationFailed:
    return ValidationFailed(message, issues=[Issue(code=IssueCode.V10, path=path, message=message)])


def mark_superseded(ctx: OpContext, path: str, text: str, by: str) -> str:
    """``text`` with ``status: superseded`` and ``superseded_by: "[[by]]"``, stamped when changed."""
    data = frontmatter.parse(text).data or {}
    if "superseded_by" in data and linked_notes(ctx, data["superseded_by"], path) == {by} and data.get("status") == "superseded":
        return text
    link = ctx.property_link(by, path)
    changed = emit(text, {"status": "superseded", "superseded_by": link})
    return stamp_updated(ctx, path, changed) if changed != text else text


@operation(writes.SUPERSEDE, detail=no_detail)
def plan_supersede(ctx: OpContext, params: SupersedeParams) -> Plan:
    """Plan a supersession: the old note marked superseded by the new one, the new one linking back.

    Raises:
        ValidationFailed: VALIDATION, a note is said to supersede itself (V10 when the supersession
            would go in a circle or re-point another).
    """
    old = ctx.find(params.old)
    new = ctx.find(params.new)
    if old == new:
        raise ValidationFailed(f"{old} cannot supersede itself")
    old_raw, old_text = ctx.read_text(old)
    new_raw, new_text = ctx.read_text(new)
    new_data = frontmatter.parse(new_text).data or {}
    if old in linked_notes(ctx, new_data.get("superseded_by"), new):
        raise _v10(
            new, f"{new} is itself superseded by {old}; a supersession cannot go in a circle (swap the two notes if the order is wrong)"
        )
    old_data = frontmatter.parse(old_text).data or {}
    others = linked_notes(ctx, old_data.get("superseded_by"), old) - {new}
    if others:
        raise _v10(
            old, f"{old} is already superseded by {', '.join(sorted(others))}; supersede that note instead, or clear superseded_by first"
        )
    changes = [
        Change(path=old, before=old_raw, after=mark_superseded(ctx, old, old_text, new).encode()),
        Change(path=new, before=new_raw, after=add_relevant_link(ctx, new, new_text, old, SUPERSEDES).encode()),
    ]
    return Plan(op="note.supersede", changes=changes, log_type="RETHINK", log_dest=new, summary=f"{old} superseded by {new}")
