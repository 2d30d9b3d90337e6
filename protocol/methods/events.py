"""Events: what happens in a vault, as a vault's event log records it and a subscription sends it.

Each kind is a Struct tagged by ``kind``; ``AnyEvent`` is their union, which is what a
``subscription.events`` notification carries. How to subscribe, and the guarantees of order,
resuming and bulk changes, are in :mod:`protocol.methods.subscriptions`.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Annotated

import msgspec

from protocol.methods.common import described
from protocol.methods.indexing import MeaningCoverage
from protocol.methods.proposals import ProposalState
from protocol.methods.vaults import VaultState

if TYPE_CHECKING:
    from protocol.methods.indexing import BuildProgress

MAX_EVENT_PATHS = 32  #: paths an operation or proposal event lists; the rest are counted
BULK_MIN_CHANGES = 64  #: note changes found at once that open a bulk state
BULK_QUIET_MS = 250  #: a bulk state is left once the vault has had no note change this long
BULK_LISTED = 5_000  #: note events listed in one bulk state; further ones are only counted


class EventKind(enum.StrEnum):
    """Every kind of event a subscription can ask for (``kinds``)."""

    NOTE_CREATED = "note.created"
    NOTE_CHANGED = "note.changed"
    NOTE_REMOVED = "note.removed"
    NOTE_RENAMED = "note.renamed"
    OPERATION_APPLIED = "operation.applied"
    OPERATION_UNDONE = "operation.undone"
    PROPOSAL_CREATED = "proposal.created"
    PROPOSAL_DECIDED = "proposal.decided"
    INDEX_PROGRESS = "index.progress"
    INDEX_READY = "index.ready"
    VAULT_HEALTH = "vault.health"
    VAULT_REMOVED = "vault.removed"
    STATE_ENTER = "state.enter"
    STATE_LEAVE = "state.leave"
    FRESH_INSTANCE = "fresh_instance"
    WORK_CHANGED = "work.changed"


NOTE_KINDS = frozenset({EventKind.NOTE_CREATED, EventKind.NOTE_CHANGED, EventKind.NOTE_REMOVED, EventKind.NOTE_RENAMED})
#: Delivered whatever ``kinds`` says: they change what the client's clock means.
ALWAYS_DELIVERED = frozenset({EventKind.FRESH_INSTANCE, EventKind.VAULT_REMOVED})


class Event(msgspec.Struct, kw_only=True, tag_field="kind"):
    """Fields every event carries (the daemon fills them in when the vault records the event)."""

    vault: Annotated[str, described("The vault it happened in.")] = ""
    clock: Annotated[str, described("The vault's clock at this event: pass the last one seen as since[vault] to resume after it.")] = ""
    at: Annotated[float, described("When the daemon recorded it (Unix time, seconds).")] = 0.0


class NoteCreated(Event, kw_only=True, tag="note.created"):
    """A note appeared (created by anyone: an editor, git, an operation)."""

    path: Annotated[str, described("The note's vault-relative path.")]


class NoteChanged(Event, kw_only=True, tag="note.changed"):
    """A note's bytes changed (a touch that leaves them as they were is not reported)."""

    path: Annotated[str, described("The note's vault-relative path.")]


class NoteRemoved(Event, kw_only=True, tag="note.removed"):
    """A note is gone (deleted, moved out of the vault, or no longer a note the index can hold)."""

    path: Annotated[str, described("The note's vault-relative path, as it was.")]


class NoteRenamed(Event, kw_only=True, tag="note.renamed"):
    """A note moved: identical bytes gone from one path and new at another, in the same moment."""

    path: Annotated[str, described("The note's path now.")]
    old_path: Annotated[str, described("Its path before.")]


class OperationApplied(Event, kw_only=True, tag="operation.applied"):
    """vaultd applied an operation (after the note events of the files it wrote)."""

    op_id: Annotated[str, described("The operation's id; op.undo reverses it.")]
    op: Annotated[str, described("The method that made it, e.g. note.move.")]
    channel: Annotated[str, described("Who asked: cli, mcp or editor.")]
    paths: Annotated[list[str], described(f"The files it wrote (at most {MAX_EVENT_PATHS}).")]
    paths_omitted: Annotated[int, described("Files it wrote beyond those listed.")] = 0
    proposal: Annotated[str | None, described("The proposal it applied, when a person applied an agent's proposal.")] = None


class OperationUndone(Event, kw_only=True, tag="operation.undone"):
    """An operation was reversed by op.undo (itself an operation, with its own id)."""

    op_id: Annotated[str, described("The id of the undo operation.")]
    undoes: Annotated[str, described("The id of the operation it reversed.")]
    channel: Annotated[str, described("Who asked: cli, mcp or editor.")]
    paths: Annotated[list[str], described(f"The files it wrote (at most {MAX_EVENT_PATHS}).")]
    paths_omitted: Annotated[int, described("Files it wrote beyond those listed.")] = 0


class ProposalCreated(Event, kw_only=True, tag="proposal.created"):
    """An agent's operation was held for a person (proposal.show has its diffs)."""

    id: Annotated[str, described("The proposal's id.")]
    op: Annotated[str, described("The method it would run.")]
    proposer: Annotated[str, described("Who proposed it, e.g. mcp:claude-code.")]
    targets: Annotated[list[str], described(f"The files it would write (at most {MAX_EVENT_PATHS}).")]
    targets_omitted: Annotated[int, described("Files beyond those listed.")] = 0


class ProposalDecided(Event, kw_only=True, tag="proposal.decided"):
    """A pending proposal left the pending state."""

    id: Annotated[str, described("The proposal's id.")]
    state: Annotated[ProposalState, described("applied, rejected, withdrawn or stale.")]
    decided_by: Annotated[str, described("Who decided, e.g. cli:vaultctl.")]
    applied_op: Annotated[str | None, described("The operation that applied it.")] = None
    targets: Annotated[list[str], described(f"The files it would write or wrote (at most {MAX_EVENT_PATHS}).")] = []


class IndexProgress(Event, kw_only=True, tag="index.progress"):
    """A build is under way (a few times a second at most, and once when every note is parsed); then,
    while the meaning model fills in behind the ready index, how far it has come (every few
    seconds at most, only when the count moved)."""

    parsed: Annotated[int, described("Notes read and parsed so far.")]
    total: Annotated[int | None, described("Notes the build has to parse; null while it is still listing the vault's files.")]
    reused: Annotated[int, described("Notes taken from the cache unchanged (not counted in total).")] = 0
    elapsed_s: Annotated[float, described("Seconds since the build started.")]
    rebuild: Annotated[bool, described("A vault.rebuild (every note re-parsed), not a start-up or vault.add build.")] = False
    meaning: Annotated[
        MeaningCoverage | None,
        described("Once the index is ready, how much the meaning model covers (sent as its vectors fill in); null before."),
    ] = None

    @classmethod
    def of(cls, progress: BuildProgress) -> IndexProgress:
        return cls(**msgspec.structs.asdict(progress))


class IndexReady(Event, kw_only=True, tag="index.ready"):
    """A build finished; reads answer from the new index."""

    notes: Annotated[int, described("Notes in the index.")]
    seconds: Annotated[float, described("How long the build took.")]
    rebuild: Annotated[bool, described("It was a vault.rebuild.")] = False


class VaultHealthChanged(Event, kw_only=True, tag="vault.health"):
    """The vault's state changed (indexing, ready, missing, locked, error)."""

    state: Annotated[VaultState, described("The state now.")]
    message: Annotated[str, described("Why, and what to do, when the state is not ready.")] = ""
    notes: Annotated[int, described("Notes in the index.")] = 0


class VaultRemoved(Event, kw_only=True, tag="vault.removed"):
    """The vault was unregistered: its last event; nothing more comes from it."""


class StateEnter(Event, kw_only=True, tag="state.enter"):
    """A bulk change began (a git checkout, a move rewriting many backlinks): hold re-queries until state.leave."""

    state: Annotated[str, described("The state's name: bulk.")] = "bulk"


class StateLeave(Event, kw_only=True, tag="state.leave"):
    """The bulk change is over: the vault had no note change for a moment."""

    state: Annotated[str, described("The state's name: bulk.")] = "bulk"
    changes: Annotated[int, described("Note changes in the bulk state.")]
    listed: Annotated[int, described(f"Of those, how many were sent as note events (at most {BULK_LISTED}); fewer: re-query the vault.")]


class FreshInstance(Event, kw_only=True, tag="fresh_instance"):
    """The vault's clock started again (its folder was lost and taken back): re-query the vault; events go on from this clock."""

    reason: Annotated[str, described("Why the clock restarted.")]


class WorkChanged(Event, kw_only=True, tag="work.changed"):
    """A work document started, made progress, finished or was cancelled."""

    id: Annotated[str, described("The work's id.")]
    state: Annotated[str, described("running, finished or cancelled.")]
    what: Annotated[str, described("What the work does.")]
    progress: Annotated[str, described("Its last progress line.")] = ""
    session: Annotated[str, described("The agent session doing it; empty for a person's.")] = ""


AnyEvent = (
    NoteCreated
    | NoteChanged
    | NoteRemoved
    | NoteRenamed
    | OperationApplied
    | OperationUndone
    | ProposalCreated
    | ProposalDecided
    | IndexProgress
    | IndexReady
    | VaultHealthChanged
    | VaultRemoved
    | StateEnter
    | StateLeave
    | FreshInstance
    | WorkChanged
)
EVENT_TYPES: tuple[type[Event], ...] = (
    NoteCreated,
    NoteChanged,
    NoteRemoved,
    NoteRenamed,
    OperationApplied,
    OperationUndone,
    ProposalCreated,
    ProposalDecided,
    IndexProgress,
    IndexReady,
    VaultHealthChanged,
    VaultRemoved,
    StateEnter,
    StateLeave,
    FreshInstance,
    WorkChanged,
)


def kind_of(event: Event) -> EventKind:
    return EventKind(str(type(event).__struct_config__.tag))


def event_paths(event: Event) -> tuple[str, ...]:
    """The vault-relative paths an event names (for path filters and privacy); () for vault-level events."""
    match event:
        case NoteRenamed(path=path, old_path=old):
            return (path, old)
        case NoteCreated(path=path) | NoteChanged(path=path) | NoteRemoved(path=path):
            return (path,)
        case OperationApplied(paths=paths) | OperationUndone(paths=paths):
            return tuple(paths)
        case ProposalCreated(targets=paths) | ProposalDecided(targets=paths):
            return tuple(paths)
    return ()
