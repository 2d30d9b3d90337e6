"""Handlers of the proposal methods: agents list, show and withdraw; people apply and reject.

Every state change happens under the vault's writer lock, so a proposal being applied cannot be
rejected or withdrawn half way, and two people applying one proposal apply it once.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import anyio
import msgspec
import structlog

from protocol.methods import proposals
from protocol.methods.common import Channel
from protocol.methods.proposals import (
    ProposalDetail,
    ProposalListParams,
    ProposalListResult,
    ProposalRef,
    ProposalRejectParams,
    ProposalState,
    ProposalSummary,
)
from protocol.methods.receipts import Applied, NoDetail, WriteReceipt, receipt_type
from vaultd.api.handlers import CallContext, handles
from vaultd.errors import Conflict, NotFound, PolicyRefused, ValidationFailed
from vaultd.gate.store import ProposalStore, store_for, summary_of
from vaultd.ops import Approval, StaleProposal, decided_event, operations, who
from vaultd.policy.visibility import Visibility

if TYPE_CHECKING:
    from collections.abc import Callable

    from vaultd.runtime import VaultRuntime

log = structlog.get_logger("vaultd.gate")


def _store(runtime: VaultRuntime) -> ProposalStore:
    runtime.check_root()
    return store_for(runtime.root)


def _person_only(ctx: CallContext, action: str) -> None:
    """Agents propose, people decide: applying or rejecting a proposal is never an agent's.

    Raises:
        PolicyRefused: POLICY, the call came through the MCP channel.
    """
    if ctx.channel == Channel.MCP:
        raise PolicyRefused(f"only a person may {action} a proposal (the cli or an editor); agents propose, people decide")


def _pending(detail: ProposalDetail) -> None:
    """A decided proposal stays decided: applying or rejecting it twice does nothing.

    Raises:
        Conflict: CONFLICT, the proposal is applied, rejected, withdrawn, stale or expired already.
    """
    if detail.state is not ProposalState.PENDING:
        raise Conflict(f"proposal {detail.id} is {detail.state}, not pending; nothing was done")


def _decide(store: ProposalStore, detail: ProposalDetail, state: ProposalState, by: str, **extra: Any) -> ProposalDetail:
    decided = msgspec.structs.replace(detail, state=state, decided=time.time(), decided_by=by, **extra)
    store.replace(decided)
    log.info("proposal decided", proposal=detail.id, vault=detail.vault, state=str(state), by=by)
    return decided


async def _decided(
    runtime: VaultRuntime, store: ProposalStore, detail: ProposalDetail, state: ProposalState, by: str, **extra: Any
) -> ProposalDetail:
    """Decide (in a worker thread), then tell the vault's subscribers."""
    decided = await anyio.to_thread.run_sync(lambda: _decide(store, detail, state, by, **extra))
    runtime.events.record(decided_event(decided))
    return decided


def _seen_by(ctx: CallContext, runtime: VaultRuntime) -> Callable[[ProposalSummary], bool]:
    """Whether the caller may know of a proposal: not one that writes a private path, nor one whose
    summary names one (a sync conflict on a private note carries both versions in its diffs)."""
    view = Visibility.of(runtime.entry, ctx.channel)
    if not view.hides_anything:
        return lambda _p: True
    index = runtime.live.index if runtime.live is not None else None

    def seen(p: ProposalSummary) -> bool:
        written = [t.removeprefix(".trash/") for t in p.targets]
        return not any(view.hidden(t) for t in written) and not view.names_hidden_in(p.summary, index)

    return seen


@handles(proposals.PROPOSAL_LIST)
async def list_proposals(ctx: CallContext, params: ProposalListParams) -> ProposalListResult:
    runtime = ctx.host.vault(params.vault)
    kept, refused = await anyio.to_thread.run_sync(_store(runtime).entries)
    seen = _seen_by(ctx, runtime)
    kept = [p for p in kept if seen(p)]
    chosen = kept if params.all else [p for p in kept if p.state is params.state]
    pending = sum(1 for p in kept if p.state is ProposalState.PENDING)
    return ProposalListResult(proposals=chosen[: params.limit], pending=pending, refused=refused)


@handles(proposals.PROPOSAL_SHOW)
async def show(ctx: CallContext, params: ProposalRef) -> ProposalDetail:
    """One proposal, if the caller may see it (an agent never sees one on its private paths).

    Raises:
        NotFound: NOT_FOUND, no such proposal, or one the caller may not see.
    """
    runtime = ctx.host.vault(params.vault)
    detail = await anyio.to_thread.run_sync(_store(runtime).get, params.id)
    if not _seen_by(ctx, runtime)(detail):
        raise NotFound(f"no proposal {params.id!r} in vault {runtime.entry.id!r}")
    return detail


@handles(proposals.PROPOSAL_APPLY)
async def apply(ctx: CallContext, params: ProposalRef) -> WriteReceipt[NoDetail]:
    """Apply a proposal as the person who reviewed it: the same operation re-planned, and refused if
    it would write other bytes than it showed.

    Raises:
        ValidationFailed: VALIDATION, the proposal names an operation or arguments this vaultd does
            not accept.
    """
    _person_only(ctx, "apply")
    runtime = ctx.host.vault(params.vault)
    store = _store(runtime)
    detail = await anyio.to_thread.run_sync(store.get, params.id)
    _pending(detail)
    operation = operations().get(detail.op)
    if operation is None:
        raise ValidationFailed(f"proposal {detail.id} names {detail.op}, which this vaultd cannot apply")
    try:
        op_params = msgspec.convert({**detail.params, "vault": runtime.entry.id}, operation.spec.params)
    except msgspec.ValidationError as exc:
        raise ValidationFailed(f"proposal {detail.id} holds arguments this vaultd does not accept: {exc}") from exc
    try:
        receipt = await operation.run(ctx, op_params, Approval(detail))
    except StaleProposal as exc:
        async with runtime.writer:
            current = await anyio.to_thread.run_sync(store.get, detail.id)
            if current.state is ProposalState.PENDING:
                note = exc.message[: proposals.MAX_REASON_CHARS]
                await _decided(runtime, store, current, ProposalState.STALE, who(ctx), note=note)
        raise exc from None
    if isinstance(receipt, Applied):
        async with runtime.writer:
            await _decided(runtime, store, detail, ProposalState.APPLIED, who(ctx), applied_op=receipt.op_id)
    # The operation's own detail was in the proposal the person reviewed.
    data = msgspec.to_builtins(receipt)
    data["detail"] = {}
    result: WriteReceipt[NoDetail] = msgspec.convert(data, receipt_type(NoDetail))
    return result


@handles(proposals.PROPOSAL_REJECT)
async def reject(ctx: CallContext, params: ProposalRejectParams) -> ProposalSummary:
    _person_only(ctx, "reject")
    runtime = ctx.host.vault(params.vault)
    store = _store(runtime)
    async with runtime.writer:
        detail = await anyio.to_thread.run_sync(store.get, params.id)
        _pending(detail)
        decided = await _decided(runtime, store, detail, ProposalState.REJECTED, who(ctx), note=params.note)
    return summary_of(decided)


@handles(proposals.PROPOSAL_WITHDRAW)
async def withdraw(ctx: CallContext, params: ProposalRef) -> ProposalSummary:
    """An agent takes back its own proposal; anyone else's is for a person to reject.

    Raises:
        PolicyRefused: POLICY, the caller is not the agent session (or proposer) that made it.
    """
    runtime = ctx.host.vault(params.vault)
    store = _store(runtime)
    async with runtime.writer:
        detail = await anyio.to_thread.run_sync(store.get, params.id)
        mine = detail.session == ctx.session if detail.session is not None else detail.proposer == who(ctx)
        if ctx.channel != Channel.MCP or not mine:
            raise PolicyRefused(f"only the agent session that made proposal {detail.id} may withdraw it; a person rejects it instead")
        _pending(detail)
        decided = await _decided(runtime, store, detail, ProposalState.WITHDRAWN, who(ctx))
    return summary_of(decided)
