"""file.write: create or replace a text file that is not a note (a canvas, a base, a .txt, .json
or .css file), validated as its kind, compared and swapped, journaled and undoable.

A canvas must be JSON Canvas 1.0 and a base Bases YAML (:mod:`vaultd.policy.file_formats`), or
nothing is written: Obsidian could not open them. Notes have their own writes (``note.*``), and
``.obsidian/`` is Obsidian's (a reserved folder no write creates a path in). A file that exists
is replaced only when the call says so by what it expects (its sha256 or mtime), or when
``create_only`` is not set; its mode is kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.methods import files
from protocol.methods.files import FileKind
from vaultd.errors import Conflict, InvalidParams, LimitExceeded, ValidationFailed
from vaultd.ops._file_target import read_file_target
from vaultd.ops._runner import no_detail
from vaultd.ops.catalog import operation
from vaultd.ops.create import refuse_existing, screen_new_path
from vaultd.policy.file_formats import format_issues
from vaultd.txn.plan import MAX_NOTE_BYTES, Change, Plan
from vaultd.vault.files import TEXT_KINDS, file_kind

if TYPE_CHECKING:
    from protocol.methods.files import FileWriteParams
    from vaultd.ops._context import OpContext


@operation(files.WRITE, detail=no_detail)
def plan_file_write(ctx: OpContext, params: FileWriteParams) -> Plan:
    """A text file that is not a note, created or replaced whole, checked for its kind first.

    Raises:
        InvalidParams: INVALID_PARAMS, the path is a note's or not a text kind.
        ValidationFailed: VALIDATION, the path is unsafe, or the content is not valid for its kind (V30).
        Conflict: CONFLICT, the file exists and ``create_only`` is set, or it is not the one the caller saw.
        LimitExceeded: LIMIT, the text is over the note bound in UTF-8 bytes.
    """
    kind = file_kind(params.path.strip("/"))
    if kind is FileKind.NOTE:
        raise InvalidParams("that is a note's path (.md); write notes with note.create, note.patch or note.append")
    if kind not in TEXT_KINDS:
        raise InvalidParams(
            f"file.write writes text files (.canvas, .base, .txt, .json, .css, ...); {kind.value} files are moved, not written"
        )
    path = screen_new_path(ctx, params.path.strip("/"))
    if issues := format_issues(path, params.content):
        raise ValidationFailed(
            f"refused: {issues[0].message}" + (f" (and {len(issues) - 1} more)" if len(issues) > 1 else ""), issues=issues
        )
    after = params.content.encode("utf-8")
    if len(after) > MAX_NOTE_BYTES:  # the params bound counts characters; the file's is in bytes
        raise LimitExceeded(f"{path} would be {len(after)} bytes as UTF-8; a text file vaultd writes may be {MAX_NOTE_BYTES}")
    exists = path in ctx.index.attachments or (ctx.root / path).exists()
    if not exists:
        if params.expected_sha is not None or params.expected_mtime_ns is not None:
            raise Conflict(f"{path} does not exist (it was removed since you read it); read again, then retry")
        refuse_existing(ctx, path, "file", "give its exact path to replace it")
        return Plan(
            op=files.WRITE.name, changes=[Change(path=path, before=None, after=after)], summary=f"created {path}", log_type="INGEST"
        )
    if params.create_only:
        raise Conflict(f"{path} already exists; read it and pass expected_sha to replace it")
    current = read_file_target(ctx, path, params.expected_sha, params.expected_mtime_ns)
    return Plan(
        op=files.WRITE.name, changes=[Change(path=path, before=current.data, after=after)], summary=f"wrote {path}", log_type="INGEST"
    )
