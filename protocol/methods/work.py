"""Work documents: an agent declares a piece of multi-step work before its writes.

``work.start`` names what the work is, its kind and the notes it will touch; the operations the
same agent session applies in that vault while the work runs are tagged with it; ``work.progress``
says how far it is (one bounded line, shown live to the person); ``work.finish`` closes it;
``work.cancel`` rolls back the work's applied operations as one undo, newest first, leaving any
file a person (or anyone) changed since as it is and naming it. Records live in the vault's state
folder (``.vaultd/work/``), written by vaultd alone, at most :data:`MAX_WORK` per vault.
"""

from __future__ import annotations

import enum
from typing import Annotated

import msgspec

from protocol.methods.common import OptionalVault, Params, Result
from protocol.methods.receipts import WriteReceipt, receipt_type
from protocol.methods.spec import Effect, MethodSpec, Trait, spec
from protocol.methods.writes import WriteParams

MAX_WORK = 200  #: work records kept per vault; past that the oldest closed ones go
MAX_WORK_LINE = 200  #: a work's description and each progress line, in characters
MAX_WORK_NOTES = 64  #: notes a work declares it will touch
MAX_WORK_OPS = 500  #: operations tagged with one work; past that, further writes are refused under it
MAX_WORK_BYTES = 64 * 1024  #: one work record on disk

WorkId = Annotated[str, msgspec.Meta(pattern=r"^w[0-9]{14}-[0-9a-f]{8}$", description="A work id, as work.start gives it.")]
WorkLine = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_WORK_LINE, pattern=r"^[^\x00-\x1f\x7f]*$", description="One line.")]
WorkKind = Annotated[
    str, msgspec.Meta(pattern=r"^[a-z][a-z0-9-]{0,31}$", description="What sort of work: edit, refactor, import, cleanup, ...")
]
NotePath = Annotated[str, msgspec.Meta(min_length=1, max_length=1024, pattern=r"^[^\x00]*$")]


class WorkState(enum.StrEnum):
    RUNNING = "running"  #: started; its session's writes in the vault are tagged with it
    FINISHED = "finished"  #: the agent said it is done
    CANCELLED = "cancelled"  #: rolled back (what a person had changed since is kept)


class WorkSummary(Result, kw_only=True):
    id: str
    vault: str
    session: Annotated[str | None, msgspec.Meta(description="The agent session doing it; None for a person's.")] = None
    what: str
    kind: str
    notes: Annotated[list[str], msgspec.Meta(description="The notes it said it would touch.")] = []
    state: WorkState
    started: float
    updated: float
    progress: Annotated[str, msgspec.Meta(description="The last progress line.")] = ""
    ops: Annotated[list[str], msgspec.Meta(description="The operations applied under it, oldest first.")] = []
    proposals: Annotated[list[str], msgspec.Meta(description="The proposals made under it.")] = []
    undo_op: Annotated[str | None, msgspec.Meta(description="The operation that rolled it back (cancelled).")] = None
    kept: Annotated[list[str], msgspec.Meta(description="Files a cancel left alone: changed since by someone else.")] = []


class WorkStartParams(Params, kw_only=True):
    vault: OptionalVault = None
    what: Annotated[WorkLine, msgspec.Meta(description="What the work does, in one line.")]
    kind: WorkKind = "edit"
    notes: Annotated[list[NotePath], msgspec.Meta(max_length=MAX_WORK_NOTES, description="Notes it will touch.")] = []


class WorkProgressParams(Params, kw_only=True):
    vault: OptionalVault = None
    id: WorkId
    line: Annotated[WorkLine, msgspec.Meta(description="How far it is, in one line.")]


class WorkRef(Params, kw_only=True):
    vault: OptionalVault = None
    id: WorkId


class WorkListParams(Params, kw_only=True):
    vault: OptionalVault = None
    all: Annotated[bool, msgspec.Meta(description="Closed work too; default: running only.")] = False
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_WORK, description="At most this many, newest first.")] = 50


class WorkListResult(Result, kw_only=True):
    work: Annotated[list[WorkSummary], msgspec.Meta(description="Newest first.")]


class WorkCancelParams(WriteParams, kw_only=True):
    id: WorkId


class WorkCancelDetail(msgspec.Struct, kw_only=True):
    work: str
    undone: Annotated[list[str], msgspec.Meta(description="The operations rolled back, newest first.")] = []
    kept: Annotated[list[str], msgspec.Meta(description="Files changed since by someone else: left as they are.")] = []


WORK_START = spec("work.start", WorkStartParams, WorkSummary, "Declare multi-step work before its writes.", Effect.WRITE, Trait.MCP)
WORK_PROGRESS = spec("work.progress", WorkProgressParams, WorkSummary, "Report progress on your work.", Effect.WRITE, Trait.MCP)
WORK_FINISH = spec("work.finish", WorkRef, WorkSummary, "Close your work as done.", Effect.IDEMPOTENT_WRITE, Trait.MCP)
WORK_CANCEL: MethodSpec[WorkCancelParams, WriteReceipt[WorkCancelDetail]] = MethodSpec(
    "work.cancel", WorkCancelParams, receipt_type(WorkCancelDetail), "Cancel your work: undo its operations.", Effect.DESTRUCTIVE, Trait.MCP
)
WORK_LIST = spec("work.list", WorkListParams, WorkListResult, "The vault's work documents, running ones by default.", Effect.READ)
SPECS = (WORK_START, WORK_PROGRESS, WORK_FINISH, WORK_CANCEL, WORK_LIST)
