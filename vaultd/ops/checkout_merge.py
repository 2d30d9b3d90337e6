"""checkout.merge: a returned checkout's edits written into its notes, merged three ways.

The operation is what a returned checkout's proposal holds; no caller runs it directly. Its
planner reads only the checkout's sealed record (the bytes checked out and the copies as
returned), so applying the proposal re-plans exactly what the person reviewed, on the notes as
they are then: a note changed since the proposal makes it stale, never overwritten.

Each edited copy is merged with its note: base = the note as checked out, ours = the note now,
theirs = the copy. A person's edits made meanwhile are kept; lines both changed keep the person's
text and are reported (G04). A note gone from the vault since is left out, and said so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.methods import checkouts
from protocol.methods.checkouts import MAX_CONFLICT_CHARS, CheckoutState, Overlap
from vaultd.checkout.merge import merge
from vaultd.checkout.store import Record, store_for
from vaultd.errors import Conflict
from vaultd.gate.store import store_for as proposals_for
from vaultd.ops._agent_gate import pending
from vaultd.ops._runner import no_detail
from vaultd.ops._validate import check_policy, validate
from vaultd.ops.catalog import operation
from vaultd.txn.engine import check_bounds
from vaultd.txn.plan import Change, Plan

if TYPE_CHECKING:
    from protocol.methods.checkouts import CheckoutMergeParams
    from protocol.methods.proposals import ProposalDetail
    from vaultd.ops._agent_gate import Caller
    from vaultd.ops._context import OpContext

OP = checkouts.CHECKOUT_MERGE.name


@dataclass
class Outcome:
    """What merging a checkout's copies gives, note by note."""

    changes: list[Change] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    overlaps: list[Overlap] = field(default_factory=list)

    def issues(self) -> list[Issue]:
        found = [
            Issue(
                code=IssueCode.G04,
                severity=Severity.WARNING,
                message=f"{o.path} line {o.line}: you and the checkout both changed these lines; yours are kept. "
                f"Yours: {o.ours.strip()[:300]!r}. The checkout's, not written: {o.theirs.strip()[:300]!r}",
                path=o.path,
            )
            for o in self.overlaps
        ]
        found += [
            Issue(
                code=IssueCode.G04,
                severity=Severity.WARNING,
                message=f"{p} is no longer in the vault (moved or deleted since it was checked out); its copy's edits are left out",
                path=p,
            )
            for p in self.skipped
        ]
        return found


def merge_record(ctx: OpContext, record: Record) -> Outcome:
    """Merge every returned copy of ``record`` with its note as it is now.

    Raises:
        Conflict: CONFLICT, a note is no longer UTF-8 text.
    """
    out = Outcome()
    for copy in record.copies:
        if copy.returned is None or copy.returned == copy.base:
            out.unchanged.append(copy.path)
            continue
        current = ctx.read(copy.path)
        if current is None:
            out.skipped.append(copy.path)
            continue
        try:
            ours = current.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Conflict(f"{copy.path} is no longer UTF-8 text; vaultd does not merge into it") from exc
        merged = merge(copy.base, ours, copy.returned)
        out.overlaps += [
            Overlap(path=copy.path, line=o.line + 1, ours=o.ours[:MAX_CONFLICT_CHARS], theirs=o.theirs[:MAX_CONFLICT_CHARS])
            for o in merged.overlaps
        ]
        if merged.text != ours:
            out.changes.append(Change(path=copy.path, before=current, after=merged.text.encode("utf-8")))
        elif not merged.overlaps:
            out.unchanged.append(copy.path)
    return out


def _returned(ctx: OpContext, checkout_id: str) -> Record:
    """The checkout's record, which must be returned (its copies frozen).

    Raises:
        NotFound: NOT_FOUND, no such checkout is kept.
        Conflict: CONFLICT, the checkout is not returned.
    """
    record = store_for(ctx.root).get(checkout_id)
    if record.state is not CheckoutState.RETURNED:
        raise Conflict(f"checkout {checkout_id} is {record.state}, not returned; nothing was written")
    return record


@operation(checkouts.CHECKOUT_MERGE, detail=no_detail, proposal_only=True)
def plan_merge(ctx: OpContext, params: CheckoutMergeParams) -> Plan:
    record = _returned(ctx, params.id)
    out = merge_record(ctx, record)
    ctx.warnings += out.issues()
    return Plan(op=OP, changes=out.changes, summary=f"returned the checkout {record.name!r} ({len(out.changes)} notes)")


def propose_return(ctx: OpContext, params: CheckoutMergeParams, caller: Caller) -> tuple[Outcome, ProposalDetail | None]:
    """Plan the returned checkout's merge, validate it as any write (the caller's policy), and
    store it as one pending proposal for a person; none when no note would change (worker thread).

    Raises:
        PolicyRefused: POLICY, a note it writes is refused to the caller.
        ValidationFailed: VALIDATION, the merged notes would be invalid.
        LimitExceeded: LIMIT, over an operation's bounds.
    """
    record = _returned(ctx, params.id)
    out = merge_record(ctx, record)
    plan = Plan(op=OP, changes=out.changes, summary=f"return the checkout {record.name!r}: {len(out.changes)} notes edited")
    if not plan.effective():
        return out, None
    check_bounds(plan)
    check_policy(ctx, plan)
    detail = pending(ctx.entry, plan, params, caller, [*out.issues(), *validate(ctx, plan)], ctx.today)
    proposals_for(ctx.root).add(detail)
    return out, detail
