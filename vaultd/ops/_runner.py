"""Runs one write operation: barrier -> plan -> validate -> (preview) -> apply -> index -> log -> receipt.

Planning happens under the vault's writer lock, after the freshness barrier, so operations from
every client queue and each plans on the state the previous one left and on every change made on
disk before it. Reads never take the lock. Planning and validation run in a worker thread with the
index held still (no watcher refresh applies meanwhile), so the event loop keeps serving reads.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio
import msgspec
import structlog

from protocol.errors import Issue, Severity
from protocol.methods.common import Channel
from protocol.methods.gate import Gate
from protocol.methods.receipts import (
    Applied,
    DryRun,
    LogReceipt,
    NoDetail,
    Preview,
    Unchanged,
    WriteReceipt,
)
from protocol.methods.writes import EditParams, LogEvent, LogType, TwoStepParams, WriteParams
from vaultd import faults
from vaultd.errors import InvalidParams, StalePreview, ValidationFailed, VaultError
from vaultd.ops import _agent_gate as agent_gate
from vaultd.ops._announce import receipt_event
from vaultd.ops._canon import fingerprinted
from vaultd.ops._context import OpContext
from vaultd.ops._receipts import receipt_of
from vaultd.ops._validate import check_policy, created_path_issues, refuse_unsafe_path, validate
from vaultd.policy import pii_findings, project_issue, secret_issues
from vaultd.sessions.work import work_for
from vaultd.txn import journal, opids, prune
from vaultd.txn.engine import Part, RollbackFailed, apply_plan, apply_together, check_bounds
from vaultd.txn.plan import Plan
from vaultd.vault import oplog

if TYPE_CHECKING:
    from pathlib import Path

    from protocol.methods.proposals import ProposalDetail
    from protocol.methods.vaults import VaultEntry
    from vaultd.runtime import VaultRuntime

log = structlog.get_logger("vaultd.ops")

P = TypeVar("P", bound=WriteParams)
D = TypeVar("D")
Planner = Callable[[OpContext, Any], Plan]


class VaultFinder(Protocol):
    def vault(self, vault_id: str | None) -> VaultRuntime: ...


class WriteCall(agent_gate.Caller, Protocol):
    """What a write needs of the call that asks for it (who calls, as the gate sees it, and the
    vaults), so operations sit below the handlers that call them and never import them."""

    @property
    def host(self) -> VaultFinder: ...


@dataclass(frozen=True, slots=True)
class Approval:
    """A person applying a stored proposal: the runner re-plans it, requires every file to be as
    the proposal found it, skips the preview (reviewing the proposal was it) and journals the
    operation as the proposer's, approved by the caller."""

    proposal: ProposalDetail


JOURNAL_KEEP = 200  #: committed journals kept for undo
JOURNAL_MAX_BYTES = 256 * 1024 * 1024


@asynccontextmanager
async def planning(runtime: VaultRuntime, channel: Channel) -> AsyncIterator[OpContext]:
    """A planner's view of the vault as it is now, for work that plans without running an
    operation (a returned checkout, suggested links, both stored as proposals): every change made
    before it is in the index, and the index is held still while the caller plans in a thread."""
    live = runtime.owned_live()
    await live.barrier()
    async with live.held_still() as index:
        yield OpContext(root=runtime.root, entry=runtime.entry, index=index, channel=channel, now=dt.datetime.now().astimezone())


def new_op_id(now: dt.datetime, root: Path) -> str:
    """An id later than every other of the vault's, so listing by id lists in applied order."""
    return opids.next_op_id(root, now, lambda: journal.newest_op_id(root))


def fingerprint(ctx: OpContext, plan: Plan, params: WriteParams) -> str:
    """Covers the operation's input, the vault's identity and policy, and every file it reads
    and writes, so anything that changes after a preview forces a new preview."""
    core = msgspec.structs.asdict(params)
    for key in ("confirm", "fingerprint", "dry_run", "log", "reason"):
        core.pop(key, None)
    payload = msgspec.json.encode(
        [
            plan.op,
            core,
            fingerprinted(ctx.entry),
            [(c.path, c.before_sha, c.after_sha) for c in plan.changes],
        ],
        order="sorted",
    )
    return hashlib.sha256(payload).hexdigest()


def no_detail(ctx: OpContext, plan: Plan) -> NoDetail:
    """The detail of an operation whose changes say it all."""
    return NoDetail()


def _log_event(plan: Plan, override: LogEvent | None, op_id: str) -> LogEvent:
    if override is not None:
        return override
    dest = plan.log_dest or (plan.effective()[0].path if plan.effective() else None)
    return LogEvent(type=LogType(plan.log_type), project="-", source=f"vaultd:{plan.op}", dest=dest, note=f"{plan.summary} ({op_id})"[:200])


def screen_log_line(entry: VaultEntry, line: str, project: str) -> None:
    """A log line is screened like a note: never a secret, PII per the log surface; and its
    ``project`` is one the vault's project registry declares, when it keeps one. Every line a
    caller shapes passes here: an operation's log event, and ``log.append``'s.

    Raises:
        ValidationFailed: VALIDATION, the line holds a secret or PII the log refuses, or names a
            project the registry does not declare (V18).
    """
    rel = oplog.log_name(entry)
    undeclared = project_issue(project, entry.projects, rel)
    problems = (
        ([undeclared] if undeclared is not None else [])
        + secret_issues(line, rel)
        + [i for i in pii_findings(line, entry.pii, entry.kind, "log", path=rel) if i.severity == Severity.ERROR]
    )
    if problems:
        raise ValidationFailed(f"refused: the log event: {problems[0].message}", issues=problems)


def _plan_and_check(
    ctx: OpContext, params: P, planner: Callable[[OpContext, P], Plan], detail: Callable[[OpContext, Plan], D], agent: bool
) -> tuple[Plan, list[Issue], D]:
    """Plan, then validate: policy, the vault as the plan leaves it, the log event (worker thread).
    ``agent``: the log line will be an agent's (its own write, or its proposal a person applies)."""
    plan = planner(ctx, params)
    check_bounds(plan)  # a preview over a bound says so now, not at the confirm
    check_policy(ctx, plan)
    warnings = validate(ctx, plan)
    info = detail(ctx, plan)
    event = _log_event(plan, params.log, "preview")
    # An invalid or unsafe event refuses the whole write before anything is written.
    screen_log_line(ctx.entry, oplog.format_line(event, ctx.now, agent=agent), event.project)
    faults.point("after-plan")
    return plan, warnings, info


async def run_operation(
    call: WriteCall,
    params: P,
    planner: Callable[[OpContext, P], Plan],
    detail: Callable[[OpContext, Plan], D],
    *,
    undoes: str | None = None,
    approval: Approval | None = None,
) -> WriteReceipt[D]:
    """Run one operation, then tell the vault's subscribers what it applied or proposed."""
    receipt = await _run_operation(call, params, planner, detail, undoes=undoes, approval=approval)
    event = receipt_event(
        receipt,
        channel=str(call.channel),
        proposer=agent_gate.who(call),
        undoes=undoes,
        proposal=approval.proposal.id if approval is not None else None,
    )
    if event is not None:
        call.host.vault(params.vault).events.record(event)
    return receipt


async def _run_operation(
    call: WriteCall,
    params: P,
    planner: Callable[[OpContext, P], Plan],
    detail: Callable[[OpContext, Plan], D],
    *,
    undoes: str | None = None,
    approval: Approval | None = None,
) -> WriteReceipt[D]:
    """One operation on one vault, from barrier to receipt (see the module docstring).

    Raises:
        InvalidParams: INVALID_PARAMS, confirm without the preview's fingerprint.
        StalePreview: STALE_PREVIEW, the fingerprint no longer matches what planning gives now.
    """
    runtime: VaultRuntime = call.host.vault(params.vault)
    await runtime.wait_ready()
    async with runtime.writer:
        live = runtime.owned_live()
        # Plan on the vault as it is now, not as the watcher has reported it so far: a checkout
        # that just replaced thousands of notes must be in the index before a move looks for
        # backlinks or a create for collisions and dead links.
        await live.barrier()
        now = dt.datetime.now().astimezone()
        agent = call.channel == Channel.MCP
        # An agent's proposal stays the agent's in the log when a person applies it.
        logs_as_agent = agent or (approval is not None and agent_gate.is_agent(approval.proposal.proposer))
        # Reading every target and checking the result can take a while (a move reads and rewrites
        # each backlink); a worker thread does it, so reads and other vaults are served meanwhile.
        # The index is held still for it: the watcher's refreshes change it on the event loop.
        async with live.held_still() as index:
            ctx = OpContext(
                root=runtime.root,
                entry=runtime.entry,
                index=index,
                channel=call.channel,
                now=now,
                expected_sha=params.expected_sha if isinstance(params, EditParams) else None,
                stamp_date=agent_gate.stamp_date(approval.proposal) if approval is not None else None,
            )
            plan, warnings, info = await anyio.to_thread.run_sync(_plan_and_check, ctx, params, planner, detail, logs_as_agent)
        # What an agent may do here; a person (and a person applying a proposal) is not gated.
        verdict = await anyio.to_thread.run_sync(agent_gate.judge, runtime.root, runtime.entry, plan, params, call)
        held = verdict is not None and verdict.gate is Gate.PROPOSE
        if approval is not None:
            agent_gate.check_unchanged(plan, approval.proposal)
            plan.proposal, plan.proposed_by = approval.proposal.id, approval.proposal.proposer
            plan.summary = f"{plan.summary} (proposal {approval.proposal.id} by {approval.proposal.proposer})"[:500]
        elif isinstance(params, TwoStepParams) and params.needs_preview():
            fp = fingerprint(ctx, plan, params)
            if not params.confirm:
                if held and verdict is not None:
                    warnings = [agent_gate.held_notice(verdict, runtime.entry), *warnings]
                return receipt_of(Preview, plan, fingerprint=fp, warnings=warnings, detail=info)
            if params.fingerprint is None:
                raise InvalidParams("confirm needs the fingerprint from the preview")
            if params.fingerprint != fp:
                raise StalePreview("the vault changed since the preview (or the input differs); preview again")
        if params.dry_run:
            return receipt_of(DryRun, plan, warnings=warnings, detail=info)
        if not plan.effective():
            return receipt_of(Unchanged, plan, warnings=warnings, detail=info)
        # An agent's write while its session runs a work document here is that work's.
        work = work_for(runtime.root, runtime.entry.id) if agent and plan.op != "work.cancel" else None
        if held and verdict is not None:
            if work is not None:
                work.check_room(call.session, proposal=True)
            proposed = await anyio.to_thread.run_sync(
                agent_gate.propose, runtime.root, runtime.entry, plan, params, call, verdict, warnings, info, ctx.today
            )
            if work is not None:
                work.tag(call.session, proposal=proposed.proposal)
            return proposed
        if agent:
            plan.session = call.session
        if work is not None:
            work.check_room(call.session)
        op_id = new_op_id(now, runtime.root)
        log_receipt, commit, git_warnings = await carry_out(runtime, plan, op_id, call, now=now, log_override=params.log, undoes=undoes)
        if work is not None:
            work.tag(call.session, op_id=op_id)
        return receipt_of(Applied, plan, op_id=op_id, warnings=[*git_warnings, *warnings], log=log_receipt, detail=info, commit=commit)


def _screen_created(runtime: VaultRuntime, plan: Plan) -> None:
    """Every path the plan creates passes the screen a create's path passes (V04 path rules, V06
    secrets, V07 PII by the vault's policy), whatever operation planned it: here, right before the
    engine writes its journal, so no operation can leave it out and nothing screened reaches the
    disk or the journal. Operations screen earlier too, so a preview says so; this is the rule."""
    refuse_unsafe_path(created_path_issues(runtime.entry, plan))


async def carry_out(
    runtime: VaultRuntime,
    plan: Plan,
    op_id: str,
    call: WriteCall,
    *,
    now: dt.datetime,
    log_override: LogEvent | None = None,
    undoes: str | None = None,
) -> tuple[LogReceipt, str | None, list[Issue]]:
    """Carry out a planned, validated, allowed operation (the caller holds the vault's writer):
    the engine's :func:`~vaultd.txn.engine.apply_plan` on the files, then what follows in the
    daemon (the index, the log line, the checkpoint commit, the journal's bound). Returns the log
    receipt, the commit (when the vault keeps checkpoints) and the warnings of a commit not made."""
    _screen_created(runtime, plan)
    runtime.check_root()  # never write by a path that now leads into another folder
    try:
        await anyio.to_thread.run_sync(apply_plan, runtime.root, plan, op_id, str(call.channel), undoes)
    except RollbackFailed:
        runtime.quarantine("a failed operation could not be rolled back; restart the daemon to recover it")
        raise
    return await _after_apply(runtime, plan, op_id, call, now=now, log_override=log_override)


async def carry_out_together(
    shares: list[tuple[VaultRuntime, Plan, str]], call: WriteCall, *, now: dt.datetime
) -> list[tuple[LogReceipt, str | None, list[Issue]]]:
    """Carry out one operation's plans for several vaults (the caller holds every vault's writer) as
    one transaction (:func:`vaultd.txn.engine.apply_together`): all applied or none, whatever an
    editor saves meanwhile or a crash interrupts. Then each vault's index, log line, checkpoint
    and journal bound, as :func:`carry_out`; one result per vault, in order."""
    for runtime, plan, _ in shares:
        _screen_created(runtime, plan)
        runtime.check_root()
    parts = [Part(root=runtime.root, plan=plan, op_id=op_id) for runtime, plan, op_id in shares]
    try:
        await anyio.to_thread.run_sync(apply_together, parts, str(call.channel))
    except RollbackFailed:
        for runtime, _, _ in shares:
            runtime.quarantine("a failed operation could not be rolled back; restart the daemon to recover it")
        raise
    return [await _after_apply(runtime, plan, op_id, call, now=now) for runtime, plan, op_id in shares]


async def _after_apply(
    runtime: VaultRuntime, plan: Plan, op_id: str, call: WriteCall, *, now: dt.datetime, log_override: LogEvent | None = None
) -> tuple[LogReceipt, str | None, list[Issue]]:
    """What follows a committed operation in one vault: index, log line, checkpoint, pruning."""
    live = runtime.owned_live()
    # An agent's write, or an agent's proposal a person applied: the line says so, with the proposal.
    agent = call.channel == Channel.MCP or agent_gate.is_agent(plan.proposed_by)
    log.info("applied", op=plan.op, op_id=op_id, files=len(plan.effective()), channel=str(call.channel))
    await live.refresh(set(plan.paths))
    line = oplog.format_line(_log_event(plan, log_override, op_id), now, agent=agent, proposal=plan.proposal)
    try:
        await anyio.to_thread.run_sync(oplog.append, runtime.root, line, oplog.log_name(runtime.entry))
        log_receipt = LogReceipt(appended=True, line=line.rstrip("\n"))
    except (OSError, VaultError) as exc:
        log_receipt = LogReceipt(appended=False, error=getattr(exc, "message", None) or str(exc))
    # One commit per operation when the vault keeps checkpoints (its log line included).
    commit, git_warnings = await runtime.git.checkpoint_plan(
        plan,
        op_id,
        channel=str(call.channel),
        client=call.client,
        session=call.session,
        log_rel=oplog.log_name(runtime.entry) if log_receipt.appended else None,
    )
    await anyio.to_thread.run_sync(prune.prune, runtime.root, JOURNAL_KEEP, JOURNAL_MAX_BYTES)
    return log_receipt, commit, git_warnings
