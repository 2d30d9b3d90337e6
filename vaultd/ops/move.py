"""note.move: rename or move a note and rewrite every link the move would break, in one operation.

The plan creates the note at its new path, removes the old file, and rewrites the notes whose
links would otherwise stop naming it: its backlinks, the moved note itself (its relative
Markdown links follow it to its new folder), and the notes linking by name to a note that now
shares its name with the moved one (their bare links would turn ambiguous). Rewrites are
mechanical, so no ``updated`` stamp is added (see :mod:`vaultd.relink` for the rules).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from protocol.methods import writes
from protocol.methods.receipts import MAX_DETAIL_LINKS, MoveDetail
from vaultd.errors import ValidationFailed
from vaultd.ops._bounds import check_size_first
from vaultd.ops._name_clash import guard_name
from vaultd.ops.catalog import operation
from vaultd.ops.create import existing_twin, new_note_path
from vaultd.policy import check_new_path
from vaultd.relink import Relocation, Rewrite, link_name, relink, rewrite_links
from vaultd.txn.plan import Action, Change, Plan

if TYPE_CHECKING:
    from protocol.methods.writes import MoveParams
    from vaultd.ops._context import OpContext


@dataclass(slots=True)
class MovePlan(Plan):
    rewrites: list[Rewrite] = field(default_factory=list)


def check_destination(ctx: OpContext, old: str, new: str) -> None:
    """Refuse a move whose destination is unsafe or taken, before any link is planned.

    Raises:
        ValidationFailed: VALIDATION, the note is already there, the path is unsafe, or it is taken
            (V08).
    """
    if new == old:
        raise ValidationFailed(f"{old} is already at that path")
    twin = existing_twin(ctx, new)
    if twin is not None and twin != old:
        also = "" if twin == new else f" as {twin} (the same name but for letter case or Unicode form)"
        raise ValidationFailed(
            f"{new} already exists{also}; move to a free path, or merge the two notes",
            issues=[Issue(code=IssueCode.V08, path=new, message=f"the destination already exists{also}")],
        )
    # A twin that is the note itself is a rename by case or form alone: refused below as a collision,
    # since on a case-insensitive disk writing the new spelling would overwrite the old one.
    issues = check_new_path(new, lambda _key: ctx.index.resolver.same_key(new))
    if issues:
        raise ValidationFailed(f"refused: {issues[0].message}", issues=issues)
    if new in ctx.index.notes or new in ctx.index.attachments or ctx.read(new) is not None:
        raise ValidationFailed(
            f"{new} already exists; move to a free path, or merge the two notes",
            issues=[Issue(code=IssueCode.V08, path=new, message="the destination already exists")],
        )


def affected_sources(ctx: OpContext, reloc: Relocation, old: str, new: str) -> list[str]:
    """Notes whose links the move may break: backlinks of the note, and backlinks of the notes
    that will share its new name."""
    sources = {src for src, _ in ctx.index.backlinks(old)}
    for other in reloc.named(link_name(new)):
        if other != new:
            sources |= {src for src, _ in ctx.index.backlinks(other)}
    sources.discard(old)
    return sorted(sources)


def move_detail(ctx: OpContext, plan: Plan) -> MoveDetail:
    assert isinstance(plan, MovePlan)
    made = next(c for c in plan.changes if c.action == Action.CREATE)
    gone = next(c for c in plan.changes if c.action == Action.DELETE)
    rewritten = sorted({made.path if r.path == gone.path else r.path for r in plan.rewrites})
    return MoveDetail(from_=gone.path, to=made.path, rewritten=rewritten, links=[str(r) for r in plan.rewrites[:MAX_DETAIL_LINKS]])


@operation(writes.MOVE, detail=move_detail)
def plan_move(ctx: OpContext, params: MoveParams) -> MovePlan:
    old = ctx.find(params.target)
    to = params.to.removeprefix("./")  # not stripped: see note_path
    # A destination ending in '/' is a folder: the note keeps its file name there.
    new = new_note_path(ctx, to + old.rpartition("/")[2] if to.endswith("/") else to)
    check_destination(ctx, old, new)
    warnings = guard_name(ctx, new, moved_from=old)
    reloc = Relocation(ctx.index.resolver, {old: new}, fmt=ctx.settings.app.link)
    sources = affected_sources(ctx, reloc, old, new)
    check_size_first(ctx, f"moving {old}", sources, [old], removed=1)  # written at its new path, removed at the old
    raw, text = ctx.read_text(old)
    moved_text, rewrites = rewrite_links(text, old, reloc)
    changes = [
        Change(path=new, before=None, after=moved_text.encode("utf-8"), mode=ctx.mode(old)),
        Change(path=old, before=raw, after=None),
    ]
    relinked = relink(ctx, reloc, sources)
    changes += relinked.changes
    rewrites += relinked.rewrites
    files = len({r.path for r in rewrites})
    summary = f"moved {old} to {new}" + (f"; rewrote links in {files} file{'s' if files != 1 else ''}" if files else "")
    return MovePlan(
        op="note.move",
        changes=changes,
        summary=summary,
        log_type="ROUTE",
        log_dest=new,
        rewrites=rewrites,
        warnings=warnings + relinked.warnings,
    )
