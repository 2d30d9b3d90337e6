"""Subscriptions: what happens in a vault, pushed to the caller's connection as it happens.

``GUIDE`` below is the contract an editor or a UI builds on; the reference renders it with the
notification Structs of this module and the events of :mod:`protocol.methods.events`. A
notification is a JSON-RPC 2.0 message without an ``id``, sent by the daemon on the connection
that subscribed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Annotated

import msgspec

from protocol.limits import MAX_EVENT_FRAME_BYTES, RETAINED_EVENT_BYTES, describe
from protocol.methods.common import Params, Result, VaultId, described
from protocol.methods.events import BULK_LISTED, BULK_MIN_CHANGES, BULK_QUIET_MS, AnyEvent, EventKind
from protocol.methods.spec import Effect, Trait, spec
from protocol.methods.vaults import DenyPath

MAX_SUBSCRIPTIONS = 16  #: open subscriptions on one connection
RETAINED_EVENTS = 10_000  #: events a vault keeps for ``since`` (and at most RETAINED_EVENT_BYTES of them)
MAX_FRAME_EVENTS = 512  #: events in one ``subscription.events`` notification
MAX_SETTLE_MS = 10_000
#: distinct path globs over all the daemon's subscriptions (those with the same globs share them)
MAX_FILTER_GLOBS = 4096

ClockToken = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^[0-9a-f]{8}:[0-9]{1,15}$",
        description="A vault's clock as an event carries it, '<instance>:<sequence>'; sequences compare within one instance only.",
    ),
]


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
    vault: Annotated[str, described("A vault the subscription follows.")]
    clock: Annotated[str, described("Its clock now; events after it follow (the replayed ones first).")]
    fresh_instance: Annotated[
        bool,
        described(
            "since[vault] was given but cannot be resumed (another instance, or older than the retained events): re-query the vault."
        ),
    ] = False
    replay: Annotated[int, described("Events after since[vault] the daemon still had, sent before live ones (before filters).")] = 0


class SubscribeResult(Result):
    subscription: Annotated[int, described("The subscription's id on this connection; notifications carry it.")]
    vaults: Annotated[list[VaultClock], described("Each vault followed now, with its clock.")]
    retained: Annotated[int, described("How many events each vault keeps for since.")] = RETAINED_EVENTS


class UnsubscribeParams(Params, kw_only=True):
    subscription: Annotated[int, msgspec.Meta(ge=1, description="The id subscribe answered.")]


class UnsubscribeResult(Result):
    subscription: Annotated[int, described("The subscription ended.")]
    ended: Annotated[bool, described("Always true: no notification for it follows this reply.")] = True


SUBSCRIBE = spec(
    "subscribe",
    SubscribeParams,
    SubscribeResult,
    "Follow a vault's events on this connection (notes, operations, proposals, indexing, health) from now or from a clock.",
    Effect.READ,
    Trait.AGENT_STREAM,
)
UNSUBSCRIBE = spec(
    "unsubscribe",
    UnsubscribeParams,
    UnsubscribeResult,
    "End a subscription of this connection; nothing more is sent for it after this reply.",
    Effect.READ,
    Trait.AGENT_STREAM,
)
SPECS = (SUBSCRIBE, UNSUBSCRIBE)


# -- the notifications ---------------------------------------------------------------------------


class EventsParams(msgspec.Struct, kw_only=True):
    """The params of ``subscription.events``."""

    subscription: Annotated[int, described("The subscription they are for.")]
    events: Annotated[list[AnyEvent], described(f"One or more events, in clock order per vault (at most {MAX_FRAME_EVENTS}).")]


class DropReason(enum.StrEnum):
    LAGGED = "lagged"  #: the subscriber fell behind the events its vault retains
    NOT_READING = "not_reading"  #: the peer read nothing for send_timeout_s; the connection is closed too
    OVER_BUDGET = "over_budget"  #: the connection's queued replies and notifications are over its share
    VAULTS_REMOVED = "vaults_removed"  #: every vault it followed was unregistered


class DroppedParams(msgspec.Struct, kw_only=True):
    """The params of ``subscription.dropped``: the subscription's last notification."""

    subscription: Annotated[int, described("The subscription that ended.")]
    reason: Annotated[DropReason, described("lagged, not_reading, over_budget or vaults_removed.")]
    message: Annotated[str, described("What happened and what to do.")]
    clocks: Annotated[dict[str, str], described("Per vault, the clock of the last event sent: subscribe again with it as since.")] = {}


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
On the `mcp` channel (agents; the MCP shim relays note events as resource updates) no event
that names a path private to agents is sent, whatever the filters.

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
matches, and index and vault events name none and always pass). Every event is matched against
every distinct set of `paths`, so the daemon holds at most {MAX_FILTER_GLOBS:,} distinct globs over
all its subscriptions: subscriptions naming the same globs (in any order) share them and count
once, and a `subscribe` whose new globs would pass the bound is refused with `LIMIT`. `state.enter` and `state.leave`
come with any note kind; `fresh_instance` and `vault.removed` always come. `settle_ms` holds
events until the vault has been quiet that long, at most ten times as long.

**Indexing.** While a vault's index builds (the daemon starting, `vault.add`, `vault.rebuild`),
`index.progress` comes a few times a second with the notes parsed of the total, then
`index.ready`; `vault.health` comes whenever the vault's state or its message changes. While the
meaning model fills in behind the ready index, `index.progress` comes again, every two seconds at
most and only when the count moved, with `meaning` (passages covered of the total, rate, ETA).

**Bounds.** A subscriber never slows a write or the watcher: each vault keeps its retained events
once, and each subscription only a position in them. A subscription that falls behind them is
dropped with `subscription.dropped` (reason `lagged`): subscribe again with its clocks. A peer that
reads nothing for the daemon's `send_timeout_s` while events wait is sent `subscription.dropped`
(reason `not_reading`) and its connection is closed. Notifications count against the connection's
reply budget (`connection_reply_bytes`) like replies (reason `over_budget` when refused).
"""
