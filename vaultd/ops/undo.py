"""op.undo and op.list: committed operations are kept (bounded) so they can be reversed."""

from __future__ import annotations

from protocol.methods.writes import OpSummary, UndoParams
from vaultd.errors import Conflict, NotFound
from vaultd.ops.context import OpContext
from vaultd.txn import journal
from vaultd.txn.engine import undo_plan
from vaultd.txn.plan import Plan


def plan_undo(ctx: OpContext, params: UndoParams) -> Plan:
    folder = journal.journal_root(ctx.root) / params.op_id
    if not folder.is_dir():
        raise NotFound(f"no kept operation {params.op_id}; see 'vaultctl ops'")
    if not journal.is_committed(folder):
        raise Conflict(f"operation {params.op_id} never committed; nothing to undo")
    plan, manifest = undo_plan(ctx.root, folder)
    if manifest.op == "op.undo" and manifest.undoes:
        plan.summary = f"redo {manifest.undoes} (undoing its undo {manifest.op_id})"
    return plan


def list_ops(ctx: OpContext, limit: int) -> list[OpSummary]:
    out = []
    for folder in reversed(journal.journals(ctx.root)):
        if folder.name.endswith(".tmp") or not journal.is_committed(folder):
            continue
        m = journal.read_manifest(folder)
        if any(ctx.visibility.hidden(e.path.removeprefix(".trash/")) for e in m.entries):
            continue  # an operation on a note the caller may not see is not shown either
        out.append(OpSummary(op_id=m.op_id, op=m.op, created=m.created, channel=m.channel, summary=m.summary,
                             paths=[e.path for e in m.entries], undoes=m.undoes))
        if len(out) >= limit:
            break
    return out
