"""lint.fix: the safe mechanical lint fixes, as one ordinary two-step operation.

The fixes are found first, the way ``vault.lint`` finds its findings (:mod:`vaultd.lint.fixes`):
on a copy of the index taken in one step on the event loop, in a thread or, for a large vault, a
lint worker process, holding neither the vault's writer nor its index, so writes to the vault and
every other client's requests go on while the rules walk it. Only the fixable findings count
(L01: a bare ``[[alias]]`` to the one note carrying it; L02: an ambiguous name whose candidate in
the linking note's folder is the one Obsidian opens). Then the operation runs as any other: under
the writer, its planner reads only the notes it rewrites, and refuses one whose bytes are not
those the fixes were made from (CONFLICT, never a guess; a fix whose text is no longer where the
lint saw it is one too). The runner previews it with a fingerprint, validates the result (every
rewritten link must resolve), journals it, and ``op.undo`` reverses it. Nothing else is ever
fixed: every other finding is for a person.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

from protocol.methods import lint as lint_methods
from protocol.methods.lint import LintFixDetail, LintFixParams
from protocol.methods.receipts import MAX_DETAIL_LINKS
from vaultd import faults
from vaultd.errors import Conflict, InvalidParams
from vaultd.lint.fixes import FIXABLE, FixSet, fixes_of
from vaultd.lint.model import Deadline
from vaultd.lint.worker import WORKER_MIN_NOTES, fixes_elsewhere, job_of
from vaultd.ops._runner import run_operation
from vaultd.ops.catalog import applies_itself
from vaultd.policy.visibility import Visibility
from vaultd.txn.plan import MAX_OP_FILES, Change, Plan
from vaultd.vault.lookup import find_note

if TYPE_CHECKING:
    from collections.abc import Callable

    from protocol.methods.receipts import WriteReceipt
    from vaultd.lint.model import Fix
    from vaultd.ops._context import OpContext
    from vaultd.ops._runner import Approval, WriteCall
    from vaultd.vault.index import IndexCopy


@dataclass(slots=True)
class FixPlan(Plan):
    """A plan that remembers the rewrites it makes, for the receipt's detail."""

    fixes: list[Fix] = field(default_factory=list)
    left: int = 0


def apply_fixes(text: str, fixes: list[Fix]) -> str:
    """``text`` with every fix applied; each must find its old text where the index saw it.

    Raises:
        Conflict: CONFLICT, a fix no longer finds its text where the index saw it.
    """
    out: list[str] = []
    pos = len(text)
    for fix in sorted(fixes, key=lambda f: f.start, reverse=True):
        if fix.end > pos or text[fix.start : fix.end] != fix.old:
            raise Conflict(f"{fix.path}:{fix.line} no longer holds {fix.old}; run lint again")
        out.append(text[fix.end : pos])
        out.append(fix.new)
        pos = fix.start
    out.append(text[:pos])
    return "".join(reversed(out))


def lint_fix_detail(ctx: OpContext, plan: Plan) -> LintFixDetail:
    fixes = plan.fixes if isinstance(plan, FixPlan) else []
    left = plan.left if isinstance(plan, FixPlan) else 0
    shown = [f"{f.path}:{f.line} {f}" for f in fixes[:MAX_DETAIL_LINKS]]
    return LintFixDetail(fixes=shown, fixed=len(fixes), left=left)


def planner_of(found: FixSet) -> Callable[[OpContext, LintFixParams], Plan]:
    """The planner that writes ``found``'s fixes, each note checked against the bytes its fixes
    were made from."""

    def plan_lint_fix(ctx: OpContext, params: LintFixParams) -> Plan:
        """Plan every note's fixes (at most ``MAX_OP_FILES`` notes; the rest are counted as left).

        Raises:
            Conflict: CONFLICT, a note changed since its fixes were made, or was removed.
        """
        by_note: dict[str, list[Fix]] = {}
        for fix in found.fixes:
            by_note.setdefault(fix.path, []).append(fix)
        paths = sorted(by_note)
        kept, later = paths[:MAX_OP_FILES], paths[MAX_OP_FILES:]
        changes = []
        fixes: list[Fix] = []
        for path in kept:
            raw, text = ctx.read_text(path)
            if hashlib.sha256(raw).hexdigest() != found.shas[path]:
                raise Conflict(f"{path} changed while lint.fix read the vault; run it again")
            changes.append(Change(path=path, before=raw, after=apply_fixes(text, by_note[path]).encode("utf-8")))
            fixes += by_note[path]
        count = len(fixes)
        summary = f"lint fix: rewrote {count} link{'s' if count != 1 else ''} in {len(changes)} note{'s' if len(changes) != 1 else ''}"
        return FixPlan(
            op=lint_methods.LINT_FIX.name,
            changes=changes,
            summary=summary,
            log_type="LINT",
            fixes=fixes,
            left=sum(len(by_note[p]) for p in later),
        )

    return plan_lint_fix


@applies_itself(lint_methods.LINT_FIX, vault_wide=True)
async def apply_lint_fix(call: WriteCall, params: LintFixParams, approval: Approval | None) -> WriteReceipt[LintFixDetail]:
    """Find the fixes on a copy of the index, then run the operation that writes them.

    Raises:
        InvalidParams: INVALID_PARAMS, the code asked for has no mechanical fix.
        LimitExceeded: LIMIT, finding the fixes ran past the lint's time bound.
    """
    if params.code is not None and not params.code.fixable:
        raise InvalidParams(f"{params.code} has no mechanical fix; lint.fix applies {', '.join(FIXABLE)}")
    runtime = call.host.vault(params.vault)
    await runtime.wait_ready()
    live = runtime.owned_live()
    await live.barrier()  # every change made before the call is in the copy
    entry = runtime.entry
    view = Visibility.of(entry, call.channel)
    when = dt.datetime.now().astimezone().date()
    deadline = Deadline.for_lint()
    # One synchronous step on the event loop, where every change to the index is applied.
    note = find_note(live.index, params.note, view.hidden) if params.note is not None else None
    copy = live.index.copy()

    def here(copy: IndexCopy) -> FixSet:
        return fixes_of(copy, entry, view, when, code=params.code, note=note, deadline=deadline)

    def elsewhere(copy: IndexCopy) -> FixSet:
        job = job_of(copy, entry, view, when, code=params.code, note=note, limit=0, until=deadline.when, fixes=True)
        return fixes_elsewhere(job)

    def find(copy: IndexCopy) -> FixSet:
        found = elsewhere(copy) if len(copy.notes) >= WORKER_MIN_NOTES else here(copy)
        faults.point("lint-fixes-found")
        return found

    found = await anyio.to_thread.run_sync(find, copy)
    return await run_operation(call, params, planner_of(found), lint_fix_detail, approval=approval)
