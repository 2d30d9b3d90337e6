"""op.undo and op.list: committed operations are kept (bounded) so they can be reversed.

Both use only journals this daemon sealed (:func:`vaultd.txn.journal.open_journal`): undo writes
a journal's originals into the vault, so a journal that arrived with the vault is never undone
and never listed.
"""

from __future__ import annotations

import os

from protocol.methods.writes import OpSummary, UndoParams
from vaultd.errors import Conflict, NotFound, PolicyRefused
from vaultd.ops.context import OpContext
from vaultd.txn import journal
from vaultd.txn.engine import undo_plan
from vaultd.txn.plan import Plan


def plan_undo(ctx: OpContext, params: UndoParams) -> Plan:
    folder = journal.journal_root(ctx.root) / params.op_id
    if not os.path.lexists(folder) or journal.runtime_issue(ctx.root) is not None:
        raise NotFound(f"no kept operation {params.op_id}; see 'vaultctl ops'")
    try:
        journal.open_journal(folder)
    except journal.UntrustedJournal as exc:
        raise PolicyRefused(
            f"the journal of {params.op_id} was not written by this daemon ({exc.reason}); it is never undone: see 'vaultctl doctor'"
        ) from exc
    if not journal.is_committed(folder):
        raise Conflict(f"operation {params.op_id} never committed; nothing to undo")
    try:
        plan, manifest = undo_plan(ctx.root, folder)
    except journal.UntrustedJournal as exc:
        raise PolicyRefused(
            f"the journal of {params.op_id} was changed since it was written ({exc.reason}); it is never undone: see 'vaultctl doctor'"
        ) from exc
    if manifest.op == "op.undo" and manifest.undoes:
        plan.summary = f"redo {manifest.undoes} (undoing its undo {manifest.op_id})"
    return plan


def list_ops(ctx: OpContext, limit: int) -> list[OpSummary]:
    out = []
    for folder in reversed(journal.journals(ctx.root)):
        if not journal.is_committed(folder):
            continue
        try:
            m = journal.open_journal(folder)
        except journal.UntrustedJournal:
            continue  # reported by recovery and doctor; never offered for undo
        if any(ctx.visibility.hidden(e.path.removeprefix(".trash/")) for e in m.entries):
            continue  # an operation on a note the caller may not see is not shown either
        out.append(
            OpSummary(
                op_id=m.op_id,
                op=m.op,
                created=m.created,
                channel=m.channel,
                summary=m.summary,
                paths=[e.path for e in m.entries],
                undoes=m.undoes,
            )
        )
        if len(out) >= limit:
            break
    return out
