"""Subscriptions: what happens in a vault, pushed to the caller's connection as it happens.

``GUIDE`` below is the contract an editor or a UI builds on; the reference renders it with the
event and notification Structs of this module. A notification is a JSON-RPC 2.0 message without
an ``id``, sent by the daemon on the connection that subscribed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import msgspec

from protocol.limits import MAX_EVENT_FRAME_BYTES, RETAINED_EVENT_BYTES, describe
from protocol.methods.common import Params, Result, VaultId
from protocol.methods.proposals import ProposalState
from protocol.methods.spec import Effect, spec
from protocol.methods.vaults import DenyPath, VaultState

if TYPE_CHECKING:
    from protocol.methods.indexing import BuildProgress

MAX_SUBSCRIPTIONS = 16  #: open subscriptions on one connection
RETAINED_EVENTS = 10_000  #: events a vault keeps for ``since`` (and at most RETAINED_EVENT_BYTES of them)
BULK_MIN_CHANGES = 64  #: note changes found at once that open a bulk state
BULK_QUIET_MS = 250  #: a bulk state is left once the vault has had no note change this long
BULK_LISTED = 5_000  #: note events listed in one bulk state; further ones are only counted
MAX_FRAME_EVENTS = 512  #: events in one ``subscription.events`` notification
MAX_SETTLE_MS = 10_000
MAX_EVENT_PATHS = 32  #: paths an operation or proposal event lists; the rest are counted

ClockToken = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^[0-9a-f]{8}:[0-9]{1,15}$",
        description="A vault's clock as an event carries it, '<instance>:<sequence>'; sequences compare within one instance only.",
    ),
]


def _doc(text: str) -> msgspec.Meta:
    return msgspec.Meta(description=text)


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


NOTE_KINDS = frozenset({EventKind.NOTE_CREATED, EventKind.NOTE_CHANGED, EventKind.NOTE_REMOVED, EventKind.NOTE_RENAMED})
#: Delivered whatever ``kinds`` says: they change what the client's clock means.
ALWAYS_DELIVERED = frozenset({EventKind.FRESH_INSTANCE, EventKind.VAULT_REMOVED})


class Event(msgspec.Struct, kw_only=True, tag_field="kind"):
    """Fields every event carries (the daemon fills them in when the vault records the event)."""

    vault: Annotated[str, _doc("The vault it happened in.")] = ""
    clock: Annotated[str, _doc("The vault's clock at this event: pass the last one seen as since[vault] to resume after it.")] = ""
    at: Annotated[float, _doc("When the daemon recorded it (Unix time, seconds).")] = 0.0


class NoteCreated(Event, kw_only=True, tag="note.created"):
    """A note appeared (created by anyone: an editor, git, an operation)."""

    path: Annotated[str, _doc("The note's vault-relative path.")]


class NoteChanged(Event, kw_only=True, tag="note.changed"):
    """A note's bytes changed (a touch that leaves them as they were is not reported)."""

    path: Annotated[str, _doc("The note's vault-relative path.")]


class NoteRemoved(Event, kw_only=True, tag="note.removed"):
    """A note is gone (deleted, moved out of the vault, or no longer a note the index can hold)."""

    path: Annotated[str, _doc("The note's vault-relative path, as it was.")]


class NoteRenamed(Event, kw_only=True, tag="note.renamed"):
    """A note moved: identical bytes gone from one path and new at another, in the same moment."""

    path: Annotated[str, _doc("The note's path now.")]
    old_path: Annotated[str, _doc("Its path before.")]


class OperationApplied(Event, kw_only=True, tag="operation.applied"):
    """vaultd applied an operation (after the note events of the files it wrote)."""

    op_id: Annotated[str, _doc("The operation's id; op.undo reverses it.")]
    op: Annotated[str, _doc("The method that made it, e.g. note.move.")]
    channel: Annotated[str, _doc("Who asked: cli, mcp or editor.")]
    paths: Annotated[list[str], _doc(f"The files it wrote (at most {MAX_EVENT_PATHS}).")]
    paths_omitted: Annotated[int, _doc("Files it wrote beyond those listed.")] = 0
    proposal: Annotated[str | None, _doc("The proposal it applied, when a person applied an agent's proposal.")] = None


class OperationUndone(Event, kw_only=True, tag="operation.undone"):
    """An operation was reversed by op.undo (itself an operation, with its own id)."""

    op_id: Annotated[str, _doc("The id of the undo operation.")]
    undoes: Annotated[str, _doc("The id of the operation it reversed.")]
    channel: Annotated[str, _doc("Who asked: cli, mcp or editor.")]
    paths: Annotated[list[str], _doc(f"The files it wrote (at most {MAX_EVENT_PATHS}).")]
    paths_omitted: Annotated[int, _doc("Files it wrote beyond those listed.")] = 0


class ProposalCreated(Event, kw_only=True, tag="proposal.created"):
    """An agent's operation was held for a person (proposal.show has its diffs)."""

    id: Annotated[str, _doc("The proposal's id.")]
    op: Annotated[str, _doc("The method it would run.")]
    proposer: Annotated[str, _doc("Who proposed it, e.g. mcp:claude-code.")]
    targets: Annotated[list[str], _doc(f"The files it would write (at most {MAX_EVENT_PATHS}).")]
    targets_omitted: Annotated[int, _doc("Files beyond those listed.")] = 0


class ProposalDecided(Event, kw_only=True, tag="proposal.decided"):
    """A pending proposal left the pending state."""

    id: Annotated[str, _doc("The proposal's id.")]
    state: Annotated[ProposalState, _doc("applied, rejected, withdrawn or stale.")]
    decided_by: Annotated[str, _doc("Who decided, e.g. cli:vaultctl.")]
    applied_op: Annotated[str | None, _doc("The operation that applied it.")] = None
    targets: Annotated[list[str], _doc(f"The files it would write or wrote (at most {MAX_EVENT_PATHS}).")] = []


class IndexProgress(Event, kw_only=True, tag="index.progress"):
    """A build is under way (a few times a second at most, and once when every note is parsed)."""

    parsed: Annotated[int, _doc("Notes read and parsed so far.")]
    total: Annotated[int | None, _doc("Notes the build has to parse; null while it is still listing the vault's files.")]
    reused: Annotated[int, _doc("Notes taken from the cache unchanged (not counted in total).")] = 0
    elapsed_s: Annotated[float, _doc("Seconds since the build started.")]
    rebuild: Annotated[bool, _doc("A vault.rebuild (every note re-parsed), not a start-up or vault.add build.")] = False

    @classmethod
    def of(cls, progress: BuildProgress) -> IndexProgress:
        return cls(**msgspec.structs.asdict(progress))


class IndexReady(Event, kw_only=True, tag="index.ready"):
    """A build finished; reads answer from the new index."""

    notes: Annotated[int, _doc("Notes in the index.")]
    seconds: Annotated[float, _doc("How long the build took.")]
    rebuild: Annotated[bool, _doc("It was a vault.rebuild.")] = False


class VaultHealthChanged(Event, kw_only=True, tag="vault.health"):
    """The vault's state changed (indexing, ready, missing, locked, error)."""

    state: Annotated[VaultState, _doc("The state now.")]
    message: Annotated[str, _doc("Why, and what to do, when the state is not ready.")] = ""
    notes: Annotated[int, _doc("Notes in the index.")] = 0


class VaultRemoved(Event, kw_only=True, tag="vault.removed"):
    """The vault was unregistered: its last event; nothing more comes from it."""


class StateEnter(Event, kw_only=True, tag="state.enter"):
    """A bulk change began (a git checkout, a move rewriting many backlinks): hold re-queries until state.leave."""

    state: Annotated[str, _doc("The state's name: bulk.")] = "bulk"


class StateLeave(Event, kw_only=True, tag="state.leave"):
    """The bulk change is over: the vault had no note change for a moment."""

    state: Annotated[str, _doc("The state's name: bulk.")] = "bulk"
    changes: Annotated[int, _doc("Note changes in the bulk state.")]
    listed: Annotated[int, _doc(f"Of those, how many were sent as note events (at most {BULK_LISTED}); fewer: re-query the vault.")]


class FreshInstance(Event, kw_only=True, tag="fresh_instance"):
    """The vault's clock started again (its folder was lost and taken back): re-query the vault; events go on from this clock."""

    reason: Annotated[str, _doc("Why the clock restarted.")]


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


# -- the methods ---------------------------------------------------------------------------------


class SubscribeParams(Params, kw_only=True):
    vaults: Annotated[
        Annotated[list[VaultId], msgspec.Meta(min_length=1, max_length=64)] | None,
        msgspec.Meta(description="The vaults to follow; omitted: every vault, including vaults added while subscribed."),
    ] = None
    kinds: Annotated[
        Annotated[list[EventKind], msgspec.Meta(max_length=len(EventKind))] | None,
        msgspec.Meta(description="The kinds of event to send; omitted: every kind."),
    ] = None
    paths: Annotated[
        list[DenyPath],
        msgspec.Meta(
            max_length=64,
            description="Vault-relative globs: only events naming a matching path (or none, like index and vault events); empty: all.",
        ),
    ] = []
    since: Annotated[
        dict[VaultId, ClockToken],
        msgspec.Meta(
            max_length=64, description="Per vault, the last clock the client saw: the events after it are sent first (or fresh_instance)."
        ),
    ] = {}
    settle_ms: Annotated[
        int,
        msgspec.Meta(
            ge=0, le=MAX_SETTLE_MS, description="Hold events until the vault has been quiet this long (at most ten times as long)."
        ),
    ] = 0


class VaultClock(msgspec.Struct, kw_only=True):
    vault: Annotated[str, _doc("A vault the subscription follows.")]
    clock: Annotated[str, _doc("Its clock now; events after it follow (the replayed ones first).")]
    fresh_instance: Annotated[
        bool,
        _doc("since[vault] was given but cannot be resumed (another instance, or older than the retained events): re-query the vault."),
    ] = False
    replay: Annotated[int, _doc("Events after since[vault] the daemon still had, sent before live ones (before filters).")] = 0


class SubscribeResult(Result):
    subscription: Annotated[int, _doc("The subscription's id on this connection; notifications carry it.")]
    vaults: Annotated[list[VaultClock], _doc("Each vault followed now, with its clock.")]
    retained: Annotated[int, _doc("How many events each vault keeps for since.")] = RETAINED_EVENTS


class UnsubscribeParams(Params, kw_only=True):
    subscription: Annotated[int, msgspec.Meta(ge=1, description="The id subscribe answered.")]


class UnsubscribeResult(Result):
    subscription: Annotated[int, _doc("The subscription ended.")]
    ended: Annotated[bool, _doc("Always true: no notification for it follows this reply.")] = True


SUBSCRIBE = spec(
    "subscribe",
    SubscribeParams,
    SubscribeResult,
    "Follow a vault's events on this connection (notes, operations, proposals, indexing, health) from now or from a clock.",
    Effect.READ,
)
UNSUBSCRIBE = spec(
    "unsubscribe",
    UnsubscribeParams,
    UnsubscribeResult,
    "End a subscription of this connection; nothing more is sent for it after this reply.",
    Effect.READ,
)
SPECS = (SUBSCRIBE, UNSUBSCRIBE)


# -- the notifications ---------------------------------------------------------------------------


class EventsParams(msgspec.Struct, kw_only=True):
    """The params of ``subscription.events``."""

    subscription: Annotated[int, _doc("The subscription they are for.")]
    events: Annotated[list[AnyEvent], _doc(f"One or more events, in clock order per vault (at most {MAX_FRAME_EVENTS}).")]


class DropReason(enum.StrEnum):
    LAGGED = "lagged"  #: the subscriber fell behind the events its vault retains
    NOT_READING = "not_reading"  #: the peer read nothing for send_timeout_s; the connection is closed too
    OVER_BUDGET = "over_budget"  #: the connection's queued replies and notifications are over its share
    VAULTS_REMOVED = "vaults_removed"  #: every vault it followed was unregistered


class DroppedParams(msgspec.Struct, kw_only=True):
    """The params of ``subscription.dropped``: the subscription's last notification."""

    subscription: Annotated[int, _doc("The subscription that ended.")]
    reason: Annotated[DropReason, _doc("lagged, not_reading, over_budget or vaults_removed.")]
    message: Annotated[str, _doc("What happened and what to do.")]
    clocks: Annotated[dict[str, str], _doc("Per vault, the clock of the last event sent: subscribe again with it as since.")] = {}


@dataclass(frozen=True, slots=True)
class NotificationSpec:
    """A notification the daemon sends: its method name, params Struct and what it means."""

    name: str
    params: type[msgspec.Struct]
    summary: str


EVENTS = NotificationSpec(
    "subscription.events",
    EventsParams,
    "Events of a subscription: every event once, in clock order per vault, never before the subscribe reply.",
)
DROPPED = NotificationSpec(
    "subscription.dropped",
    DroppedParams,
    "A subscription ended by the daemon (not by unsubscribe): nothing more comes for it.",
)
NOTIFICATIONS = (EVENTS, DROPPED)

GUIDE = f"""\
Call `subscribe` after `hello`; the reply names the subscription and each vault's clock, and
notifications follow on the same connection, never before that reply. A connection holds at most
{MAX_SUBSCRIPTIONS} subscriptions; `unsubscribe` ends one, and nothing is sent for it after its reply.
The `mcp` channel cannot subscribe (notifications do not fit MCP tool calls).

**Clocks.** Each vault counts its events: an event's `clock` is `<instance>:<sequence>`, the
sequence one more than the vault's previous event (a subscription's filters leave gaps). Compare
sequences only within one instance. The instance is new whenever the daemon starts, the vault is
added, or its folder is taken back after it was lost; nothing else restarts it. Every event arrives
once, in clock order for its vault.

**Resuming.** Keep the last clock of each vault and pass them as `since` when you subscribe again.
The events after each are sent first, then live ones. When a clock cannot be resumed (the daemon
restarted, the vault was re-added, or the clock is older than the last {RETAINED_EVENTS:,} events,
at most {describe(RETAINED_EVENT_BYTES)} of them, that the vault retains), that vault's entry in
the reply has `fresh_instance: true` and nothing is replayed: re-query the vault (`note.list`,
`note.read`, ...) and follow the live events. A `fresh_instance` event in the stream means the same
for a vault whose clock restarted while you were subscribed.

**Notes.** Note events are about the notes the index holds (`.md` files outside `.vaultd`, `.git`,
`.obsidian` and `.trash`), whoever changed them: an editor, git, or vaultd's own operations (which
are then followed by `operation.applied` or `operation.undone`). A note that disappears from one
path while a note with identical bytes appears at another, in the same moment, is one
`note.renamed` (an editor's rename, `git mv`, `note.move` of a note that does not link to
itself). A change that leaves a note's bytes as they were is not reported.

**Bulk changes.** When {BULK_MIN_CHANGES} or more note changes are found at once (a git checkout, a
move that rewrites many backlinks), the vault records `state.enter`, the note events, and
`state.leave` once no note change has come, or been read, for {BULK_QUIET_MS} ms (a checkout that
pauses longer than that is two bulk states). At most {BULK_LISTED:,} note
events are listed in one bulk state; `state.leave` counts them all, and when `listed` is less than
`changes`, re-query the vault instead of applying the events. Events travel up to
{MAX_FRAME_EVENTS} to a notification (about {describe(MAX_EVENT_FRAME_BYTES)}), so a checkout of
thousands of files is a handful of notifications.

**Filters.** `vaults` (omitted: every vault, those added later too, followed from their first
event), `kinds` (omitted: every kind), `paths` (globs matched like `deny_paths`: case-insensitive,
a glob matching a folder covers what is below it; an event passes when any path it names
matches, and index and vault events name none and always pass). `state.enter` and `state.leave`
come with any note kind; `fresh_instance` and `vault.removed` always come. `settle_ms` holds
events until the vault has been quiet that long, at most ten times as long.

**Indexing.** While a vault's index builds (the daemon starting, `vault.add`, `vault.rebuild`),
`index.progress` comes a few times a second with the notes parsed of the total, then
`index.ready`; `vault.health` comes whenever the vault's state or its message changes.

**Bounds.** A subscriber never slows a write or the watcher: each vault keeps its retained events
once, and each subscription only a position in them. A subscription that falls behind them is
dropped with `subscription.dropped` (reason `lagged`): subscribe again with its clocks. A peer that
reads nothing for the daemon's `send_timeout_s` while events wait is sent `subscription.dropped`
(reason `not_reading`) and its connection is closed. Notifications count against the connection's
reply budget (`connection_reply_bytes`) like replies (reason `over_budget` when refused).
"""
