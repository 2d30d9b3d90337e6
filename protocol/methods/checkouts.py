"""Checkouts: a copy of some notes in a scratch folder vaultd owns, outside the vault, for an agent to
edit with its own file tools, returned as one proposal a person applies.

``checkout.make`` copies the notes named (or the best of a search and their link neighbours) into
the scratch folder and records the bytes of each as its base. ``checkout.return`` freezes the
edited copies and merges each three ways (base: the bytes checked out; ours: the note as it is now;
theirs: the copy): what a person wrote meanwhile is kept, and where both changed the same lines
the person's text stays and the overlap is shown in the proposal, never overwritten. Only a
person's channel applies it.
"""

from __future__ import annotations

import enum
from typing import Annotated

import msgspec

from protocol.methods.common import OptionalVault, Params, Reason, Result
from protocol.methods.reads import Target
from protocol.methods.receipts import NoDetail, WriteReceipt, receipt_type
from protocol.methods.spec import Effect, MethodSpec, Trait, spec
from protocol.methods.writes import WriteParams

MAX_CHECKOUT_NOTES = 60  #: notes in one checkout
MAX_CHECKOUT_BYTES = 4 * 1024 * 1024  #: the notes' bytes in one checkout, and the copies' when returned
MAX_OPEN_CHECKOUTS = 20  #: open (not returned, not cancelled) checkouts per vault
MAX_KEPT_CHECKOUTS = 200  #: records kept per vault; past it the oldest closed ones go (never one whose proposal waits)
DEFAULT_CANDIDATES = 30  #: notes a checkout made from a search takes when no limit is given
MAX_CONFLICT_CHARS = 2000  #: of each side of an overlap shown in a return

CheckoutId = Annotated[str, msgspec.Meta(pattern=r"^c[0-9]{14}-[0-9a-f]{8}$", description="A checkout id.")]


class CheckoutState(enum.StrEnum):
    OPEN = "open"  #: its copies may be edited
    RETURNED = "returned"  #: its copies are frozen; the proposal (if any edit) waits for a person
    CANCELLED = "cancelled"  #: dropped; nothing was proposed


class CheckoutMakeParams(Params, kw_only=True):
    vault: OptionalVault = None
    notes: Annotated[
        list[Target],
        msgspec.Meta(max_length=MAX_CHECKOUT_NOTES, description="Notes to copy (paths, names or aliases)."),
    ] = []
    query: (
        Annotated[
            str,
            msgspec.Meta(
                min_length=1,
                max_length=500,
                description="Also copy this search's best notes and their link neighbours.",
            ),
        ]
        | None
    ) = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_CHECKOUT_NOTES, description="Most notes in all.")] = DEFAULT_CANDIDATES
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=120, description="A label.")] | None = None


class CheckoutNote(msgspec.Struct, kw_only=True):
    path: Annotated[str, msgspec.Meta(description="The note's vault path.")]
    copy: Annotated[str, msgspec.Meta(description="The copy's absolute path: edit it with your own file tools.")]
    base_sha: Annotated[str, msgspec.Meta(description="The sha256 of the note when it was checked out.")]
    edited: Annotated[bool, msgspec.Meta(description="The copy differs from the note as checked out.")] = False
    reached: Annotated[str | None, msgspec.Meta(description="How a candidate was found: search, or a link from another.")] = None


class CheckoutInfo(Result):
    id: CheckoutId
    vault: str
    name: str
    state: CheckoutState
    created: Annotated[float, msgspec.Meta(description="When it was made (Unix time).")]
    folder: Annotated[str, msgspec.Meta(description="The scratch folder holding the copies, outside the vault.")]
    notes: list[CheckoutNote]
    proposal: Annotated[str | None, msgspec.Meta(description="The proposal its return made.")] = None


class CheckoutSummary(msgspec.Struct, kw_only=True):
    id: str
    name: str
    state: CheckoutState
    created: float
    notes: int
    folder: Annotated[str, msgspec.Meta(description="The scratch folder holding the copies.")] = ""
    proposal: str | None = None


class CheckoutRef(Params, kw_only=True):
    vault: OptionalVault = None
    id: CheckoutId


class CheckoutReturnParams(CheckoutRef, kw_only=True):
    reason: Annotated[Reason | None, msgspec.Meta(description="Why, in one line, for the person who reviews the proposal.")] = None


class CheckoutListParams(Params, kw_only=True):
    vault: OptionalVault = None
    all: Annotated[bool, msgspec.Meta(description="Returned and cancelled ones too; omitted: open ones.")] = False


class CheckoutListResult(Result):
    checkouts: Annotated[list[CheckoutSummary], msgspec.Meta(description="Newest first.")]
    open: Annotated[int, msgspec.Meta(description="Open checkouts in the vault.")]


class Overlap(msgspec.Struct, kw_only=True):
    path: str
    line: Annotated[int, msgspec.Meta(description="The 1-based line of the note, as it is now, where the overlap starts.")]
    ours: Annotated[str, msgspec.Meta(description="The person's text there, which is kept.")]
    theirs: Annotated[str, msgspec.Meta(description="The copy's text there, which is not written.")]


class CheckoutReturnResult(Result):
    id: str
    proposal: Annotated[str | None, msgspec.Meta(description="The proposal a person applies; none when no copy was edited.")] = None
    returned: Annotated[list[str], msgspec.Meta(description="Notes whose edits the proposal carries.")] = []
    unchanged: Annotated[list[str], msgspec.Meta(description="Notes whose copy was not edited.")] = []
    skipped: Annotated[list[str], msgspec.Meta(description="Notes gone from the vault since: their edits are not proposed.")] = []
    overlaps: Annotated[
        list[Overlap], msgspec.Meta(description="Lines both the person and the copy changed: the person's text is kept.")
    ] = []


class CheckoutMergeParams(WriteParams, kw_only=True):
    """What a checkout's proposal holds: the returned checkout whose frozen copies it merges."""

    id: CheckoutId


CHECKOUT_MAKE = spec(
    "checkout.make",
    CheckoutMakeParams,
    CheckoutInfo,
    "Copy notes to a scratch folder to edit with your own tools; returning the checkout proposes the edits.",
    Effect.WRITE,
    Trait.MCP,
)
CHECKOUT_LIST = spec(
    "checkout.list",
    CheckoutListParams,
    CheckoutListResult,
    "The vault's checkouts and their folders.",
    Effect.READ,
    Trait.MCP,
)
CHECKOUT_SHOW = spec(
    "checkout.show",
    CheckoutRef,
    CheckoutInfo,
    "One checkout: its folder, copies and which were edited.",
    Effect.READ,
    # Not an MCP tool: checkout.make answers the copies' paths and checkout.list each folder, and
    # every tool an agent's host lists costs its context.
)
CHECKOUT_RETURN = spec(
    "checkout.return",
    CheckoutReturnParams,
    CheckoutReturnResult,
    "Return a checkout: its edits become one proposal for your user.",
    Effect.WRITE,
    Trait.MCP,
)
CHECKOUT_CANCEL = spec(
    "checkout.cancel",
    CheckoutRef,
    CheckoutSummary,
    "Cancel an open checkout; its copies are discarded.",
    Effect.IDEMPOTENT_WRITE,
    Trait.MCP,
)
#: Not a method: the operation a returned checkout's proposal holds, applied only through
#: ``proposal.apply`` by a person. Declared as a spec so that its operation is typed and catalogued
#: like every other; it is in no table a caller reaches.
CHECKOUT_MERGE: MethodSpec[CheckoutMergeParams, WriteReceipt[NoDetail]] = MethodSpec(
    "checkout.merge",
    CheckoutMergeParams,
    receipt_type(NoDetail),
    "Write a returned checkout's edits into its notes, merged with what a person changed meanwhile.",
    Effect.WRITE,
)
SPECS = (CHECKOUT_MAKE, CHECKOUT_LIST, CHECKOUT_SHOW, CHECKOUT_RETURN, CHECKOUT_CANCEL)
