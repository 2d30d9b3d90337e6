"""file.move and file.rename: move a file that is not a note and rewrite every embed and link to it.

An image renamed by hand leaves every ``![[embed]]`` of it broken; through vaultd it is one
operation, as Obsidian does it: the file is created at its new path with its bytes and mode and
removed at the old one, and every note, canvas, base and bookmark that named it is rewritten by
:func:`vaultd.relink.relink` in the style each link was written in (the vault's link format for
a bare name that would turn ambiguous). The notes to rewrite are the file's backlinks, and the
backlinks of the files that will share its new name; canvases and bases are each looked at.
Journaled with the originals, so ``op.undo`` puts every byte back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.methods import files
from protocol.methods.files import FileKind
from vaultd.errors import InvalidParams
from vaultd.ops._bounds import check_size_first
from vaultd.ops._file_target import existing_file, free_destination, read_file_target
from vaultd.ops.catalog import operation
from vaultd.ops.move import MovePlan, affected_sources, move_detail
from vaultd.relink import Relocation, Rewritten, relink, rewrite_base, rewrite_canvas
from vaultd.txn.plan import Change
from vaultd.vault.app_config import read_link_format
from vaultd.vault.files import file_kind

if TYPE_CHECKING:
    from protocol.methods.files import FileMoveParams, FileRenameParams
    from vaultd.ops._context import OpContext


def plan_relocation(
    ctx: OpContext, op: str, target: str, raw_new: str | None, to_name: str | None, sha: str | None, mtime: int | None
) -> MovePlan:
    """The plan that moves the file ``target`` to ``raw_new`` (or to ``to_name`` in its folder).

    Raises:
        NotFound: NOT_FOUND, no such file for this caller.
        InvalidParams: INVALID_PARAMS, it is a note, or the new name holds a folder.
        ValidationFailed: VALIDATION, the destination is unsafe or taken, or a link cannot be rewritten.
        Conflict: CONFLICT, the file is not the one the caller saw.
        LimitExceeded: LIMIT, the file or the rewrites are over an operation's bounds.
    """
    old = existing_file(ctx, target, "note.move")
    folder, _, name = old.rpartition("/")
    if to_name is not None:
        raw_new = f"{folder}/{to_name}" if folder else to_name
    assert raw_new is not None
    raw_new = raw_new.removeprefix("./")
    if raw_new.endswith("/"):  # a folder: the file keeps its name there
        raw_new += name
    new = free_destination(ctx, old, raw_new)
    current = read_file_target(ctx, old, sha, mtime)
    reloc = Relocation(ctx.index.resolver, {old: new}, fmt=read_link_format(ctx.root))
    sources = affected_sources(ctx, reloc, old, new)
    check_size_first(ctx, f"moving {old}", sources, [], removed=1)
    relinked = relink(ctx, reloc, sources)
    moved = carried_links(old, current.data, reloc, relinked)
    changes = [Change(path=new, before=None, after=moved, mode=current.mode), Change(path=old, before=current.data, after=None)]
    changes += relinked.changes
    count = len({r.path for r in relinked.rewrites})
    summary = f"moved {old} to {new}" + (f"; rewrote embeds and links in {count} file{'s' if count != 1 else ''}" if count else "")
    return MovePlan(
        op=op,
        changes=changes,
        summary=summary,
        log_type="ROUTE",
        log_dest=new,
        rewrites=relinked.rewrites,
        warnings=relinked.warnings,
    )


def carried_links(old: str, data: bytes, reloc: Relocation, relinked: Rewritten) -> bytes:
    """The bytes a moved canvas or base carries to its new place: its own links rewritten so that
    each still names what it named (a relative link in a text node, read from the file's folder,
    follows the move), planned as part of the created file rather than as an edit of the old one.
    Any other file moves byte for byte.

    Raises:
        ValidationFailed: VALIDATION (V03), a link of the file cannot be rewritten in place.
    """
    kind = file_kind(old)
    if kind not in (FileKind.CANVAS, FileKind.BASE):
        return data
    relinked.changes = [c for c in relinked.changes if c.path != old]  # the old path is removed, not edited
    relinked.rewrites = [r for r in relinked.rewrites if r.path != old]
    try:
        text = data.decode("utf-8")
        new_text, own = (rewrite_canvas if kind is FileKind.CANVAS else rewrite_base)(text, old, reloc)
    except ValueError:  # not UTF-8, not JSON or YAML: moved as it is, its links unread
        relinked.warnings.append(
            Issue(
                code=IssueCode.V03, path=old, severity=Severity.WARNING, message=f"{old} cannot be read; its own links were not rewritten"
            )
        )
        return data
    relinked.rewrites = own + relinked.rewrites
    return new_text.encode("utf-8") if own else data


@operation(files.MOVE, detail=move_detail)
def plan_file_move(ctx: OpContext, params: FileMoveParams) -> MovePlan:
    return plan_relocation(ctx, files.MOVE.name, params.target, params.to, None, params.expected_sha, params.expected_mtime_ns)


@operation(files.RENAME, detail=move_detail)
def plan_file_rename(ctx: OpContext, params: FileRenameParams) -> MovePlan:
    """A rename keeps the folder: a name with a folder in it is a move.

    Raises:
        InvalidParams: INVALID_PARAMS, the new name holds a '/'.
    """
    if "/" in params.name:
        raise InvalidParams("a new name holds no '/'; to put the file in another folder, use file.move")
    return plan_relocation(ctx, files.RENAME.name, params.target, None, params.name, params.expected_sha, params.expected_mtime_ns)
