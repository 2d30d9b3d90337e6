"""Handlers of wikify: suggest links in a note, propose them, and accept some of them (a person).

A proposal of links is applied whole by ``proposal.apply``; ``wikify.accept`` applies the links a
person chose of it through the same operation and the same approval check: the note must be the
one reviewed (its sha), and each chosen link writes the characters the proposal showed.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import anyio
import msgspec

from protocol.methods import wikify
from protocol.methods.common import Channel
from protocol.methods.proposals import FileDiff, ProposalState
from protocol.methods.receipts import Applied
from protocol.methods.wikify import (
    LinkEdit,
    WikifyAcceptParams,
    WikifyAcceptResult,
    WikifyLinkParams,
    WikifyProposeParams,
    WikifyProposeResult,
    WikifySuggestParams,
    WikifySuggestResult,
)
from vaultd.api.handlers import CallContext, handles
from vaultd.api.proposal_methods import _decided, _pending, _person_only, _store
from vaultd.errors import Conflict, InvalidParams, ValidationFailed
from vaultd.ops import Approval, created_event, operations, planning, refuse_volume_writes, who
from vaultd.ops.wikify_link import apply_links, propose_links, suggestions
from vaultd.txn.engine import read_current

if TYPE_CHECKING:
    from vaultd.runtime import VaultRuntime


async def _found(ctx: CallContext, runtime: VaultRuntime, target: str) -> tuple[str, str, list[tuple[wikify.Suggestion, int]]]:
    """(path, sha, suggestions), on the vault as it is now."""
    async with planning(runtime, ctx.channel) as op_ctx:
        path = await anyio.to_thread.run_sync(op_ctx.find, target)
        sha, found = await anyio.to_thread.run_sync(suggestions, op_ctx, path)
    return path, sha, found


@handles(wikify.WIKIFY_SUGGEST)
async def suggest(ctx: CallContext, params: WikifySuggestParams) -> WikifySuggestResult:
    """The first free mention of each other note in the note's prose, with the link for it.

    Raises:
        NotFound: NOT_FOUND, no such note the caller may see.
    """
    runtime = ctx.host.vault(params.vault)
    await runtime.wait_ready()
    path, sha, found = await _found(ctx, runtime, params.target)
    return WikifySuggestResult(path=path, sha=sha, suggestions=[s for s, _ in found])


@handles(wikify.WIKIFY_PROPOSE)
async def propose(ctx: CallContext, params: WikifyProposeParams) -> WikifyProposeResult:
    """Store the chosen suggestions as one proposal for a person, whoever asks: links a person
    accepts one by one are never written by the one who suggested them.

    Raises:
        InvalidParams: INVALID_PARAMS, a chosen number is not a suggestion's.
        PolicyRefused: POLICY, the note is refused to the caller (G05: an agent, a volume's entry).
    """
    runtime = ctx.host.vault(params.vault)
    await runtime.wait_ready()
    async with runtime.writer:
        async with planning(runtime, ctx.channel) as op_ctx:
            path = await anyio.to_thread.run_sync(op_ctx.find, params.target)
            if ctx.channel == Channel.MCP:
                refuse_volume_writes(runtime.entry, [path])
            sha, found = await anyio.to_thread.run_sync(suggestions, op_ctx, path)
            if params.choose is not None:
                missing = sorted(set(params.choose) - {s.number for s, _ in found})
                if missing:
                    raise InvalidParams(f"no suggestion numbered {missing[0]}; wikify.suggest lists {len(found)}")
                found = [(s, at) for s, at in found if s.number in set(params.choose)]
            if not found:
                return WikifyProposeResult(proposal=None, path=path, links=[])
            numbered = [msgspec.structs.replace(s, number=i) for i, (s, _) in enumerate(found, start=1)]
            link_params = WikifyLinkParams(
                vault=runtime.entry.id,
                path=path,
                sha=sha,
                links=[LinkEdit(start=at, text=s.text, link=s.link, line=s.line) for (s, at) in found],
                reason=params.reason,
            )
            detail = await anyio.to_thread.run_sync(propose_links, op_ctx, link_params, numbered, ctx)
    runtime.events.record(created_event(detail))
    return WikifyProposeResult(proposal=detail.id, path=path, links=numbered)


@handles(wikify.WIKIFY_ACCEPT)
async def accept(ctx: CallContext, params: WikifyAcceptParams) -> WikifyAcceptResult:
    """Apply the chosen links of a pending wikify proposal as the person who reviewed them.

    Raises:
        PolicyRefused: POLICY, the caller is an agent.
        Conflict: CONFLICT, the proposal is not pending, or the note changed since (stale).
        InvalidParams: INVALID_PARAMS, a number names no link of the proposal.
        ValidationFailed: VALIDATION, the proposal is not a wikify proposal.
    """
    _person_only(ctx, "accept links of")
    runtime = ctx.host.vault(params.vault)
    store = _store(runtime)
    detail = await anyio.to_thread.run_sync(store.get, params.id)
    _pending(detail)
    if detail.op != wikify.WIKIFY_LINK.name:
        raise ValidationFailed(f"proposal {detail.id} is a {detail.op}, not links suggested by wikify; apply or reject it whole")
    held = msgspec.convert({**detail.params, "vault": runtime.entry.id}, WikifyLinkParams)
    chosen = sorted(set(params.links))
    if chosen[-1] > len(held.links):
        raise InvalidParams(f"proposal {detail.id} has {len(held.links)} links; there is no link {chosen[-1]}")
    subset = msgspec.structs.replace(held, links=[held.links[n - 1] for n in chosen])
    # What the person approves: the reviewed note, with only these replacements.
    current = await anyio.to_thread.run_sync(read_current, runtime.root, held.path)
    if current is None or hashlib.sha256(current).hexdigest() != held.sha:
        expected_after = None
    else:
        expected_after = hashlib.sha256(apply_links(current.decode("utf-8"), subset.links).encode("utf-8")).hexdigest()
    reviewed = detail.diffs[0]
    approved = msgspec.structs.replace(
        detail,
        diffs=[FileDiff(path=reviewed.path, action=reviewed.action, before_sha=reviewed.before_sha, after_sha=expected_after, diff="")],
    )
    operation = operations()[wikify.WIKIFY_LINK.name]
    try:
        receipt = await operation.run(ctx, subset, Approval(approved))
    except Conflict as exc:  # the note changed since it was reviewed (StaleProposal is one)
        async with runtime.writer:
            now = await anyio.to_thread.run_sync(store.get, detail.id)
            if now.state is ProposalState.PENDING:
                await _decided(runtime, store, now, ProposalState.STALE, who(ctx), note=exc.message[:200])
        raise
    if not isinstance(receipt, Applied):
        raise Conflict(f"proposal {detail.id}'s links wrote nothing; the note may already hold them")
    note = f"accepted links {', '.join(map(str, chosen))} of {len(held.links)}"
    async with runtime.writer:
        await _decided(runtime, store, detail, ProposalState.APPLIED, who(ctx), applied_op=receipt.op_id, note=note)
    return WikifyAcceptResult(proposal=detail.id, path=held.path, accepted=chosen, op_id=receipt.op_id)
