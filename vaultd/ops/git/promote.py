"""``note.promote``: copy a note from a vault into an org vault, through a screen that fails closed.

The copy is planned and validated as a note of the *org* vault: its write policy and deny paths,
secrets (always refused), personal data by the org's PII policy (an org vault denies it by
default), its schema, and its links: a link that names no note of the org vault becomes plain
text (listed in the detail, warning R07), so no dead link lands there. The source gets
``promoted_to``; the copy gets ``promoted_from`` and ``promoted_at``. Each names the other side's
note and the operation that wrote it there, so either can be traced to the other.

One operation over two vaults, applied under both vaults' writers (taken in id order, so two
promotions cannot deadlock) as one transaction: both notes are checked before either is written,
each vault journals its share, and the org journal's commit marker is the one commit point, so an
editor's save, a failure or a crash before it leaves neither vault changed and a retry works
(:func:`vaultd.txn.engine.apply_together`). Each vault then gets its log line and, when it keeps
checkpoints, its commit; the org copy is pushed by that vault's next sync. An existing
org note is never overwritten. For an agent the promotion is never applied directly: whatever the
policies say it is at least proposed, and a person applies it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.methods import git
from protocol.methods.common import Channel
from protocol.methods.gate import Gate
from protocol.methods.git import PromoteDetail, PromoteParams
from protocol.methods.proposals import FileDiff, ProposalDetail, ProposalState
from protocol.methods.receipts import MAX_RECEIPT_WARNINGS, Applied, DryRun, Preview, Proposed, WriteReceipt
from protocol.methods.vaults import Kind
from vaultd.errors import InvalidParams, PolicyRefused, StalePreview, ValidationFailed
from vaultd.gate.diffs import file_diff
from vaultd.gate.store import new_id, store_for
from vaultd.gate.verdict import Verdict
from vaultd.ops import (
    Approval,
    OpContext,
    StaleProposal,
    WriteCall,
    applies_itself,
    carry_out_together,
    change_receipts,
    check_policy,
    held_notice,
    judge,
    new_op_id,
    receipt_of,
    stamp_date,
    stored_params,
    validate,
    who,
)
from vaultd.ops._canon import canon_issues, fingerprinted
from vaultd.ops.create import existing_twin, new_note_path
from vaultd.relink import dead_links_as_text
from vaultd.txn.plan import Change, Plan
from vaultd.vault import frontmatter
from vaultd.vault.frontmatter_emit import emit
from vaultd.vault.link_targets import LinkResolver

if TYPE_CHECKING:
    from vaultd.runtime import VaultRuntime

PENDING_OP = "(op pending)"  #: stands for an op id in a preview: the ids exist only once applied


@dataclass(slots=True)
class Planned:
    org: Plan
    source: Plan
    detail: PromoteDetail
    warnings: list[Issue]


def _provenance(vault: str, path: str, op_id: str) -> str:
    return f"{vault}:{path} (op {op_id})"


def _plan_both(source: OpContext, org: OpContext, params: PromoteParams, s_op: str, o_op: str) -> Planned:
    """Both plans, screened and validated (worker thread).

    Raises:
        ValidationFailed: VALIDATION (V08), the note was promoted before (without ``again``), or the
            org vault has the path already.
    """
    src_path = source.find(params.target)
    raw, text = source.read_target(src_path)
    fields = frontmatter.parse(text).data or {}
    if "promoted_to" in fields and not params.again:
        raise ValidationFailed(
            f"{src_path} was promoted before ({fields['promoted_to']}); pass again to promote it once more (to a new path)",
            issues=[Issue(code=IssueCode.V08, message="the note was promoted before", path=src_path)],
        )
    dest = new_note_path(org, params.path or src_path)
    if (twin := existing_twin(org, dest)) is not None:
        raise ValidationFailed(
            f"{twin} already exists in vault '{org.entry.id}'; an org note is never overwritten: choose another path",
            issues=[Issue(code=IssueCode.V08, message="the destination already exists", path=dest)],
        )
    resolver = LinkResolver([*org.index.notes, *org.index.attachments, dest])
    copied, dropped = dead_links_as_text(text, resolver, dest)
    copied = emit(
        copied,
        {"promoted_from": _provenance(source.entry.id, src_path, s_op), "promoted_at": org.today},
        [k for k in ("promoted_to",) if k in fields],
    )
    org_plan = Plan(
        op="note.promote",
        changes=[Change(path=dest, before=None, after=copied.encode("utf-8"))],
        summary=f"promoted {source.entry.id}:{src_path} to {dest}",
        log_type="SYNC",
    )
    earlier = fields.get("promoted_to")
    mark = _provenance(org.entry.id, dest, o_op)
    value: Any = mark if earlier is None else [*(earlier if isinstance(earlier, list) else [earlier]), mark]
    source_plan = Plan(
        op="note.promote",
        changes=[Change(path=src_path, before=raw, after=emit(text, {"promoted_to": value}).encode("utf-8"))],
        summary=f"promoted {src_path} to {org.entry.id}:{dest}",
        log_type="SYNC",
    )
    for ctx, plan in ((org, org_plan), (source, source_plan)):
        check_policy(ctx, plan)
    warnings = validate(org, org_plan) + validate(source, source_plan)
    warnings += [Issue(code=IssueCode.R07, severity=Severity.WARNING, message=f"became text in the copy: {d}") for d in dropped[:20]]
    warnings += canon_issues(org, copied)  # the org vault's own tables only
    detail = PromoteDetail(
        from_vault=source.entry.id,
        from_path=src_path,
        to_vault=org.entry.id,
        to_path=dest,
        dropped_links=dropped[:MAX_RECEIPT_WARNINGS],
        dropped_omitted=max(0, len(dropped) - MAX_RECEIPT_WARNINGS),
        source_change=change_receipts(source_plan)[0],
    )
    return Planned(org_plan, source_plan, detail, warnings)


def _fingerprint(planned: Planned, params: PromoteParams, source: OpContext, org: OpContext) -> str:
    core = msgspec.structs.asdict(params)
    for key in ("confirm", "fingerprint", "dry_run", "log", "reason"):
        core.pop(key, None)
    payload = msgspec.json.encode(
        [
            "note.promote",
            core,
            fingerprinted(source.entry),
            fingerprinted(org.entry),
            *[(c.path, c.before_sha, c.after_sha) for p in (planned.org, planned.source) for c in p.changes],
        ],
        order="sorted",
    )
    return hashlib.sha256(payload).hexdigest()


def _targets(planned: Planned, source_vault: str) -> dict[str, tuple[str, str | None, str | None]]:
    """What a proposal records per file, read and written: the org copy by its path, the source
    note as 'vault:path'."""
    out = {c.path: (str(c.action), c.before_sha, c.after_sha) for c in planned.org.effective()}
    out |= {f"{source_vault}:{c.path}": (str(c.action), c.before_sha, c.after_sha) for c in planned.source.effective()}
    return out


def _gate(call: WriteCall, source: VaultRuntime, org: VaultRuntime, planned: Planned, params: PromoteParams) -> Verdict | None:
    """An agent's promotion: refused if either vault's policy refuses it, else at least proposed."""
    if call.channel != Channel.MCP:
        return None
    found = [judge(rt.root, rt.entry, plan, params, call) for rt, plan in ((org, planned.org), (source, planned.source))]
    strictest = max((v for v in found if v is not None), key=lambda v: v.gate.rank)
    if strictest.gate is Gate.APPLY:
        return Verdict(gate=Gate.PROPOSE, op_class=strictest.op_class, classes=strictest.classes)
    return strictest


@applies_itself(git.PROMOTE)
async def run_promote(call: WriteCall, params: PromoteParams, approval: Approval | None = None) -> WriteReceipt[PromoteDetail]:
    """Copy a note into an org vault as one operation over two vaults: previewed, then applied to
    both or neither.

    Raises:
        InvalidParams: INVALID_PARAMS, ``to`` names the note's own vault, or confirm without the
            preview's fingerprint.
        PolicyRefused: POLICY, ``to`` is a personal vault.
        StalePreview: STALE_PREVIEW, a note changed since the preview.
    """
    source = call.host.vault(params.vault)
    org = call.host.vault(params.to)
    if source is org:
        raise InvalidParams("promote copies a note into another vault; 'to' names the vault it is in")
    if org.entry.kind is not Kind.ORG:
        raise PolicyRefused(f"vault {org.entry.id!r} is a personal vault; notes are promoted into org vaults")
    await source.wait_ready()
    await org.wait_ready()
    async with AsyncExitStack() as stack:
        for runtime in sorted((source, org), key=lambda r: r.entry.id):
            await stack.enter_async_context(runtime.writer)
        await source.owned_live().barrier()
        await org.owned_live().barrier()
        now = dt.datetime.now().astimezone()

        # An approved proposal writes the day its diffs showed, whenever it is applied.
        day = stamp_date(approval.proposal) if approval is not None else None

        async def plan(s_op: str, o_op: str) -> tuple[Planned, OpContext, OpContext]:
            async with source.owned_live().held_still() as s_index, org.owned_live().held_still() as o_index:
                s_ctx = OpContext(root=source.root, entry=source.entry, index=s_index, channel=call.channel, now=now, stamp_date=day)
                o_ctx = OpContext(root=org.root, entry=org.entry, index=o_index, channel=call.channel, now=now, stamp_date=day)
                planned = await anyio.to_thread.run_sync(_plan_both, s_ctx, o_ctx, params, s_op, o_op)
            return planned, s_ctx, o_ctx

        planned, s_ctx, o_ctx = await plan(PENDING_OP, PENDING_OP)
        verdict = await anyio.to_thread.run_sync(_gate, call, source, org, planned, params)
        warnings = planned.warnings
        if approval is not None:
            _check_unchanged(planned, approval, source.entry.id)
        else:
            fp = _fingerprint(planned, params, s_ctx, o_ctx)
            if not params.confirm:
                if verdict is not None:
                    warnings = [held_notice(verdict, source.entry), *warnings]
                return receipt_of(Preview, planned.org, warnings=warnings, detail=planned.detail, fingerprint=fp)
            if params.fingerprint is None:
                raise InvalidParams("confirm needs the fingerprint from the preview")
            if params.fingerprint != fp:
                raise StalePreview("a note changed since the preview (or the input differs); preview again")
        if params.dry_run:
            return receipt_of(DryRun, planned.org, warnings=warnings, detail=planned.detail)
        if verdict is not None:
            return await anyio.to_thread.run_sync(_propose, source, planned, params, call, verdict, o_ctx.today)
        o_op = new_op_id(now, org.root)
        s_op = new_op_id(now, source.root)
        planned, _, _ = await plan(s_op, o_op)
        if approval is not None:
            for p in (planned.org, planned.source):
                p.proposal, p.proposed_by = approval.proposal.id, approval.proposal.proposer
        # One transaction over both vaults: an editor's save of either note, a full disk or a
        # crash anywhere before the org journal's commit marker leaves neither vault changed.
        (log_receipt, org_commit, org_warnings), (_, source_commit, source_warnings) = await carry_out_together(
            [(org, planned.org, o_op), (source, planned.source, s_op)], call, now=now
        )
        planned.detail.source_op_id, planned.detail.source_commit = s_op, source_commit
        return receipt_of(
            Applied,
            planned.org,
            warnings=[*org_warnings, *source_warnings, *warnings],
            detail=planned.detail,
            op_id=o_op,
            log=log_receipt,
            commit=org_commit,
        )
    raise AssertionError("unreachable")


def _check_unchanged(planned: Planned, approval: Approval, source_vault: str) -> None:
    """Applying a proposal: every file must be read as the proposal read it and written to the
    bytes it showed (G03), or nothing is written. The copy depends on more than the two notes (a
    link the org vault no longer resolves is dropped to text), so what was read is not enough.

    Raises:
        StaleProposal: CONFLICT (G03), a file was read or would be written otherwise than proposed;
            nothing is written.
    """
    then = {d.path: (d.action, d.before_sha, d.after_sha) for d in approval.proposal.diffs}
    now = _targets(planned, source_vault)
    differ = sorted(p for p in then.keys() | now.keys() if then.get(p) != now.get(p))
    if differ:
        message = f"proposal {approval.proposal.id} is stale: changed since it was proposed: {', '.join(differ[:10])}; nothing was written"
        raise StaleProposal(message, issues=[Issue(code=IssueCode.G03, message=message)], candidates=differ[:100])


def _propose(
    source: VaultRuntime, planned: Planned, params: PromoteParams, call: WriteCall, verdict: Verdict, day: str
) -> Proposed[PromoteDetail]:
    """Keep an agent's promotion for a person, in the source vault's proposals (worker thread)."""
    now = dt.datetime.now().timestamp()
    diffs: list[FileDiff] = [file_diff(c) for c in planned.org.effective()]
    diffs += [msgspec.structs.replace(file_diff(c), path=f"{source.entry.id}:{c.path}") for c in planned.source.effective()]
    detail = ProposalDetail(
        id=new_id(now),
        vault=source.entry.id,
        op="note.promote",
        summary=planned.org.summary,
        targets=[d.path for d in diffs],
        state=ProposalState.PENDING,
        proposer=who(call),
        session=call.session,
        reason=params.reason,
        created=now,
        diffs=diffs,
        warnings=planned.warnings[:MAX_RECEIPT_WARNINGS],
        params=stored_params(params),
        day=day,
    )
    store_for(source.root).add(detail)
    message = (
        f"held for your user as proposal {detail.id} in vault '{source.entry.id}': agents never promote into an org vault "
        f"directly. Nothing changed yet; they apply it with 'vaultctl proposals apply {detail.id} --vault {source.entry.id}'."
    )
    notice = held_notice(verdict, source.entry)
    return receipt_of(
        Proposed, planned.org, warnings=[notice, *planned.warnings], detail=planned.detail, proposal=detail.id, message=message
    )
