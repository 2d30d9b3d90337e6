"""A sync conflict, kept as a proposal only a person applies: ``git.resolve``.

When a note changed here and on origin does not merge, sync writes origin's version into the vault
(published history wins; this machine's commit stays in the shared history too) and stores a
proposal of this operation. Applying it writes both versions into the note: the frontmatter
merged key by key where the keys do not collide, the body with both versions of each conflicting
passage between markers, and a callout naming what collided. The person finishes the note by hand.
Rejecting it keeps origin's version. A file that is not text is restored to this machine's bytes
when the proposal is applied.

It is an operation like any other (journaled, undoable, committed as a checkpoint, pushed by the
next sync), re-planned at apply time from the three blobs the proposal names.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import msgspec

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.methods.git import ResolveParams
from protocol.methods.proposals import ProposalDetail, ProposalState
from vaultd.errors import NotFound
from vaultd.gate.diffs import file_diff
from vaultd.gate.store import new_id
from vaultd.git import objects
from vaultd.git.merge import Labels, merge_note
from vaultd.git.record import STATE_DIR
from vaultd.git.repo import Repo, find
from vaultd.ops.catalog import Operation, register
from vaultd.ops.runner import no_detail
from vaultd.txn.plan import Change, Plan

if TYPE_CHECKING:
    from pathlib import Path

    from vaultd.ops.context import OpContext

OP = "git.resolve"
PROPOSER = "sync:origin"


def resolution(repo: Repo, work: Path, params: ResolveParams) -> bytes | None:
    """The note with both versions kept (or this machine's bytes, for a file that is not text)."""
    blobs = objects.read_blobs(repo, [b for b in (params.base, params.ours, params.theirs) if b])
    base = blobs[params.base] if params.base else None
    ours = blobs[params.ours] if params.ours else None
    theirs = blobs[params.theirs] if params.theirs else None
    if ours is None or theirs is None:
        return ours
    merged = merge_note(work, base, ours, theirs, Labels(params.ours_label, params.theirs_label)) if params.path.endswith(".md") else None
    return ours if merged is None else merged.data


def plan_resolve(ctx: OpContext, params: ResolveParams) -> Plan:
    repo = find(ctx.root)
    if repo is None:
        raise NotFound("the vault is no longer in a git repository; the versions this proposal names are gone")
    work = ctx.root / STATE_DIR
    work.mkdir(mode=0o700, parents=True, exist_ok=True)
    current = ctx.read(params.path)
    return Plan(
        op=OP,
        changes=[Change(path=params.path, before=current, after=resolution(repo, work, params))],
        summary=f"kept both versions of {params.path} (a sync conflict)",
        log_type="SYNC",
    )


register(OP, Operation(ResolveParams, plan_resolve, no_detail))


def proposal(vault_id: str, repo: Repo, work: Path, params: ResolveParams, current: bytes | None) -> ProposalDetail:
    """The conflict as a pending proposal: what applying it would write over the vault's file now."""
    after = resolution(repo, work, params)
    now = time.time()
    return ProposalDetail(
        id=new_id(now),
        vault=vault_id,
        op=OP,
        summary=f"keep both versions of {params.path}: it changed here and on origin",
        targets=[params.path],
        state=ProposalState.PENDING,
        proposer=PROPOSER,
        reason="a sync found this note changed on this machine and on origin; the vault holds origin's version",
        created=now,
        diffs=[file_diff(Change(path=params.path, before=current, after=after))],
        warnings=[
            Issue(
                code=IssueCode.R04,
                severity=Severity.WARNING,
                message=f"{params.path} changed here and on origin and did not merge; the vault holds origin's version, and "
                "applying this writes both versions into the note for you to finish",
                path=params.path,
            )
        ],
        params=msgspec.to_builtins(params),
    )
