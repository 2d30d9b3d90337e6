"""What a write answers: a receipt, one of five outcomes, with the operation's own detail.

On the wire a receipt is a JSON object whose ``outcome`` names its variant::

    preview    a two-step operation's first call: nothing written; ``fingerprint`` confirms it
    dry_run    ``dry_run: true``: planned and validated, nothing written
    unchanged  the operation had nothing to change (the link exists, the key has that value)
    applied    written; ``op_id`` undoes it and ``log`` says whether the log line was appended
    proposed   an agent's operation the vault's policy holds for a person: nothing written;
               ``proposal`` names the proposal (``proposal.show``), which a person applies or rejects

``outcome`` alone says which variant a receipt is: one key to branch on, and no booleans beside
it that could disagree with it (or cost an agent's context a copy in every receipt).
``detail`` is a Struct per operation (:class:`MoveDetail`, :class:`DeleteDetail`,
:class:`MergeDetail`, else the empty :class:`NoDetail`), so its keys are part of the contract.
"""

from __future__ import annotations

import enum
import typing
from typing import Annotated, Any, Generic, TypeVar, Union

import msgspec

from protocol.errors import Issue
from protocol.methods.common import Result, described

MAX_RECEIPT_WARNINGS = 100  #: warnings a receipt lists; the rest are counted in ``warnings_omitted``
MAX_DETAIL_LINKS = 500  #: rewritten links a move or merge detail lists


class ChangeAction(enum.StrEnum):
    CREATE = "create"
    MODIFY = "modify"
    DELETE = "delete"


class ChangeReceipt(msgspec.Struct, kw_only=True):
    path: Annotated[str, described("The vault-relative path of a file the operation writes.")]
    action: Annotated[ChangeAction, described("Whether the file is created, modified or deleted.")]
    before_sha: Annotated[str | None, described("The file's sha256 before; null for a create.")]
    after_sha: Annotated[str | None, described("The file's sha256 after; null for a delete.")]
    bytes: Annotated[int, described("The file's size after (0 for a delete).")]


class LogReceipt(Result):
    appended: Annotated[bool, described("Whether the line was appended to the vault's log.")]
    line: Annotated[str | None, described("The line appended.")] = None
    error: Annotated[str | None, described("Why it was not appended; the write itself stands.")] = None


class NoDetail(msgspec.Struct, kw_only=True):
    """The detail of an operation whose changes say it all (``{}`` on the wire)."""


class MoveDetail(msgspec.Struct, kw_only=True):
    from_: Annotated[str, described("The note's path before.")] = msgspec.field(name="from")
    to: Annotated[str, described("Its path after.")]
    rewritten: Annotated[list[str], described("The files whose links to it are rewritten (notes, canvases, bases, bookmarks), by path.")]
    links: Annotated[list[str], described(f"Each rewritten link, as 'path:line old -> new'; at most {MAX_DETAIL_LINKS}.")]


class DeleteDetail(msgspec.Struct, kw_only=True):
    trash: Annotated[str, described("Where the note goes in .trash; op.undo brings it back.")]
    backlinks: Annotated[list[str], described("'path:line' of each link the delete breaks, in notes the caller sees.")]


class MergeDetail(msgspec.Struct, kw_only=True):
    keep: Annotated[str, described("The note that stays and receives the content.")]
    absorb: Annotated[str, described("The note folded in, then marked superseded.")]
    unions: Annotated[dict[str, list[Any]], described("The frontmatter lists merged as unions (source, sources, topics), by key.")] = {}
    inbound: Annotated[
        list[str], described(f"Each link repointed from absorb to keep (in notes, canvases, bases, bookmarks); at most {MAX_DETAIL_LINKS}.")
    ]
    body: Annotated[str, described("Keep's body after the merge.")]


D = TypeVar("D")


class _Receipt(Result, Generic[D], kw_only=True, tag_field="outcome"):
    """The fields every outcome has; the variants fix which of them mean something."""

    op: Annotated[str, described("The method, e.g. note.move.")]
    op_id: Annotated[str | None, described("Set when applied; pass to op.undo.")] = None
    fingerprint: Annotated[str | None, described("For a preview: pass with confirm to apply.")] = None
    changes: Annotated[list[ChangeReceipt], described("Every file written (or that would be).")] = []
    warnings: Annotated[
        list[Issue], described(f"Problems that did not block the write; at most {MAX_RECEIPT_WARNINGS}, in the order found.")
    ] = []
    warnings_omitted: Annotated[int, described("Warnings found beyond the listed ones.")] = 0
    log: Annotated[LogReceipt | None, described("For an applied write: the log line.")] = None
    detail: Annotated[D, described("The operation's own facts; its Struct is given with each method.")]


class Preview(_Receipt[D], Generic[D], kw_only=True, tag="preview"):
    """A two-step operation's first call: what it would change, and the fingerprint to confirm it."""

    fingerprint: Annotated[str, described("Pass with confirm=true and the same arguments to apply.")]


class DryRun(_Receipt[D], Generic[D], kw_only=True, tag="dry_run"):
    """What the operation would change; nothing was written."""


class Unchanged(_Receipt[D], Generic[D], kw_only=True, tag="unchanged"):
    """The operation had nothing to change; nothing was written and nothing logged."""


class Applied(_Receipt[D], Generic[D], kw_only=True, tag="applied"):
    """Written and indexed."""

    op_id: Annotated[str, described("The operation's id; pass to op.undo.")]
    log: Annotated[LogReceipt, described("Whether the log line was appended (the write stands even when it was not).")]
    commit: Annotated[str | None, described("The git commit recording the operation, when the vault keeps checkpoints.")] = None


class Proposed(_Receipt[D], Generic[D], kw_only=True, tag="proposed"):
    """Held for a person: the vault's policy lets agents only propose this operation. Nothing was
    written; ``changes`` are what applying the proposal would write."""

    proposal: Annotated[
        str, described("The proposal's id: poll it with proposal.list or proposal.show; withdraw it with proposal.withdraw.")
    ]
    message: Annotated[str, described("What happens next, for the agent to tell its user.")]


WriteReceipt = Union[Preview[D], DryRun[D], Unchanged[D], Applied[D], Proposed[D]]  # noqa: UP007 - a generic alias
"""What every note-changing method answers; ``WriteReceipt[MoveDetail]`` for ``note.move``."""

Outcome = Preview[Any] | DryRun[Any] | Unchanged[Any] | Applied[Any] | Proposed[Any]  #: any receipt, whatever its detail


OUTCOMES = (Preview, DryRun, Unchanged, Applied, Proposed)


def detail_of(result: Any) -> type | None:
    """The detail Struct of a ``WriteReceipt[detail]`` result type, or None for any other type."""
    variants = typing.get_args(result) if typing.get_origin(result) is Union else ()
    if not variants or any(typing.get_origin(v) not in OUTCOMES for v in variants):
        return None
    detail: type = typing.get_args(variants[0])[0]
    return detail


def receipt_type(detail: type[D]) -> Any:
    """``WriteReceipt[detail]`` as a run-time type, for a spec's ``result`` and for decoding."""
    return WriteReceipt[detail]  # type: ignore[misc,valid-type]
