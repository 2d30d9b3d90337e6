"""work.cancel: roll back a work document's applied operations as one operation.

The operations go back newest first, file by file, to what each file was before the work first
changed it, as ``op.undo --session`` does for a whole session; but where a file was changed since
(by a person, an editor, another session) or by someone else between two of the work's changes,
that file is left as it is and named in the receipt (``kept``), never overwritten. Only
operations whose journals say they were made by the work's own session count, so a work record
cannot be made to undo anyone else's operations.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from protocol.methods import work
from protocol.methods.common import Channel
from protocol.methods.events import WorkChanged
from protocol.methods.receipts import Applied, Unchanged
from protocol.methods.work import WorkCancelDetail, WorkCancelParams, WorkState
from vaultd.errors import PolicyRefused, ValidationFailed
from vaultd.ops._runner import run_operation
from vaultd.ops.catalog import applies_itself
from vaultd.ops.undo import undone_by
from vaultd.sessions.work import work_for
from vaultd.txn import journal
from vaultd.txn.engine import read_current
from vaultd.txn.plan import Change, Plan, read_limit, sha256

if TYPE_CHECKING:
    from pathlib import Path

    from protocol.methods.receipts import WriteReceipt
    from vaultd.ops._context import OpContext
    from vaultd.ops._runner import Approval, WriteCall


def _work_ops(root: Path, session: str | None, op_ids: list[str]) -> list[tuple[Path, journal.Manifest]]:
    """The work's operations still kept, sealed, committed, not undone, and its session's own; newest first."""
    found = []
    for op_id in reversed(op_ids):
        folder = journal.journal_root(root) / op_id
        if not os.path.lexists(folder) or not journal.is_committed(folder):
            continue
        try:
            manifest = journal.open_journal(folder)
        except (OSError, journal.UntrustedJournal):
            continue
        if manifest.session != session or manifest.channel != Channel.MCP or undone_by(root, op_id) is not None:
            continue
        found.append((folder, manifest))
    return found


def plan_cancel(ctx: OpContext, params: WorkCancelParams) -> Plan:
    """The plan that puts back what the work's operations changed, where no one changed it since.

    Raises:
        ValidationFailed: VALIDATION, the work is cancelled already.
    """
    record = work_for(ctx.root, ctx.entry.id).get(params.id)
    if record.state is WorkState.CANCELLED:
        raise ValidationFailed(f"work {record.id} is cancelled already (by {record.undo_op or 'nothing to undo'})")
    ops = _work_ops(ctx.root, record.session, record.ops)
    expect: dict[str, str | None] = {}  #: the sha each file must have now (the work's last write)
    chain: dict[str, str | None] = {}  #: the sha before the oldest work change seen so far
    source: dict[str, tuple[Path, journal.Entry]] = {}
    kept: set[str] = set()
    for folder, manifest in ops:
        for entry in manifest.entries:
            if entry.path not in expect:
                expect[entry.path] = entry.after_sha
            elif chain[entry.path] != entry.after_sha:
                kept.add(entry.path)  # someone else wrote it between two of the work's changes
            chain[entry.path] = entry.before_sha
            source[entry.path] = (folder, entry)
    changes = []
    for path, (folder, entry) in source.items():
        if path in kept:
            continue
        current = read_current(ctx.root, path, read_limit(path))
        if sha256(current) != expect[path]:
            kept.add(path)  # changed since: the person's edit stays
            continue
        changes.append(Change(path=path, before=current, after=journal.original_bytes(folder, entry), mode=entry.mode))
    ids = [m.op_id for _, m in ops]
    summary = f"cancel work {record.id}: undo {len(ids)} operation(s)" + (f": {', '.join(ids[:20])}" if ids else "")
    if kept:
        summary += f"; left as changed since: {', '.join(sorted(kept)[:20])}"
    return Plan(
        op="work.cancel",
        changes=changes,
        summary=summary[:500],
        log_type="RETHINK",
        detail=WorkCancelDetail(work=record.id, undone=ids, kept=sorted(kept)),
    )


def cancel_detail(ctx: OpContext, plan: Plan) -> WorkCancelDetail:
    detail: WorkCancelDetail = plan.detail
    return detail


@applies_itself(work.WORK_CANCEL)
async def cancel(call: WriteCall, params: WorkCancelParams, approval: Approval | None) -> WriteReceipt[WorkCancelDetail]:
    """Cancel the work (an agent only its own session's): undo what it applied, then mark it cancelled.

    Raises:
        PolicyRefused: POLICY, an agent asked to cancel another session's work.
    """
    runtime = call.host.vault(params.vault)
    store = work_for(runtime.root, runtime.entry.id)
    record = store.get(params.id)
    if approval is None and call.channel == Channel.MCP and record.session != call.session:
        raise PolicyRefused(f"work {record.id} is another session's; an agent cancels only its own work (your user can)")
    receipt = await run_operation(call, params, plan_cancel, cancel_detail, approval=approval)
    if isinstance(receipt, Applied | Unchanged) and not params.dry_run:
        done = store.change(
            store.get(params.id),
            state=WorkState.CANCELLED,
            undo_op=receipt.op_id if isinstance(receipt, Applied) else None,
            kept=receipt.detail.kept,
        )
        runtime.events.record(WorkChanged(id=done.id, state=done.state, what=done.what, progress=done.progress, session=done.session or ""))
    return receipt
