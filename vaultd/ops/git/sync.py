"""``vault.sync``: the one way vaultd talks to a remote. Fetch, integrate as operations, push
fast-forward only, verify.

1. Origin must be exactly the registered remote, with no URL rewrite (:mod:`vaultd.git.remote`).
2. Under the writer: an integration a stop interrupted is finished, then pending checkpoints and
   hand edits are committed, so everything is pushed.
3. Fetch origin's branch (no writer: reads and writes go on meanwhile).
4. The remote's branch must contain what the last sync saw (``refs/vaultd/synced/BRANCH``): a
   remote that was force-pushed is refused, nothing integrated, nothing pushed.
5. Under the writer: the remote's changes are decided file by file (:mod:`vaultd.git.incoming`)
   and written as journaled operations through the engine (so the index, the watchers and undo
   agree); conflicts become proposals. Then the branch moves: fast-forward when nothing local is
   new, else a merge commit of both heads, and the person's index follows it. These steps are one
   recoverable operation, recorded before the first write (:mod:`vaultd.git.integration`).
6. Push the branch, never forced (a remote that moved meanwhile rejects it: back to 3, bounded),
   then check origin has exactly the local head, and remember it for step 4.

Integration writes no line to the vault's operation log: the log is shared, and the remote's own
operations arrive with their lines.
"""

from __future__ import annotations

import datetime as dt
import random
import time
from typing import TYPE_CHECKING

import anyio
import structlog

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from protocol.methods.git import MAX_SYNC_LISTED, ResolveParams, SyncConflict, SyncOutcome, SyncResult
from vaultd import faults
from vaultd.errors import Conflict, PolicyRefused, Unavailable, VaultError
from vaultd.gate.store import new_id
from vaultd.git import command, incoming, integration, remote, verify
from vaultd.git.checkpoint import TRAILER_CHANNEL
from vaultd.git.merge import Labels
from vaultd.git.objects import EMPTY_TREE, blob_id
from vaultd.git.record import GIT_STATE_DIR
from vaultd.git.repo import Repo, checked_branch, is_ancestor, merge_base
from vaultd.git.repo import resolve as resolve_rev
from vaultd.git.staging import StagedContent, describe
from vaultd.ops import JOURNAL_KEEP, JOURNAL_MAX_BYTES, change_receipts, new_op_id
from vaultd.txn import prune
from vaultd.txn.engine import RollbackFailed, apply_plan
from vaultd.txn.plan import Change, Plan
from vaultd.vault import oplog

if TYPE_CHECKING:
    from protocol.methods.receipts import ChangeReceipt
    from vaultd.runtime import VaultRuntime

log = structlog.get_logger("vaultd.git")

MAX_ATTEMPTS = 3  #: fetch-integrate-push rounds when the remote moves during a sync
IDLE_CHECK_S = 60.0  #: how often a vault without background sync looks whether it was turned on
SYNCED_PREFIX = "refs/vaultd/synced/"


def _short(branch: str) -> str:
    return branch.removeprefix("refs/heads/")


def _fetch(repo: Repo, short: str, allow: str) -> str | None:
    """Fetch origin's branch into its tracking ref; its commit, or None when origin lacks it.

    git checks every object it receives (``fetch.fsckObjects``): a tree with a path git refuses
    (``.git`` in any case or spelling, ``..``) fails the fetch, and nothing moves.

    Raises:
        GitFailed: INTERNAL, the fetch failed (an object refused by git's checks is recorded first).
    """
    tracking = f"refs/remotes/{remote.REMOTE}/{short}"
    listed = command.run(
        repo.top, "ls-remote", "--heads", remote.REMOTE, f"refs/heads/{short}", timeout=command.NETWORK_TIMEOUT_S, allow=allow
    )
    if not listed.text.strip():
        return None
    out = command.run(
        repo.top,
        "fetch",
        "--no-tags",
        "--no-write-fetch-head",
        remote.REMOTE,
        f"+refs/heads/{short}:{tracking}",
        timeout=command.NETWORK_TIMEOUT_S,
        allow=allow,
        ok=(0, 1, 128),
    )
    if out.status != 0:
        if "fsck error" in out.stderr or "index-pack failed" in out.stderr:
            checked = next((ln for ln in out.stderr.splitlines() if ln.startswith("error: object")), "an object failed git's checks")
            verify.refuse([command.redact(checked.removeprefix("error: "))], "git's own checks refuse what origin sent")
        raise command.GitFailed(f"git fetch failed: {command.redact(out.stderr)}", status=out.status, stderr=command.redact(out.stderr))
    return resolve_rev(repo, tracking)


def _check_history(repo: Repo, short: str, fetched: str | None, vault_id: str) -> None:
    """Refuse a remote branch that no longer contains what the last sync saw (R06).

    Raises:
        PolicyRefused: POLICY (R06), origin's branch is gone or no longer contains the last synced
            commit.
    """
    last = resolve_rev(repo, SYNCED_PREFIX + short)
    if last is None:
        return
    if fetched is None or not is_ancestor(repo, last, fetched):
        what = "is gone" if fetched is None else f"was rewritten (it no longer contains {last[:12]}, which the last sync saw)"
        message = f"origin's {short} {what}; vaultd never integrates or overwrites rewritten shared history, so nothing was synced"
        raise PolicyRefused(f"vault {vault_id!r}: {message}", issues=[Issue(code=IssueCode.R06, message=message)])


def _push(repo: Repo, head: str, short: str, allow: str) -> bool:
    """Push ``head`` to origin's branch, fast-forward only; False when origin moved meanwhile.

    Raises:
        Unavailable: UNAVAILABLE, the push failed for another reason than origin having moved.
    """
    out = command.run(
        repo.top,
        "push",
        "--porcelain",
        "--no-verify",
        remote.REMOTE,
        f"{head}:refs/heads/{short}",
        ok=(0, 1),
        timeout=command.NETWORK_TIMEOUT_S,
        allow=allow,
    )
    if out.status == 0:
        return True
    said = out.text + out.stderr
    # Origin moved under us: another machine pushed first, or its push held the ref's lock.
    if any(m in said for m in ("[rejected]", "non-fast-forward", "fetch first", "failed to update ref", "cannot lock ref")):
        return False
    raise Unavailable(f"the push to origin failed: {command.redact(out.stderr) or command.redact(out.text)}; nothing was overwritten")


def _remote_head(repo: Repo, short: str, allow: str) -> str | None:
    out = command.run(
        repo.top, "ls-remote", "--heads", remote.REMOTE, f"refs/heads/{short}", timeout=command.NETWORK_TIMEOUT_S, allow=allow
    )
    first = out.text.split()
    return first[0] if first else None


def _count(repo: Repo, spec: str) -> int:
    return int(command.line(repo.top, "rev-list", "--count", spec) or 0)


def _changes(inc: incoming.Incoming) -> list[Change]:
    return [Change(path=rel, before=inc.befores.get(rel), after=after) for rel, after in inc.writes.items()]


def _intent(branch: str, local: str | None, fetched: str, merge: bool, inc: incoming.Incoming, short: str, by: str) -> integration.Intent:
    """The whole integration, recorded before its first write (see :mod:`vaultd.git.integration`)."""
    labels = Labels()
    message, trailers = _merge_message(short, inc, by)
    return integration.Intent(
        branch=branch,
        old=local,
        fetched=fetched,
        merge=merge,
        message=message,
        trailers=trailers,
        tree=dict(inc.tree),
        writes=[
            integration.Write(
                rel,
                None if inc.befores.get(rel) is None else blob_id(inc.befores[rel] or b""),
                None if after is None else blob_id(after),
            )
            for rel, after in sorted(inc.writes.items())
        ],
        proposals=[
            integration.Pending(
                id=new_id(time.time()),
                kept=c.kept,
                params=ResolveParams(
                    path=c.rel, base=c.base, ours=c.ours, theirs=c.theirs, ours_label=labels.ours, theirs_label=labels.theirs
                ),
            )
            for c in inc.conflicts
            if c.needs_proposal
        ],
        moved_to=None if merge else (local, fetched),
    )


async def _integrate(runtime: VaultRuntime, inc: incoming.Incoming, short: str) -> tuple[list[str], list[ChangeReceipt]]:
    """Write the remote's changes as journaled operations; their op ids and changes. A failure
    undoes the ones already applied before it is raised (the record is then removed); what cannot
    be undone is left to :func:`integration.resume`, with the record."""
    assert runtime.live is not None
    op_ids: list[str] = []
    receipts: list[ChangeReceipt] = []
    applied: list[Plan] = []
    try:
        for changes in integration.batches(_changes(inc)):
            plan = Plan(op="vault.sync", changes=changes, summary=f"integrated {len(changes)} file(s) from origin/{short}", log_type="SYNC")
            op_id = new_op_id(dt.datetime.now().astimezone(), runtime.root)
            runtime.check_root()
            try:
                await anyio.to_thread.run_sync(apply_plan, runtime.root, plan, op_id, "sync")
            except RollbackFailed:
                runtime.quarantine("a failed sync could not be rolled back; restart the daemon to recover it")
                raise
            applied.append(plan)
            await runtime.live.refresh({c.path for c in changes})
            op_ids.append(op_id)
            receipts += change_receipts(plan)
    except RollbackFailed:
        raise  # the vault is quarantined: the restart's recovery finishes the integration
    except Exception:
        await _undo(runtime, op_ids, applied)
        raise
    await anyio.to_thread.run_sync(prune.prune, runtime.root, JOURNAL_KEEP, JOURNAL_MAX_BYTES)
    return op_ids, receipts


async def _undo(runtime: VaultRuntime, op_ids: list[str], applied: list[Plan]) -> None:
    """Undo an integration's applied writes after a later one failed, newest first; when all are
    undone the record goes too, else it stays for the next start or sync to finish."""
    assert runtime.live is not None
    for op_id, plan in reversed(list(zip(op_ids, applied, strict=True))):
        undo = Plan(
            op="op.undo",
            changes=[Change(path=c.path, before=c.after, after=c.before) for c in plan.effective()],
            summary=f"undid {op_id}: a sync's integration failed",
            log_type="RETHINK",
        )
        try:
            await anyio.to_thread.run_sync(
                apply_plan, runtime.root, undo, new_op_id(dt.datetime.now().astimezone(), runtime.root), "sync", op_id
            )
        except (VaultError, OSError) as exc:
            log.warning("a failed sync's writes are finished later", vault=runtime.entry.id, op_id=op_id, error=str(exc))
            return
        finally:
            await runtime.live.refresh({c.path for c in plan.effective()})
    await anyio.to_thread.run_sync(integration.clear, runtime.root)


def _merge_message(short: str, inc: incoming.Incoming, by: str) -> tuple[str, list[str]]:
    """A merge commit's message before its op-id trailers, and the trailers after them."""
    lines = [f"sync: merge origin/{short} ({inc.count} file(s) from origin)", ""]
    if inc.conflicts:
        lines += ["Changed on both sides (origin's version kept, this machine's in the first parent):"]
        lines += [f"  {c.rel}" for c in inc.conflicts[:50]] + [""]
    return "\n".join(lines) + "\n", [f"{TRAILER_CHANNEL}: sync", f"Vaultd-Synced-By: {by}"]


async def sync_vault(runtime: VaultRuntime, *, dry_run: bool = False, by: str = "cli") -> SyncResult:
    """Sync one vault with its remote (see the module's steps).

    Raises:
        PolicyRefused: POLICY, the vault is not its repository's root, or staged changes are in its
            paths (R01).
        Conflict: CONFLICT, origin kept moving, or does not hold what was pushed; nothing was
            overwritten.
    """
    await runtime.wait_ready()
    entry = runtime.entry
    keeper = runtime.git
    repo = await anyio.to_thread.run_sync(keeper.repo)
    if not repo.is_root:
        raise PolicyRefused(f"vault {entry.id!r} is a folder inside a repository; only a vault that is its repository's root syncs")
    allow = await anyio.to_thread.run_sync(remote.check, repo, entry.remote, entry.id)
    branch = await anyio.to_thread.run_sync(checked_branch, repo, entry.id)
    short = _short(branch)
    for _attempt in range(MAX_ATTEMPTS):
        if not dry_run:
            async with runtime.writer:
                await runtime.owned_live().barrier()
                finished = await anyio.to_thread.run_sync(keeper.finish_integration)
                if finished:
                    await runtime.owned_live().refresh(set(finished))
                try:
                    await anyio.to_thread.run_sync(keeper.commit_local)
                except StagedContent as exc:
                    message = f"you have staged changes in the vault's paths ({describe(exc.paths)}); commit or unstage them, then sync"
                    raise PolicyRefused(
                        f"vault {entry.id!r} does not sync: {message}", issues=[Issue(code=IssueCode.R01, message=message)]
                    ) from None
        fetched = await anyio.to_thread.run_sync(_fetch, repo, short, allow)
        await anyio.to_thread.run_sync(faults.point, "sync-after-fetch")
        await anyio.to_thread.run_sync(_check_history, repo, short, fetched, entry.id)
        result = await _integrate_fetched(runtime, repo, branch, short, fetched, dry_run=dry_run, by=by)
        if dry_run or result.outgoing == 0:
            if not dry_run and fetched is not None and result.head == fetched:
                await anyio.to_thread.run_sync(_remember, repo, short, fetched)
            return result
        allow = await anyio.to_thread.run_sync(remote.check, repo, entry.remote, entry.id)  # again, right before the push
        assert result.head is not None
        if not await anyio.to_thread.run_sync(_push, repo, result.head, short, allow):
            log.info("origin moved during the sync; fetching again", vault=entry.id)
            await anyio.sleep(random.uniform(0.05, 0.5))  # two machines retrying in step would collide again
            continue
        there = await anyio.to_thread.run_sync(_remote_head, repo, short, allow)
        if there != result.head:
            raise Conflict(f"vault {entry.id!r}: the push was accepted but origin's {short} is {there}, not {result.head}; sync again")
        await anyio.to_thread.run_sync(_remember, repo, short, result.head)
        result.pushed, result.remote_head = True, there
        result.message = _summary(result)
        log.info(
            "synced", vault=entry.id, head=result.head, incoming=result.incoming, outgoing=result.outgoing, conflicts=len(result.conflicts)
        )
        return result
    raise Conflict(f"vault {entry.id!r}: origin kept moving during {MAX_ATTEMPTS} sync rounds; nothing was overwritten, sync again")


def _remember(repo: Repo, short: str, commit: str) -> None:
    command.run(repo.top, "update-ref", "-m", "vaultd: synced", SYNCED_PREFIX + short, commit)


def _summary(r: SyncResult) -> str:
    parts = []
    if r.incoming:
        parts.append(f"integrated {r.incoming} file(s) from origin")
    if r.outgoing:
        parts.append(f"{'pushed' if r.pushed else 'would push'} {r.outgoing} commit(s)")
    if r.conflicts:
        parts.append(f"{len(r.conflicts)} conflict(s): see 'vaultctl proposals'")
    if r.untouched:
        parts.append(f"{len(r.untouched)} file(s) vaultd does not write changed on origin: 'git checkout HEAD -- PATH' takes them")
    return "; ".join(parts) or "up to date: nothing to integrate or push"


async def _integrate_fetched(
    runtime: VaultRuntime, repo: Repo, branch: str, short: str, fetched: str | None, *, dry_run: bool, by: str
) -> SyncResult:
    """Step 5 of the module's steps: integrate what was fetched as operations, then move the branch.

    Raises:
        PolicyRefused: POLICY, origin's branch shares no history with the local one.
    """
    entry = runtime.entry
    keeper = runtime.git
    work = runtime.root / GIT_STATE_DIR
    labels = Labels()
    async with runtime.writer:
        await runtime.owned_live().barrier()
        local = await anyio.to_thread.run_sync(resolve_rev, repo, branch)
        inc = incoming.Incoming()
        base: str | None = None
        moves = False  #: origin has commits the local branch lacks
        if fetched is not None and fetched != local:
            if local is None:
                base, moves = EMPTY_TREE, True
            elif not await anyio.to_thread.run_sync(is_ancestor, repo, fetched, local):
                base = await anyio.to_thread.run_sync(merge_base, repo, local, fetched)
                if base is None:
                    raise PolicyRefused(f"vault {entry.id!r}: origin's {short} shares no history with the local branch; nothing was synced")
                moves = True
        if moves and base is not None and fetched is not None:
            work.mkdir(mode=0o700, parents=True, exist_ok=True)
            since, tip = base, fetched
            await anyio.to_thread.run_sync(
                lambda: verify.check(repo, runtime.root, since, tip, local=local, pii=entry.pii, kind=entry.kind)
            )
            inc = await anyio.to_thread.run_sync(
                lambda: incoming.plan(repo, runtime.root, since, tip, local=local, log_rel=oplog.log_name(entry), labels=labels, work=work)
            )
        if dry_run:
            outgoing = await anyio.to_thread.run_sync(_count, repo, f"{fetched}..{local}" if fetched and local else (local or "HEAD"))
            result = SyncResult(
                vault=entry.id,
                outcome=SyncOutcome.PREVIEW,
                branch=short,
                head=local,
                remote_head=fetched,
                incoming=inc.count,
                outgoing=outgoing if local else 0,
                pushed=False,
                conflicts=[SyncConflict(path=c.rel, proposal=None, kept=c.kept) for c in inc.conflicts[:MAX_SYNC_LISTED]],
                message="",
            )
            result.message = _summary(result)
            return result
        op_ids: list[str] = []
        receipts: list[ChangeReceipt] = []
        head = local
        conflicts: list[SyncConflict] = []
        if moves and fetched is not None:
            recorder, staging = await anyio.to_thread.run_sync(keeper.tools)
            merge = not (local is None or base == local)
            intent = _intent(branch, local, fetched, merge, inc, short, by)
            await anyio.to_thread.run_sync(integration.save, runtime.root, intent)
            if inc.writes:
                op_ids, receipts = await _integrate(runtime, inc, short)
            await anyio.to_thread.run_sync(faults.point, "sync-after-integrate")
            done = await anyio.to_thread.run_sync(integration.finish, runtime.root, recorder, staging, entry.id, intent, op_ids)
            head = done.head
            conflicts = [SyncConflict(path=c.rel, proposal=done.proposals.get(c.rel), kept=c.kept) for c in inc.conflicts[:MAX_SYNC_LISTED]]
    outgoing = await anyio.to_thread.run_sync(_count, repo, f"{fetched}..{head}" if fetched else (head or "HEAD")) if head else 0
    result = SyncResult(
        vault=entry.id,
        outcome=SyncOutcome.SYNCED if (inc.writes or outgoing or head != local) else SyncOutcome.UP_TO_DATE,
        branch=short,
        head=head,
        remote_head=fetched,
        incoming=inc.count,
        outgoing=outgoing,
        pushed=False,
        changes=receipts[:MAX_SYNC_LISTED],
        op_ids=op_ids,
        conflicts=conflicts,
        untouched=inc.untouched[:MAX_SYNC_LISTED],
        message="",
    )
    result.message = _summary(result)
    return result


async def background(runtime: VaultRuntime) -> None:
    """Sync on the vault's ``sync_interval_s`` (opt-in), until the vault is released. A failure is
    logged and tried again next interval; it never stops the daemon."""
    keeper = runtime.git
    while not keeper.stopped:
        interval = runtime.entry.sync_interval_s
        await keeper.sleep(interval or IDLE_CHECK_S)
        if keeper.stopped or not runtime.entry.sync_interval_s:
            continue
        try:
            await sync_vault(runtime, by="background")
        except (VaultError, OSError) as exc:
            log.warning("background sync failed", vault=runtime.entry.id, error=getattr(exc, "message", None) or str(exc))
