"""op.undo and op.list: committed operations are kept (bounded) so they can be reversed.

Both use only journals this daemon sealed (:func:`vaultd.txn.journal.open_journal`): undo writes
a journal's originals into the vault, so a journal that arrived with the vault is never undone
and never listed.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from protocol.methods import writes
from protocol.methods.writes import OpSummary, UndoParams
from vaultd.errors import Conflict, NotFound, PolicyRefused, ValidationFailed
from vaultd.git import history
from vaultd.ops._runner import no_detail
from vaultd.ops.catalog import operation
from vaultd.ops.tidy import never_undone, redacted_undo
from vaultd.txn import journal
from vaultd.txn.engine import read_current, undo_plan
from vaultd.txn.plan import Change, Plan, read_limit, sha256
from vaultd.vault import oplog

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from vaultd.ops._context import OpContext
    from vaultd.policy.visibility import Visibility
    from vaultd.vault.index import VaultIndex


@operation(writes.UNDO, detail=no_detail, undoes=lambda params: params.op_id)
def plan_undo(ctx: OpContext, params: UndoParams) -> Plan:
    plan, manifest = _plan_one(ctx, params)
    if params.session and manifest.session is not None:
        return _plan_session(ctx, manifest)
    return plan


def _plan_one(ctx: OpContext, params: UndoParams) -> tuple[Plan, journal.Manifest]:
    """Plan the undo of one kept operation from its journal, if its files are still as it left them.

    Raises:
        NotFound: NOT_FOUND, no kept operation has that id (R02 when git history still has it).
        PolicyRefused: POLICY, its journal was not written by this daemon, or changed since.
        Conflict: CONFLICT, it never committed.
        ValidationFailed: VALIDATION, it was undone already.
    """
    folder = journal.journal_root(ctx.root) / params.op_id
    if not os.path.lexists(folder) or journal.runtime_issue(ctx.root) is not None:
        older = history.undo_hint(ctx.root, params.op_id)  # past the journal's window, git may still have it
        if older:
            raise NotFound(f"operation {params.op_id} is older than the operations kept for undo; {older[0].message}", issues=older)
        raise NotFound(f"no kept operation {params.op_id}; see 'vaultctl ops'")
    try:
        kept = journal.open_journal(folder)
    except journal.UntrustedJournal as exc:
        raise PolicyRefused(
            f"the journal of {params.op_id} was not written by this daemon ({exc.reason}); it is never undone: see 'vaultctl doctor'"
        ) from exc
    if not journal.is_committed(folder):
        raise Conflict(f"operation {params.op_id} never committed; nothing to undo")
    by = undone_by(ctx.root, params.op_id)
    if by is not None:
        raise ValidationFailed(
            f"operation {params.op_id} was undone already, by {by}; nothing to undo (to redo it, undo that: 'vaultctl undo {by}')"
        )
    try:
        plan, manifest = undo_plan(ctx.root, folder, leave=never_undone(kept.op, oplog.log_name(ctx.entry)))
    except journal.UntrustedJournal as exc:
        raise PolicyRefused(
            f"the journal of {params.op_id} was changed since it was written ({exc.reason}); it is never undone: see 'vaultctl doctor'"
        ) from exc
    plan = redacted_undo(manifest.op, manifest.summary, plan, oplog.log_name(ctx.entry))
    if manifest.op == "op.undo" and manifest.undoes:
        plan.summary = f"redo {manifest.undoes} (undoing its undo {manifest.op_id})"
    return plan, manifest


def _kept(root: Path, *, newest_first: bool = False) -> Iterator[tuple[Path, journal.Manifest]]:
    """Every committed journal whose seal holds, with its manifest, oldest first unless asked.
    An untrusted one is left out: recovery and doctor report it, and it is never offered for undo."""
    folders = journal.journals(root)
    for folder in reversed(folders) if newest_first else folders:
        if not journal.is_committed(folder):
            continue
        try:
            manifest = journal.open_journal(folder)
        except journal.UntrustedJournal:
            continue
        yield folder, manifest


def undone_by(root: Path, op_id: str) -> str | None:
    """The kept undo that reversed ``op_id`` and still stands (was not itself undone), or None.

    Undoing an undo redoes what it undid, so the chain is followed oldest first: each undo marks
    its target undone and brings back whatever its target had undone.
    """
    undone: dict[str, str] = {}  #: op id -> the undo that reversed it
    undid: dict[str, str] = {}  #: undo's op id -> the op id it reversed
    for _folder, m in _kept(root):
        if m.op == "op.undo" and m.undoes:
            undone[m.undoes] = m.op_id
            undid[m.op_id] = m.undoes
            if (revived := undid.get(m.undoes)) is not None:
                undone.pop(revived, None)
    return undone.get(op_id)


def _session_ops(ctx: OpContext, session: str) -> list[tuple[Path, journal.Manifest]]:
    """The session's kept operations not undone since, newest first."""
    found: list[tuple[Path, journal.Manifest]] = []
    undone: set[str] = set()
    for folder, m in _kept(ctx.root, newest_first=True):
        if m.op == "op.undo":
            if m.undoes:
                undone.add(m.undoes)
            continue
        if m.session == session and m.op_id not in undone:
            found.append((folder, m))
    return found


def _plan_session(ctx: OpContext, chosen: journal.Manifest) -> Plan:
    """Undo every kept operation of one agent session as one operation: each file goes back to
    what it was before the session's first change to it, if it is still as the session's last
    change left it and no one else changed it in between.

    Raises:
        Conflict: CONFLICT, another operation changed a file in between, or a file changed since.
    """
    assert chosen.session is not None
    ops = _session_ops(ctx, chosen.session)
    expect: dict[str, str | None] = {}  #: the sha each file must have now (the session's last write)
    chain: dict[str, str | None] = {}  #: the sha before the oldest session change seen so far
    source: dict[str, tuple[Path, journal.Entry]] = {}
    between: list[str] = []
    for folder, m in ops:
        for e in m.entries:
            if e.path not in expect:
                expect[e.path] = e.after_sha
            elif chain[e.path] != e.after_sha:
                between.append(e.path)  # someone else wrote it between two of the session's changes
            chain[e.path] = e.before_sha
            source[e.path] = (folder, e)
    if between:
        raise Conflict(f"cannot undo session {chosen.session}: changed by another operation in between: {', '.join(sorted(set(between)))}")
    changes, moved = [], []
    for path, (folder, entry) in source.items():
        current = read_current(ctx.root, path, read_limit(path))
        if sha256(current) != expect[path]:
            moved.append(path)
            continue
        changes.append(Change(path=path, before=current, after=journal.original_bytes(folder, entry), mode=entry.mode))
    if moved:
        raise Conflict(f"cannot undo session {chosen.session}: changed since: {', '.join(sorted(moved))}", candidates=sorted(moved))
    ids = [m.op_id for _, m in ops]
    return Plan(
        op="op.undo",
        changes=changes,
        summary=f"undo {len(ids)} operation(s) of session {chosen.session}: {', '.join(ids[:20])}"[:500],
        log_type="RETHINK",
    )


def list_ops(root: Path, view: Visibility, index: VaultIndex, limit: int) -> list[OpSummary]:
    """The kept operations the caller may know of, newest first (``index`` held still)."""
    out = []
    for _folder, m in _kept(root, newest_first=True):
        if any(view.hidden(e.path.removeprefix(".trash/")) for e in m.entries):
            continue  # an operation on a note the caller may not see is not shown either
        if view.names_hidden_in(m.summary, index):
            continue  # nor one whose summary names it (a link written to it from a visible note)
        out.append(
            OpSummary(
                op_id=m.op_id,
                op=m.op,
                created=m.created,
                channel=m.channel,
                summary=m.summary,
                paths=[e.path for e in m.entries],
                undoes=m.undoes,
                session=m.session,
                proposal=m.proposal,
                proposed_by=m.proposed_by,
            )
        )
        if len(out) >= limit:
            break
    return out
