"""``op.revert``: reverse an operation that only git history still records, as a new operation.

``op.undo`` reverses what the journal keeps (the last 200 operations); past that window the
operation's checkpoint commit (found by its ``Vaultd-Op`` trailer) still says what it changed. A
revert puts each file back as the commit's first parent had it, if the file is still as the
commit left it (otherwise CONFLICT, naming the files changed since, and nothing is written). It is
two-step like every wide change: a preview with a fingerprint, then the confirm.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from protocol.methods import git
from protocol.methods.git import RevertDetail, RevertParams
from vaultd.errors import Conflict, NotFound, PolicyRefused
from vaultd.git import history, objects
from vaultd.git.incoming import raw_changes, writable
from vaultd.git.repo import Repo, find, resolve
from vaultd.ops.catalog import operation
from vaultd.txn.plan import Change, Plan
from vaultd.vault import oplog

if TYPE_CHECKING:
    from vaultd.ops import OpContext


@dataclass(slots=True)
class RevertPlan(Plan):
    commit: str = ""


def revert_detail(ctx: OpContext, plan: Plan) -> RevertDetail:
    commit = plan.commit if isinstance(plan, RevertPlan) else ""
    return RevertDetail(commit=commit, files=[c.path for c in plan.changes])


@operation(git.REVERT, detail=revert_detail)
def plan_revert(ctx: OpContext, params: RevertParams) -> Plan:
    """Put back what an operation's commit changed, as a new operation: for operations past the
    journal's undo window.

    Raises:
        NotFound: NOT_FOUND, no repository, no commit records the operation, or it changed nothing
            vaultd can put back.
        PolicyRefused: POLICY, it changed a note private to the CLI and the caller is not the CLI.
        Conflict: CONFLICT, a file it changed has changed since; ``candidates`` names them.
    """
    repo = find(ctx.root)
    if repo is None:
        raise NotFound(f"vault {ctx.entry.id!r} is not in a git repository; there is no history to revert from")
    commit = history.find_op_commit(repo, params.op_id)
    if commit is None:
        raise NotFound(f"no commit on this branch records operation {params.op_id}; see 'vaultctl history NOTE'")
    parent = history.commit_of(repo, f"{commit}~1") if _has_parent(repo, commit) else objects.EMPTY_TREE
    changed = raw_changes(repo, parent, commit)
    wanted = [before.oid for before, _ in changed.values() if before is not None]
    blobs = objects.read_blobs(repo, wanted)
    changes: list[Change] = []
    moved: list[str] = []
    log_rel = oplog.log_name(ctx.entry)
    for path, (before, after) in sorted(changed.items()):
        rel = repo.rel(path)
        if rel is None or rel == log_rel or not writable(rel, before) or not writable(rel, after):
            continue  # the operation log is append-only: its lines stay
        if ctx.visibility.hidden(rel):
            raise PolicyRefused(f"operation {params.op_id} changed a note private to the CLI; revert it from the CLI")
        current = ctx.read(rel)
        if (objects.blob_id(current) if current is not None else None) != (after.oid if after else None):
            moved.append(rel)
            continue
        changes.append(Change(path=rel, before=current, after=blobs[before.oid] if before else None))
    if moved:
        raise Conflict(f"cannot revert {params.op_id}: changed since its commit: {', '.join(moved)}", candidates=moved)
    if not changes:
        raise NotFound(f"operation {params.op_id}'s commit {commit[:12]} changed no file vaultd can put back")
    return RevertPlan(
        op="op.revert",
        changes=changes,
        summary=f"reverted {params.op_id} (commit {commit[:12]})",
        log_type="RETHINK",
        commit=commit,
    )


def _has_parent(repo: Repo, commit: str) -> bool:
    return resolve(repo, f"{commit}~1") is not None
