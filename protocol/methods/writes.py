"""The write methods: every mutation is one operation with a receipt.

Common to all: ``vault``; ``dry_run`` (plan and validate, write nothing); ``log`` (override the
default log event). Edits of an existing note take ``expected_sha`` (the sha256 a read returned);
two-step operations answer a preview with a ``fingerprint`` that the ``confirm`` call carries.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, TypeVar

import msgspec

from protocol.limits import MAX_APPEND_BYTES, MAX_NOTE_BYTES, MAX_PATCH_TEXT_BYTES, describe
from protocol.methods.common import Fingerprint, OptionalVault, Params, Reason, Result
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

MIN_SHA_PREFIX = 12  #: hex digits of a sha256 a caller may give instead of all 64 (what receipts print)
Sha = Annotated[
    str,
    msgspec.Meta(
        pattern=rf"^[0-9a-f]{{{MIN_SHA_PREFIX},64}}$",
        description=f"A sha256 from a read or receipt, whole or its first {MIN_SHA_PREFIX} or more hex digits.",
    ),
]
NotePath = Annotated[str, msgspec.Meta(min_length=1, max_length=1024, description="Its vault path; '.md' and folders are added as needed.")]
Markdown = Annotated[
    str, msgspec.Meta(max_length=MAX_NOTE_BYTES, description=f"Markdown; the note may be at most {describe(MAX_NOTE_BYTES)} as UTF-8.")
]
PatchText = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_PATCH_TEXT_BYTES)]
NewText = Annotated[str, msgspec.Meta(max_length=MAX_PATCH_TEXT_BYTES)]
OpId = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^[0-9]{8}T[0-9]{6}(\.[0-9]{6})?-[0-9a-f]{8}$",
        description="An operation id from a receipt or op.list: UTC time (to the microsecond) and 8 hex digits.",
    ),
]
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

    type: Annotated[LogType, msgspec.Meta(description="The kind of event.")]
    project: Annotated[str, msgspec.Meta(pattern=r"^(-|[a-z0-9][a-z0-9-]{0,63})$", description="A project id, or - for none.")] = "-"
    source: Annotated[LogField, msgspec.Meta(description="Where the event came from (a note, a tool, a URL).")]
    note: Annotated[LogField, msgspec.Meta(description="What happened, in a few words.")]
    dest: Annotated[LogField, msgspec.Meta(description="Where it went, if anywhere.")] | None = None


class WriteParams(Params, kw_only=True):
    vault: OptionalVault = None
    dry_run: Annotated[bool, msgspec.Meta(description="Plan and validate only; write nothing.")] = False
    log: Annotated[LogEvent | None, msgspec.Meta(description="Override the default log event.")] = None
    reason: Annotated[Reason | None, msgspec.Meta(description="Why, in one line, for the person who reviews it as a proposal.")] = None


class EditParams(WriteParams, kw_only=True):
    expected_sha: Annotated[
        Sha | None,
        msgspec.Meta(
            description=(f"Refuse with CONFLICT unless the note still has this sha256 (its first {MIN_SHA_PREFIX}+ hex digits will do).")
        ),
    ] = None


class TwoStepParams(WriteParams, kw_only=True):
    confirm: Annotated[bool, msgspec.Meta(description="Apply the previewed change.")] = False
    fingerprint: Fingerprint | None = None

    def needs_preview(self) -> bool:
        """Whether this call must be previewed before it applies (a capture of one file need not)."""
        return True


class CreateParams(WriteParams, kw_only=True):
    path: NotePath
    title: (
        Annotated[str, msgspec.Meta(min_length=1, max_length=512, description="The title, in the frontmatter and the skeleton's H1.")]
        | None
    ) = None
    frontmatter: Annotated[dict[str, Any], msgspec.Meta(description="Frontmatter keys and values to start with.")] = {}
    body: Annotated[
        Markdown | None,
        msgspec.Meta(description=f"The body; omitted, a skeleton with the title. At most {describe(MAX_NOTE_BYTES)} as UTF-8."),
    ] = None
    template: (
        Annotated[
            str,
            msgspec.Meta(
                min_length=1,
                max_length=1024,
                description=("A template's name or vault path. Not with body; its {{title}}, {{date}} and {{time}} are rendered."),
            ),
        ]
        | None
    ) = None
    unique: Annotated[
        bool,
        msgspec.Meta(description="Name it as Obsidian's unique note creator does. Its prefix, folder and template too."),
    ] = False


class Edit(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    old: Annotated[
        PatchText,
        msgspec.Meta(description=f"Text that occurs exactly once in the note; at most {describe(MAX_PATCH_TEXT_BYTES)} as UTF-8."),
    ]
    new: Annotated[NewText, msgspec.Meta(description=f"Its replacement; at most {describe(MAX_PATCH_TEXT_BYTES)} as UTF-8.")]


class PatchParams(EditParams, kw_only=True):
    target: Target
    old: Annotated[PatchText | None, msgspec.Meta(description="Text that occurs exactly once in the note (or give edits).")] = None
    new: Annotated[
        NewText | None, msgspec.Meta(description=f"The replacement of old; at most {describe(MAX_PATCH_TEXT_BYTES)} as UTF-8.")
    ] = None
    edits: (
        Annotated[
            list[Edit],
            msgspec.Meta(
                min_length=1,
                max_length=32,
                description="Several old/new pairs, none overlapping; all apply or none.",
            ),
        ]
        | None
    ) = None
    rewrite_anchors: Annotated[
        bool,
        msgspec.Meta(description="If the edit renames a heading, repoint links to it too. In the same operation, everywhere."),
    ] = False


class AppendParams(EditParams, kw_only=True):
    target: Target
    section: Annotated[str, msgspec.Meta(min_length=1, max_length=200, description="The H2 heading to append under (created when absent).")]
    markdown: Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=MAX_APPEND_BYTES,
            description=f"The Markdown to append at the end of the section; at most {describe(MAX_APPEND_BYTES)} as UTF-8.",
        ),
    ]


FrontmatterKey = Annotated[str, msgspec.Meta(min_length=1, max_length=128)]


class SetFrontmatterParams(EditParams, kw_only=True):
    target: Target
    set: Annotated[dict[FrontmatterKey, Any], msgspec.Meta(description="Keys to set, with their values.")] = {}
    unset: Annotated[list[FrontmatterKey], msgspec.Meta(max_length=64, description="Keys to remove.")] = []


class Relation(enum.StrEnum):
    SUPPORTS = "supports"
    CONTRADICTS = "contradicts"
    EXTENDS = "extends"
    APPLIES_TO = "applies-to"
    CONTEXT_FOR = "context-for"


class LinkParams(WriteParams, kw_only=True):
    source: Annotated[Target, msgspec.Meta(description="The note that gets the link (a path, name or alias).")]
    target: Annotated[Target, msgspec.Meta(description="The note linked to (a path, name or alias).")]
    relation: Annotated[Relation | None, msgspec.Meta(description="How the source relates to the target.")] = None
    bidirectional: Annotated[bool, msgspec.Meta(description="Also link the target back to the source.")] = True


class SupersedeParams(WriteParams, kw_only=True):
    old: Annotated[Target, msgspec.Meta(description="The note that is superseded (a path, name or alias).")]
    new: Annotated[Target, msgspec.Meta(description="The note that supersedes it.")]


class MoveParams(TwoStepParams, kw_only=True):
    target: Annotated[Target, msgspec.Meta(description="The note to move (a path, name or alias).")]
    to: Annotated[
        NotePath, msgspec.Meta(description="Its new vault path; ending in '/', a folder to move it into. The '.md' is added when missing.")
    ]


class DeleteParams(TwoStepParams, kw_only=True):
    target: Annotated[Target, msgspec.Meta(description="The note to delete (a path, name or alias).")]
    leave_broken_links: Annotated[bool, msgspec.Meta(description="Delete even though links to the note will break.")] = False


class MergeParams(TwoStepParams, kw_only=True):
    keep: Annotated[Target, msgspec.Meta(description="The note that stays and receives the content.")]
    absorb: Annotated[Target, msgspec.Meta(description="The note folded in (kept, marked superseded).")]


class UndoParams(WriteParams, kw_only=True):
    op_id: OpId
    session: Annotated[
        bool,
        msgspec.Meta(description="Undo every kept operation of op_id's agent session, as one operation. Newest first."),
    ] = False


class OpListParams(Params, kw_only=True):
    vault: OptionalVault = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=200, description="At most this many operations, newest first.")] = 20


class OpSummary(msgspec.Struct, kw_only=True):
    op_id: str
    op: str
    created: float
    channel: str
    summary: str
    paths: list[str]
    undoes: str | None = None
    session: str | None = None  #: the agent session that made it
    proposal: str | None = None  #: the proposal a person applied with it
    proposed_by: str | None = None


class OpListResult(Result):
    ops: list[OpSummary]


class LogAppendParams(Params, kw_only=True):
    vault: OptionalVault = None
    event: Annotated[LogEvent, msgspec.Meta(description="The event's fields; the daemon adds the time.")]


class LogTailParams(Params, kw_only=True):
    vault: OptionalVault = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=200, description="At most this many events, the newest.")] = 50
    type: Annotated[LogType | None, msgspec.Meta(description="Only events of this type.")] = None


class LogGrepParams(LogTailParams, kw_only=True):
    pattern: Annotated[
        str, msgspec.Meta(min_length=1, max_length=256, description="A regular expression without groups or backreferences.")
    ]


class LogLines(Result):
    lines: list[str]
    warnings: list[str] = []


def _write(
    name: str, params: type[P], detail: type[D], summary: str, effect: Effect = Effect.WRITE, traits: Trait = Trait.MCP
) -> MethodSpec[P, WriteReceipt[D]]:
    """A note-changing method: it answers with a ``WriteReceipt[detail]`` and is an MCP tool."""
    return MethodSpec(name, params, receipt_type(detail), summary, effect, traits)


_TWO_STEP = Trait.MCP | Trait.TWO_STEP
CREATE = _write(
    "note.create",
    CreateParams,
    NoDetail,
    "Create a note at a new path (title, frontmatter, body or a skeleton); refuses existing names.",
)
PATCH = _write(
    "note.patch",
    PatchParams,
    NoDetail,
    "Replace text that occurs exactly once (or up to 32 non-overlapping edits, all or nothing).",
)
APPEND = _write("note.append", AppendParams, NoDetail, "Append Markdown to an H2 section, creating the section when absent.")
SET_FRONTMATTER = _write(
    "note.set_frontmatter",
    SetFrontmatterParams,
    NoDetail,
    "Set or unset frontmatter keys; every other key keeps its exact bytes.",
    Effect.IDEMPOTENT_WRITE,
)
LINK = _write(
    "note.link",
    LinkParams,
    NoDetail,
    "Link two notes under '## Relevant Notes' (a relation optional). Both ways unless bidirectional is false.",
)
SUPERSEDE = _write(
    "note.supersede",
    SupersedeParams,
    NoDetail,
    "Mark an old note superseded by a new one (status, superseded_by) and link the new one back.",
)
MOVE = _write(
    "note.move",
    MoveParams,
    MoveDetail,
    "Rename or move a note and rewrite every link to it (two-step: preview, then confirm with the fingerprint).",
    Effect.DESTRUCTIVE,
    _TWO_STEP,
)
DELETE = _write(
    "note.delete",
    DeleteParams,
    DeleteDetail,
    "Move a note to .trash (undoable); refuses to break links unless told to (two-step: preview, then confirm).",
    Effect.DESTRUCTIVE,
    _TWO_STEP,
)
MERGE = _write(
    "note.merge",
    MergeParams,
    MergeDetail,
    "Fold one note into another, repoint its links, mark it superseded (two-step: preview, then confirm).",
    Effect.DESTRUCTIVE,
    _TWO_STEP,
)
UNDO = _write(
    "op.undo",
    UndoParams,
    NoDetail,
    "Reverse a committed operation whose files are unchanged since.",
    Effect.DESTRUCTIVE,
)
OP_LIST = spec(
    "op.list",
    OpListParams,
    OpListResult,
    "Recent operations kept for undo. Newest first.",
    Effect.READ,
    Trait.MCP,
)
LOG_APPEND = spec(
    "log.append",
    LogAppendParams,
    LogReceipt,
    "Append one event line to the vault's log.",
    Effect.WRITE,
    Trait.MCP,
)
LOG_TAIL = spec(
    "log.tail",
    LogTailParams,
    LogLines,
    "The newest events, optionally of one type.",
    Effect.READ,
    Trait.MCP,
)
LOG_GREP = spec(
    "log.grep",
    LogGrepParams,
    LogLines,
    "Log events matching a pattern (a safe regular-expression subset).",
    Effect.READ,
    Trait.MCP,
)
SPECS = (CREATE, PATCH, APPEND, SET_FRONTMATTER, LINK, SUPERSEDE, MOVE, DELETE, MERGE, UNDO, OP_LIST, LOG_APPEND, LOG_TAIL, LOG_GREP)
