"""Proposals: an agent's operation held for a person, who applies or rejects it.

A vault's agent policy (:mod:`protocol.methods.gate`) makes some operations ``propose`` for the
``mcp`` channel. Such an operation is planned and validated as usual, then stored instead of
applied, and its receipt has outcome ``proposed`` with the proposal's id. Agents list, show and
withdraw their proposals; only a person's channel (``cli``, ``editor``) applies or rejects one.
Applying re-plans the operation on the files as they are now: if any file it read has changed,
the proposal is ``stale`` and nothing is written; an old plan is never forced.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any

import msgspec

from protocol.errors import Issue
from protocol.methods.common import MAX_REASON_CHARS as MAX_REASON_CHARS
from protocol.methods.common import OptionalVault, Params, Reason, Result
from protocol.methods.receipts import NoDetail, receipt_type
from protocol.methods.spec import Effect, Trait, spec

MAX_PROPOSALS = 1000  #: kept per vault, decided ones first to go; the oldest pending then expire
MAX_PROPOSAL_BYTES = 8 * 1024 * 1024  #: one stored proposal: its params, hashes and diffs
MAX_DIFF_BYTES = 256 * 1024  #: one file's diff in a proposal; a longer one is cut and says so

ProposalId = Annotated[
    str,
    msgspec.Meta(pattern=r"^p[0-9]{14}-[0-9a-f]{8}$", description="A proposal id, as a proposed receipt or proposal.list gives it."),
]


class ProposalState(enum.StrEnum):
    PENDING = "pending"  #: waits for a person
    APPLIED = "applied"  #: a person applied it; ``applied_op`` undoes it
    REJECTED = "rejected"  #: a person rejected it, with a note
    WITHDRAWN = "withdrawn"  #: the agent that proposed it took it back
    STALE = "stale"  #: a file it read changed before it was applied; propose again
    EXPIRED = "expired"  #: dropped to keep the vault's proposals bounded


class FileDiff(msgspec.Struct, kw_only=True):
    path: Annotated[str, msgspec.Meta(description="The vault-relative path of a file the proposal writes.")]
    action: Annotated[str, msgspec.Meta(description="create, modify or delete.")]
    before_sha: Annotated[str | None, msgspec.Meta(description="The sha256 the file had when proposed; applying requires it still.")]
    after_sha: Annotated[
        str | None,
        msgspec.Meta(description="The sha256 it would have: applying writes exactly these bytes, or nothing (stale)."),
    ]
    diff: Annotated[str, msgspec.Meta(description="A unified diff; empty for a file that is not text.")]
    truncated: Annotated[bool, msgspec.Meta(description=f"The diff was cut at {MAX_DIFF_BYTES} bytes.")] = False


class ProposalSummary(msgspec.Struct, kw_only=True):
    id: Annotated[str, msgspec.Meta(description="The proposal's id.")]
    vault: Annotated[str, msgspec.Meta(description="The vault it would change.")]
    op: Annotated[str, msgspec.Meta(description="The method it would run, e.g. note.delete.")]
    summary: Annotated[str, msgspec.Meta(description="What it does, in a line.")]
    targets: Annotated[list[str], msgspec.Meta(description="Every file it writes.")]
    state: Annotated[ProposalState, msgspec.Meta(description="pending, applied, rejected, withdrawn, stale or expired.")]
    proposer: Annotated[str, msgspec.Meta(description="Who proposed it: the channel and client, e.g. mcp:claude-code.")]
    session: Annotated[str | None, msgspec.Meta(description="The agent session that proposed it.")] = None
    reason: Annotated[str | None, msgspec.Meta(description="The proposer's one-line reason.")] = None
    created: Annotated[float, msgspec.Meta(description="When it was proposed (Unix time).")]
    decided: Annotated[float | None, msgspec.Meta(description="When its state last changed from pending (Unix time).")] = None
    decided_by: Annotated[str | None, msgspec.Meta(description="Who applied, rejected or withdrew it.")] = None
    note: Annotated[str | None, msgspec.Meta(description="The note given with a rejection, or why it went stale.")] = None
    applied_op: Annotated[str | None, msgspec.Meta(description="The operation that applied it; pass to op.undo.")] = None


class ProposalDetail(ProposalSummary, kw_only=True):
    diffs: Annotated[list[FileDiff], msgspec.Meta(description="What it changes, file by file.")]
    warnings: Annotated[list[Issue], msgspec.Meta(description="What validation found when it was proposed (nothing blocking).")] = []
    params: Annotated[dict[str, Any], msgspec.Meta(description="The operation's arguments, as the agent gave them.")]
    day: (
        Annotated[
            str,
            msgspec.Meta(
                pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
                description="The date its date stamps (created, updated) record, as its diffs show them: applying it "
                "another day stamps this date, so the note gets the bytes reviewed.",
            ),
        ]
        | None
    ) = None


class RefusedProposal(msgspec.Struct, kw_only=True):
    name: Annotated[str, msgspec.Meta(description="The file under .vaultd/proposals/.")]
    reason: Annotated[str, msgspec.Meta(description="Why it is not used: never applied, never deleted.")]


class ProposalListParams(Params, kw_only=True):
    vault: OptionalVault = None
    state: Annotated[ProposalState | None, msgspec.Meta(description="Only this state; omitted: pending ones.")] = ProposalState.PENDING
    all: Annotated[bool, msgspec.Meta(description="Every kept proposal, whatever its state (overrides state).")] = False
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_PROPOSALS, description="At most this many, newest first.")] = 50


class ProposalListResult(Result):
    proposals: Annotated[list[ProposalSummary], msgspec.Meta(description="Newest first.")]
    pending: Annotated[int, msgspec.Meta(description="How many wait for a person, in all.")]
    refused: Annotated[
        list[RefusedProposal], msgspec.Meta(description="Proposal files that failed their seal or did not parse; never used.")
    ] = []


class ProposalRef(Params, kw_only=True):
    vault: OptionalVault = None
    id: ProposalId


class ProposalRejectParams(ProposalRef, kw_only=True):
    note: Annotated[Reason, msgspec.Meta(description="Why, for the agent and the log (one line).")]


PROPOSAL_LIST = spec(
    "proposal.list",
    ProposalListParams,
    ProposalListResult,
    "Agent operations waiting for a person to decide (proposals), or decided ones.",
    Effect.READ,
    Trait.MCP,
)
PROPOSAL_SHOW = spec(
    "proposal.show",
    ProposalRef,
    ProposalDetail,
    "One proposal with its state and a unified diff per file.",
    Effect.READ,
    Trait.MCP,
)
PROPOSAL_APPLY = spec(
    "proposal.apply",
    ProposalRef,
    receipt_type(NoDetail),
    "Apply a pending proposal (a person only): re-planned on the files as they are; stale if any changed since.",
    Effect.WRITE,
)
PROPOSAL_REJECT = spec(
    "proposal.reject",
    ProposalRejectParams,
    ProposalSummary,
    "Reject a pending proposal with a note (a person only). Nothing is written to the vault's notes.",
    Effect.IDEMPOTENT_WRITE,
)
PROPOSAL_WITHDRAW = spec(
    "proposal.withdraw",
    ProposalRef,
    ProposalSummary,
    "Withdraw a pending proposal you made (the agent session that proposed it only).",
    Effect.IDEMPOTENT_WRITE,
    Trait.MCP,
)
SPECS = (PROPOSAL_LIST, PROPOSAL_SHOW, PROPOSAL_APPLY, PROPOSAL_REJECT, PROPOSAL_WITHDRAW)
