"""The write methods: every mutation is one operation with a receipt.

Common to all: ``vault``; ``dry_run`` (plan and validate, write nothing); ``log`` (override the
default log event). Edits of an existing note take ``expected_sha`` (the sha256 a read returned);
two-step operations answer a preview with a ``fingerprint`` that the ``confirm`` call carries.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, TypeVar

import msgspec

from protocol.limits import MAX_NOTE_BYTES, describe
from protocol.methods.common import Fingerprint, OptionalVault, Params, Result
from protocol.methods.reads import Target
from protocol.methods.receipts import (
    DeleteDetail,
    LogReceipt,
    MergeDetail,
    MoveDetail,
    NoDetail,
    WriteReceipt,
    receipt_type,
)
from protocol.methods.spec import Effect, MethodSpec, P, Trait, spec

D = TypeVar("D")

Sha = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}$", description="A sha256 from a read or receipt.")]
NotePath = Annotated[str, msgspec.Meta(
    min_length=1, max_length=1024,
    description="A vault-relative path; '.md' is added when missing; folders are created.")]
Markdown = Annotated[str, msgspec.Meta(
    max_length=MAX_NOTE_BYTES, description=f"Markdown; the note may be at most {describe(MAX_NOTE_BYTES)} as UTF-8.")]
PatchText = Annotated[str, msgspec.Meta(min_length=1, max_length=65536)]
OpId = Annotated[str, msgspec.Meta(
    pattern=r"^[0-9]{8}T[0-9]{6}(\.[0-9]{6})?-[0-9a-f]{8}$",
    description="An operation id from a receipt or op.list: UTC time (to the microsecond) and 8 hex digits.")]
LogField = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]


class LogType(enum.StrEnum):
    INGEST = "INGEST"
    ROUTE = "ROUTE"
    EXTRACT = "EXTRACT"
    CONNECT = "CONNECT"
    DIGEST = "DIGEST"
    LEARN = "LEARN"
    LINT = "LINT"
    TASK = "TASK"
    GRAPH = "GRAPH"
    SYNC = "SYNC"
    RETHINK = "RETHINK"
    SOURCE = "SOURCE"


class LogEvent(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One log line's fields: ``YYYY-MM-DD HH:MM  TYPE  project  source → dest  —  note``."""

    type: LogType
    project: Annotated[str, msgspec.Meta(pattern=r"^(-|[a-z0-9][a-z0-9-]{0,63})$")] = "-"
    source: LogField
    note: LogField
    dest: LogField | None = None


class WriteParams(Params, kw_only=True):
    vault: OptionalVault = None
    dry_run: Annotated[bool, msgspec.Meta(description="Plan and validate only; write nothing.")] = False
    log: Annotated[LogEvent | None, msgspec.Meta(description="Override the default log event.")] = None


class EditParams(WriteParams, kw_only=True):
    expected_sha: Annotated[Sha | None, msgspec.Meta(
        description="Refuse with CONFLICT unless the note still has this sha256.")] = None


class TwoStepParams(WriteParams, kw_only=True):
    confirm: Annotated[bool, msgspec.Meta(description="Apply the previewed change.")] = False
    fingerprint: Fingerprint | None = None


class CreateParams(WriteParams, kw_only=True):
    path: NotePath
    title: Annotated[str, msgspec.Meta(min_length=1, max_length=512)] | None = None
    frontmatter: dict[str, Any] = {}
    body: Markdown | None = None


class Edit(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    old: PatchText
    new: Annotated[str, msgspec.Meta(max_length=65536)]


class PatchParams(EditParams, kw_only=True):
    target: Target
    old: PatchText | None = None
    new: Annotated[str, msgspec.Meta(max_length=65536)] | None = None
    edits: Annotated[list[Edit], msgspec.Meta(min_length=1, max_length=32)] | None = None


class AppendParams(EditParams, kw_only=True):
    target: Target
    section: Annotated[str, msgspec.Meta(min_length=1, max_length=200, description="An H2 heading.")]
    markdown: Annotated[str, msgspec.Meta(min_length=1, max_length=256 * 1024)]


FrontmatterKey = Annotated[str, msgspec.Meta(min_length=1, max_length=128)]


class SetFrontmatterParams(EditParams, kw_only=True):
    target: Target
    set: dict[FrontmatterKey, Any] = {}
    unset: Annotated[list[FrontmatterKey], msgspec.Meta(max_length=64)] = []


class Relation(enum.StrEnum):
    SUPPORTS = "supports"
    CONTRADICTS = "contradicts"
    EXTENDS = "extends"
    APPLIES_TO = "applies-to"
    CONTEXT_FOR = "context-for"


class LinkParams(WriteParams, kw_only=True):
    source: Target
    target: Target
    relation: Relation | None = None
    bidirectional: bool = True


class SupersedeParams(WriteParams, kw_only=True):
    old: Target
    new: Target


class MoveParams(TwoStepParams, kw_only=True):
    target: Target
    to: NotePath


class DeleteParams(TwoStepParams, kw_only=True):
    target: Target
    leave_broken_links: Annotated[bool, msgspec.Meta(
        description="Delete even though links to the note will break.")] = False


class MergeParams(TwoStepParams, kw_only=True):
    keep: Target
    absorb: Target


class UndoParams(WriteParams, kw_only=True):
    op_id: OpId


class OpListParams(Params, kw_only=True):
    vault: OptionalVault = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=200)] = 20


class OpSummary(msgspec.Struct, kw_only=True):
    op_id: str
    op: str
    created: float
    channel: str
    summary: str
    paths: list[str]
    undoes: str | None = None


class OpListResult(Result):
    ops: list[OpSummary]


class LogAppendParams(Params, kw_only=True):
    vault: OptionalVault = None
    event: LogEvent


class LogTailParams(Params, kw_only=True):
    vault: OptionalVault = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=200)] = 50
    type: LogType | None = None


class LogGrepParams(LogTailParams, kw_only=True):
    pattern: Annotated[str, msgspec.Meta(min_length=1, max_length=256,
                                         description="A regular expression (a safe subset: no groups or backreferences).")]


class LogLines(Result):
    lines: list[str]
    warnings: list[str] = []


def _write(name: str, params: type[P], detail: type[D], summary: str, effect: Effect = Effect.WRITE,
           traits: Trait = Trait.MCP) -> MethodSpec[P, WriteReceipt[D]]:
    """A note-changing method: it answers with a ``WriteReceipt[detail]`` and is an MCP tool."""
    return MethodSpec(name, params, receipt_type(detail), summary, effect, traits)


_TWO_STEP = Trait.MCP | Trait.TWO_STEP
CREATE = _write(
    "note.create", CreateParams, NoDetail,
    "Create a note at a new path (title, frontmatter, body or a skeleton); refuses existing names.",
)
PATCH = _write(
    "note.patch", PatchParams, NoDetail,
    "Replace text that occurs exactly once (or up to 32 non-overlapping edits, all or nothing).",
)
APPEND = _write("note.append", AppendParams, NoDetail, "Append Markdown to an H2 section, creating the section when absent.")
SET_FRONTMATTER = _write(
    "note.set_frontmatter", SetFrontmatterParams, NoDetail,
    "Set or unset frontmatter keys; every other key keeps its exact bytes.", Effect.IDEMPOTENT_WRITE,
)
LINK = _write(
    "note.link", LinkParams, NoDetail,
    "Link two notes under '## Relevant Notes' (a relation optional), both ways unless bidirectional is false.",
)
SUPERSEDE = _write(
    "note.supersede", SupersedeParams, NoDetail,
    "Mark an old note superseded by a new one (status, superseded_by) and link the new one back.",
)
MOVE = _write(
    "note.move", MoveParams, MoveDetail,
    "Rename or move a note and rewrite every link to it (two-step: preview, then confirm with the fingerprint).",
    Effect.DESTRUCTIVE, _TWO_STEP,
)
DELETE = _write(
    "note.delete", DeleteParams, DeleteDetail,
    "Move a note to .trash (undoable); refuses to break links unless told to (two-step: preview, then confirm).",
    Effect.DESTRUCTIVE, _TWO_STEP,
)
MERGE = _write(
    "note.merge", MergeParams, MergeDetail,
    "Fold one note into another, repoint its links, mark it superseded (two-step: preview, then confirm).",
    Effect.DESTRUCTIVE, _TWO_STEP,
)
UNDO = _write(
    "op.undo", UndoParams, NoDetail,
    "Reverse a committed operation while the files it wrote are unchanged since.", Effect.DESTRUCTIVE,
)
OP_LIST = spec(
    "op.list", OpListParams, OpListResult, "Recent operations kept for undo, newest first.", Effect.READ, Trait.MCP,
)
LOG_APPEND = spec(
    "log.append", LogAppendParams, LogReceipt, "Append one event line to the vault's log.", Effect.WRITE, Trait.MCP,
)
LOG_TAIL = spec(
    "log.tail", LogTailParams, LogLines,
    "The last events of the vault's log, optionally of one type.", Effect.READ, Trait.MCP,
)
LOG_GREP = spec(
    "log.grep", LogGrepParams, LogLines,
    "Log events matching a pattern (a safe regular-expression subset).", Effect.READ, Trait.MCP,
)
SPECS = (CREATE, PATCH, APPEND, SET_FRONTMATTER, LINK, SUPERSEDE, MOVE, DELETE, MERGE, UNDO,
         OP_LIST, LOG_APPEND, LOG_TAIL, LOG_GREP)
