"""What the ``file.*`` planners share: the one existing file a call names, read strictly and
compared with what the caller saw, and a free destination for a file that moves.

A file that is not a note is read as the engine re-checks it (no symlink followed, at most a raw
copy's bound), so what the plan journals is what is on disk. A note is refused here with the
method that knows its links and frontmatter.
"""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from vaultd.errors import Conflict, InvalidParams, LimitExceeded, ValidationFailed
from vaultd.ops.create import screen_new_path
from vaultd.policy import disk_twin
from vaultd.txn.engine import read_state
from vaultd.txn.plan import MAX_CAPTURE_BYTES
from vaultd.vault.files import find_file
from vaultd.vault.walk import is_note_path

if TYPE_CHECKING:
    from vaultd.ops._context import OpContext
    from vaultd.txn.dirfd import Current


def existing_file(ctx: OpContext, target: str, instead: str) -> str:
    """The vault path of the file (not a note) ``target`` names, as the caller may see it.

    Raises:
        NotFound: NOT_FOUND, no such file for this caller.
        InvalidParams: INVALID_PARAMS, it is a note (``instead`` names the note method).
    """
    path = find_file(ctx.index, target, ctx.visibility.hidden)
    if is_note_path(path):
        raise InvalidParams(f"{path} is a note; use {instead}, which keeps its links and frontmatter")
    return path


def read_file_target(ctx: OpContext, path: str, expected_sha: str | None, expected_mtime_ns: int | None) -> Current:
    """The file's bytes and mode now, refused unless it is still the one the caller saw.

    Raises:
        Conflict: CONFLICT, it is gone, or its sha256 or mtime differs from the expected one.
        LimitExceeded: LIMIT, it is over the bound of a file one operation journals.
    """
    if expected_mtime_ns is not None:
        try:
            mtime = os.lstat(ctx.root / path).st_mtime_ns
        except OSError:
            mtime = None
        if mtime != expected_mtime_ns:
            raise Conflict(f"{path} changed since you saw it (its mtime differs); list or read it again, then retry")
    try:
        current = read_state(ctx.root, path, MAX_CAPTURE_BYTES)
    except LimitExceeded as exc:
        raise LimitExceeded(f"{path} is over the {MAX_CAPTURE_BYTES} bytes one operation journals; move it outside vaultd") from exc
    if current is None:
        raise Conflict(f"{path} was removed since it was indexed; list the files again")
    if expected_sha is not None and not hashlib.sha256(current.data).hexdigest().startswith(expected_sha):
        raise Conflict(f"{path} changed since you read it (sha256 differs); read it again, then retry")
    return current


def free_destination(ctx: OpContext, old: str, raw_new: str) -> str:
    """The screened path a file moves to: a file path, not a note's, free by every spelling.

    Raises:
        ValidationFailed: VALIDATION, the path is unsafe or a note's, or it is taken (V08).
        PolicyRefused: POLICY, the caller may not write there.
    """
    new = screen_new_path(ctx, raw_new.strip("/"))
    if new == old:
        raise ValidationFailed(f"{old} is already at that path")
    if is_note_path(new):
        message = "a file that is not a note cannot be moved to a note's path (.md)"
        raise ValidationFailed(f"refused: {message}", issues=[Issue(code=IssueCode.V04, path=new, message=message)])
    index = ctx.index
    taken = new in index.notes or new in index.attachments or new in index.skipped or os.path.lexists(ctx.root / new)
    twin = None if taken else (disk_twin(ctx.root, new) or next((p for p in index.resolver.same_key(new) if p != old), None))
    if taken or twin is not None:
        also = "" if twin is None else f" as {twin} (the same name but for letter case or Unicode form)"
        raise ValidationFailed(
            f"{new} already exists{also}; choose a free path",
            issues=[Issue(code=IssueCode.V08, path=new, message=f"the destination already exists{also}")],
        )
    return new
