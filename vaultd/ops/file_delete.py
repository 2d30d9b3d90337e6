"""file.delete: move a file that is not a note to Obsidian's trash, refused while anything embeds it.

The file goes to ``.trash/<its path>`` (``.trash/<path> 1``, ``2``, ... when that is taken) as a
create and a delete in one plan, so ``op.undo`` puts it back byte for byte with its mode. A note
or canvas that embeds or links the file would be left with a broken embed, so the delete is
refused (V03) unless the caller passes ``force``, as a note's delete is refused while links need
it; a note the caller may not see is counted but never named.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.methods import files
from protocol.methods.receipts import DeleteDetail
from vaultd.errors import Conflict, ValidationFailed
from vaultd.ops._file_target import existing_file, read_file_target
from vaultd.ops.catalog import operation
from vaultd.ops.delete import MAX_SUFFIX, TRASH
from vaultd.txn.plan import Action, Change, Plan
from vaultd.vault.files import canvas_refs, embedders

if TYPE_CHECKING:
    from protocol.methods.files import FileDeleteParams
    from vaultd.ops._context import OpContext


def file_trash_path(ctx: OpContext, path: str) -> str:
    """A free place for ``path`` in the trash: ``name 1.png`` beside ``name.png``, as Obsidian names them.

    Raises:
        Conflict: CONFLICT, the trash holds ``MAX_SUFFIX`` copies of the path already.
    """
    first = f"{TRASH}/{path}"
    if not (ctx.root / first).exists():
        return first
    folder, _, name = first.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    if not stem:
        stem, dot, ext = name, "", ""
    for n in range(1, MAX_SUFFIX + 1):
        candidate = f"{folder}/{stem} {n}{dot}{ext}"
        if not (ctx.root / candidate).exists():
            return candidate
    raise Conflict(f"the trash already holds {MAX_SUFFIX} copies of {path}; empty it first")


def embedding_issues(ctx: OpContext, path: str) -> list[Issue]:
    """One issue per note or canvas that embeds or links ``path``: named when the caller may see
    it, counted otherwise."""
    named = canvas_refs(ctx.root).counts(ctx.root, ctx.index, lambda _p: True)
    issues = []
    for source in sorted(embedders(ctx.index, path, lambda _p: True, named)):
        if ctx.visibility.hidden(source):
            issues.append(Issue(code=IssueCode.V03, message=f"a private file embeds or links {path}"))
        else:
            issues.append(Issue(code=IssueCode.V03, path=source, message=f"{source} embeds or links {path}"))
    return issues


def file_delete_detail(ctx: OpContext, plan: Plan) -> DeleteDetail:
    gone = next(c.path for c in plan.changes if c.action == Action.DELETE)
    trash = next(c.path for c in plan.changes if c.action == Action.CREATE)
    return DeleteDetail(trash=trash, backlinks=[i.path for i in plan.warnings if i.code == IssueCode.V03 and i.path and i.path != gone])


@operation(files.DELETE, detail=file_delete_detail)
def plan_file_delete(ctx: OpContext, params: FileDeleteParams) -> Plan:
    """Plan a delete: the file moves to the trash (undo brings it back), refused while embedded.

    Raises:
        ValidationFailed: VALIDATION (V03), notes or canvases embed the file and ``force`` is not set.
        Conflict: CONFLICT, the file is not the one the caller saw.
    """
    path = existing_file(ctx, params.target, "note.delete")
    current = read_file_target(ctx, path, params.expected_sha, params.expected_mtime_ns)
    embedded = embedding_issues(ctx, path)
    if embedded and not params.force:
        raise ValidationFailed(
            f"refused: {len(embedded)} file{'s' if len(embedded) != 1 else ''} still embed or link {path}; "
            "move or remove those embeds first, or pass force",
            issues=embedded,
        )
    trash = file_trash_path(ctx, path)
    return Plan(
        op=files.DELETE.name,
        changes=[
            Change(path=trash, before=None, after=current.data, mode=current.mode),
            Change(path=path, before=current.data, after=None),
        ],
        summary=f"deleted {path} (kept in {trash})",
        warnings=[Issue(code=i.code, message=i.message, severity=Severity.WARNING, path=i.path) for i in embedded],
        log_type="RETHINK",
        log_dest=path,
    )
