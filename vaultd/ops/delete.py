"""note.delete: move a note to Obsidian's trash folder, refusing to break links unless told to.

The note goes to ``.trash/<its path>`` (``.trash/<path> 1.md``, ``2``, ... when that is taken), as
a create and a delete in one plan, so ``op.undo`` puts it back byte for byte. The trash is never
indexed. A delete that would newly break inbound links is refused (V03) unless the caller passes
``leave_broken_links``; the preview lists the backlinks either way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.methods import writes
from protocol.methods.receipts import DeleteDetail
from vaultd.errors import Conflict, ValidationFailed
from vaultd.ops.catalog import operation
from vaultd.relink import Relocation
from vaultd.txn.plan import Action, Change, Plan
from vaultd.vault.link_targets import ResolutionStatus

if TYPE_CHECKING:
    from protocol.methods.writes import DeleteParams
    from vaultd.ops._context import OpContext

TRASH = ".trash"
MAX_SUFFIX = 999


def trash_path(ctx: OpContext, path: str) -> str:
    """A free place for ``path`` in the trash.

    Raises:
        Conflict: CONFLICT, the trash holds ``MAX_SUFFIX`` copies of the path already.
    """
    first = f"{TRASH}/{path}"
    if ctx.read(first) is None:
        return first
    stem, ext = (first[:-3], first[-3:]) if first[-3:].lower() == ".md" else (first, "")
    for n in range(1, MAX_SUFFIX + 1):
        candidate = f"{stem} {n}{ext}"
        if ctx.read(candidate) is None:
            return candidate
    raise Conflict(f"the trash already holds {MAX_SUFFIX} copies of {path}; empty it first")


def breaking_links(ctx: OpContext, path: str) -> list[Issue]:
    """Inbound links that resolve to ``path`` now and would resolve to nothing once it is gone."""
    reloc = Relocation(ctx.index.resolver, {path: None})
    issues = []
    hidden = ctx.visibility.hidden
    for source, link in ctx.index.backlinks(path):
        if source == path:
            continue
        if reloc.after(link.target, source).status != ResolutionStatus.RESOLVED:
            if hidden(source):  # counted, but a note the caller may not see is not named
                issues.append(Issue(code=IssueCode.V03, message=f"a link in a private note would be missing once {path} is deleted"))
                continue
            issues.append(
                Issue(
                    code=IssueCode.V03,
                    path=source,
                    line=link.line,
                    message=f"link [[{link.target}]] would be missing once {path} is deleted",
                )
            )
    return issues


def delete_detail(ctx: OpContext, plan: Plan) -> DeleteDetail:
    gone = next(c.path for c in plan.changes if c.action == Action.DELETE)
    trash = next(c.path for c in plan.changes if c.action == Action.CREATE)
    backlinks = [f"{source}:{link.line}" for source, link in ctx.index.backlinks(gone) if source != gone and ctx.visibility.visible(source)]
    return DeleteDetail(trash=trash, backlinks=backlinks)


@operation(writes.DELETE, detail=delete_detail)
def plan_delete(ctx: OpContext, params: DeleteParams) -> Plan:
    """Plan a delete: the note moves to Obsidian's trash (undo brings it back), refused while links
    still need it.

    Raises:
        Conflict: CONFLICT, the note was removed since it was indexed.
        ValidationFailed: VALIDATION (V03), links to it would break and ``leave_broken_links`` is
            not set.
    """
    path = ctx.find(params.target)
    raw = ctx.read(path)
    if raw is None:
        raise Conflict(f"{path} was removed since it was indexed; search again")
    broken = breaking_links(ctx, path)
    warnings: list[Issue] = []
    if broken and not params.leave_broken_links:
        raise ValidationFailed(
            f"refused: deleting {path} would break {len(broken)} link{'s' if len(broken) > 1 else ''} "
            "to it; fix them first, or pass leave_broken_links",
            issues=broken,
        )
    for issue in broken:
        warnings.append(Issue(code=issue.code, message=issue.message, severity=Severity.WARNING, path=issue.path, line=issue.line))
    trash = trash_path(ctx, path)
    return Plan(
        op="note.delete",
        changes=[Change(path=trash, before=None, after=raw, mode=ctx.mode(path)), Change(path=path, before=raw, after=None)],
        summary=f"deleted {path} (kept in {trash})",
        warnings=warnings,
        log_type="RETHINK",
        log_dest=path,
    )
