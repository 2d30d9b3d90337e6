"""A sync's integration of origin's commits: one operation, finished whole or recovered whole.

Integrating takes several steps: origin's changes are written as journaled operations (one or
more, within the engine's bounds), the branch moves (a fast-forward, or a merge commit of both
heads), the person's index entries follow the branch for exactly the paths that changed, and each
note that did not merge is kept as a proposal. A crash between two steps must leave nothing
half-done: no note holding origin's text while the person's version is kept nowhere a person
looks, no branch moved while the person's index still holds the old blobs (``git status`` would
show origin's changes as staged reversals, and the person's next ``git commit`` would make them).

So before the first write the whole integration is recorded durably in ``.vaultd/git/integration``
(sealed with the journal key, as journals and proposals are, since a vault can arrive with a
``.vaultd/`` of its own): the branch, its head and origin's, the merge commit's entries and
message, every write (blob ids before and after), and every conflict with the id its proposal
gets. The steps then run from that record, each one idempotent, and the record is removed last.
A record still there at the vault's next take (or before the next sync) is finished: writes not
yet applied are applied where the file still holds what the integration found (a file changed
since keeps the change, and is logged); the branch moves if it is still where the integration
found it; the index follows from the recorded old head to the recorded new one; missing proposals
are stored. Recovery never guesses from a commit's author or message: the record names the commits.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import msgspec
import structlog

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.methods.git import ResolveParams
from protocol.methods.proposals import ProposalDetail, ProposalState
from vaultd import faults
from vaultd.errors import Conflict, NotFound, PolicyRefused, VaultError
from vaultd.fsio import ReadRefused, fsync_dir, read_regular, write_atomic
from vaultd.gate.diffs import file_diff
from vaultd.gate.store import new_id, store_for
from vaultd.git import objects
from vaultd.git.checkpoint import TRAILER_OP
from vaultd.git.merge import Labels, merge_note
from vaultd.git.record import GIT_STATE_DIR, INTEGRATION_RECORD
from vaultd.git.repo import resolve
from vaultd.git.staging import follow
from vaultd.txn import journal, opids, seal
from vaultd.txn.engine import apply_plan, read_current
from vaultd.txn.plan import MAX_OP_BYTES, MAX_OP_FILES, Change, Plan

if TYPE_CHECKING:
    from pathlib import Path

    from vaultd.git.record import Recorder
    from vaultd.git.repo import Repo
    from vaultd.git.staging import Entry, StagingArea

log = structlog.get_logger("vaultd.git")

RECORD = INTEGRATION_RECORD  #: vault-relative
MAX_RECORD_BYTES = 64 * 1024 * 1024  #: a sync's record: a few hundred bytes per incoming path
_DOMAIN = b"vaultd-integration\0"
OP = "vault.sync"
PROPOSER = "sync:origin"
RESOLVE_OP = "git.resolve"  #: the operation a conflict's proposal applies (:mod:`vaultd.ops.git.resolve`)


class Write(msgspec.Struct, array_like=True):
    path: str  #: vault-relative
    before: str | None  #: blob id of the bytes the integration found on disk (None: absent)
    after: str | None  #: blob id it writes, kept in the object store (None: removed)


class Pending(msgspec.Struct, kw_only=True):
    """A note that did not merge, and the id of the proposal that keeps both versions."""

    id: str
    params: ResolveParams
    kept: str  #: "origin" or "this machine"


class Intent(msgspec.Struct, kw_only=True):
    branch: str
    old: str | None  #: the branch's head when the integration was planned (None: unborn)
    fetched: str  #: origin's head
    merge: bool  #: a merge commit of both heads; False: a fast-forward to ``fetched``
    message: str  #: the merge commit's message before its op-id trailers
    trailers: list[str]  #: the trailers after them
    tree: dict[str, tuple[str, str] | None]  #: repository path -> the merge commit's entry
    writes: list[Write]
    proposals: list[Pending]
    #: (parent, commit) the branch moves to, recorded before it moves (a merge commit's id is known
    #: only once the commit object is written; a fast-forward's from the start).
    moved_to: tuple[str | None, str] | None = None


_decoder = msgspec.json.Decoder(Intent)


# -- the record ---------------------------------------------------------------------------------


def _path(root: Path) -> Path:
    return root / RECORD


def save(root: Path, intent: Intent) -> None:
    """Write the record durably (its folder too), replacing any earlier state of it."""
    folder = _path(root).parent
    if not folder.is_dir():
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fsync_dir(folder.parent)
    body = msgspec.json.encode(intent)
    write_atomic(_path(root), seal.seal(seal.installed_key(), _DOMAIN + body) + b"\n" + body, mode=0o600)


def load(root: Path) -> Intent | None:
    """The record of an unfinished integration, or None. One whose seal fails (not this daemon's,
    or changed since) is never acted on: it is logged and left where it is."""
    try:
        data, _ = read_regular(_path(root), MAX_RECORD_BYTES)
    except FileNotFoundError:
        return None
    except (ReadRefused, OSError) as exc:
        log.warning("an integration record cannot be read; it is left untouched", path=RECORD, error=str(exc))
        return None
    mac, sep, body = data.partition(b"\n")
    if not sep or not seal.verify(seal.installed_key(), _DOMAIN + body, mac):
        log.warning("an integration record's seal does not match; it is left untouched", path=RECORD)
        return None
    try:
        return _decoder.decode(body)
    except msgspec.DecodeError:
        log.warning("an integration record is sealed but unreadable by this version; it is left untouched", path=RECORD)
        return None


def waiting(root: Path) -> bool:
    """Whether an integration's record is there (a stat, no read)."""
    return os.path.lexists(_path(root))


def clear(root: Path) -> None:
    try:
        os.unlink(_path(root))
    except FileNotFoundError:
        return
    fsync_dir(_path(root).parent)


# -- the steps ------------------------------------------------------------------------------------


def batches(changes: list[Change]) -> list[list[Change]]:
    """The writes as engine plans within the engine's bounds (files and bytes per operation)."""
    out: list[list[Change]] = [[]]
    size = 0
    for change in sorted(changes, key=lambda c: c.path):
        grown = len(change.after or b"")
        if out[-1] and (len(out[-1]) >= MAX_OP_FILES or size + grown > MAX_OP_BYTES):
            out.append([])
            size = 0
        out[-1].append(change)
        size += grown
    return [b for b in out if b]


def next_op_id(root: Path) -> str:
    return opids.next_op_id(root, dt.datetime.now().astimezone(), lambda: journal.newest_op_id(root))


def apply_remaining(root: Path, repo: Repo, intent: Intent) -> tuple[list[str], list[str]]:
    """Apply the writes a crash left unapplied (worker thread): each where the file still holds
    what the integration found; a file changed since keeps the change. Returns (op ids, paths)."""
    todo: list[tuple[Write, bytes | None]] = []
    for w in intent.writes:
        try:
            current = read_current(root, w.path, MAX_OP_BYTES)
        except VaultError as exc:  # a symlink or a folder put in its way, or a file grown past the bound
            log.warning("a file a sync planned to write is no longer one it writes; it is left as it is", path=w.path, error=exc.message)
            continue
        now = None if current is None else objects.blob_id(current)
        if now == w.after:
            continue
        if now == w.before:
            todo.append((w, current))
        else:
            log.warning("a file changed after a sync planned it; the change stays and origin's version is in the branch", path=w.path)
    blobs = objects.read_blobs(repo, [w.after for w, _ in todo if w.after is not None], MAX_OP_BYTES)
    changes = [Change(path=w.path, before=current, after=None if w.after is None else blobs[w.after]) for w, current in todo]
    op_ids: list[str] = []
    for batch in batches(changes):
        plan = Plan(op=OP, changes=batch, summary=f"integrated {len(batch)} file(s) from origin (finished after a stop)", log_type="SYNC")
        op_id = next_op_id(root)
        apply_plan(root, plan, op_id, "sync")
        op_ids.append(op_id)
    return op_ids, [c.path for c in changes]


@dataclass(slots=True)
class Finished:
    head: str | None  #: the branch's head after the integration
    proposals: dict[str, str] = field(default_factory=dict)  #: note path -> the proposal keeping it


def message_of(intent: Intent, op_ids: list[str]) -> str:
    return intent.message + "".join(f"{TRAILER_OP}: {op}\n" for op in op_ids) + "".join(t + "\n" for t in intent.trailers)


def finish(root: Path, recorder: Recorder, staging: StagingArea, vault_id: str, intent: Intent, op_ids: list[str]) -> Finished:
    """The steps after the writes (worker thread; the writer is held): move the branch, make the
    person's index follow it, keep each conflict as a proposal, remove the record."""
    repo = recorder.repo
    head = resolve(repo, intent.branch)
    moved = intent.moved_to
    target: tuple[str | None, str] | None = None
    if moved is not None and head == moved[1]:
        target = moved  # moved before a stop: only what follows is left
    elif head == intent.old:
        target = _move(root, recorder, intent, op_ids)
        faults.point("sync-after-update-ref")
    else:
        log.warning(
            "the branch moved after a sync planned its integration; it stays where it is", vault=vault_id, branch=intent.branch, head=head
        )
    if target is not None:
        follow(staging, target[0], target[1])
        faults.point("sync-after-follow")
    done = Finished(head=target[1] if target is not None else head)
    done.proposals = keep_proposals(root, repo, vault_id, intent)
    clear(root)
    return done


def _move(root: Path, recorder: Recorder, intent: Intent, op_ids: list[str]) -> tuple[str | None, str]:
    """Move the branch to what the sync integrated, only from where it was when the sync began.

    Raises:
        Conflict: CONFLICT, the branch moved meanwhile; nothing was overwritten.
    """
    if not intent.merge:
        if not recorder.move_branch(intent.branch, intent.fetched, intent.old, f"sync: fast-forward to origin {intent.fetched[:12]}"):
            raise Conflict("the branch moved during the sync; nothing was overwritten, sync again")
        recorder.mirror(intent.branch, intent.fetched)
        return intent.old, intent.fetched

    def record(commit: str, parent: str | None) -> None:
        intent.moved_to = (parent, commit)
        save(root, intent)

    tree: dict[str, Entry] = dict(intent.tree)
    made = recorder.commit(
        tree, message_of(intent, op_ids), reason="sync merge", extra_parents=(intent.fetched,), allow_empty=True, on_commit=record
    )
    assert made is not None
    return made.parent, made.commit


def keep_proposals(root: Path, repo: Repo, vault_id: str, intent: Intent) -> dict[str, str]:
    """Store each conflict's proposal that is not stored yet (a person may have decided it already)."""
    store = store_for(root)
    work = root / GIT_STATE_DIR
    kept: dict[str, str] = {}
    for pending in intent.proposals:
        path = pending.params.path
        try:
            store.get(pending.id)
        except NotFound:
            pass
        except PolicyRefused:
            continue  # a file of that name that is not a sealed proposal: left alone, doctor reports it
        else:
            kept[path] = pending.id
            continue
        try:
            work.mkdir(mode=0o700, parents=True, exist_ok=True)
            store.add(proposal(vault_id, repo, work, pending.params, read_current(root, path), proposal_id=pending.id))
        except (VaultError, OSError) as exc:
            log.error("a sync conflict could not be kept as a proposal", vault=vault_id, path=path, error=getattr(exc, "message", str(exc)))
            continue
        kept[path] = pending.id
    return kept


def resume(root: Path, recorder: Recorder, staging: StagingArea, vault_id: str) -> list[str] | None:
    """Finish an integration a stop interrupted (worker thread; at the vault's take, or under the
    writer before a sync): the paths it wrote now, or None when there was none to finish."""
    intent = load(root)
    if intent is None:
        return None
    log.info("finishing a sync's integration a stop interrupted", vault=vault_id, branch=intent.branch, origin=intent.fetched)
    op_ids, written = apply_remaining(root, recorder.repo, intent)
    finish(root, recorder, staging, vault_id, intent, op_ids)
    return written


# -- a conflict's proposal -----------------------------------------------------------------------


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


def proposal(
    vault_id: str, repo: Repo, work: Path, params: ResolveParams, current: bytes | None, *, proposal_id: str | None = None
) -> ProposalDetail:
    """The conflict as a pending proposal: what applying it would write over the vault's file now."""
    after = resolution(repo, work, params)
    now = time.time()
    return ProposalDetail(
        id=proposal_id or new_id(now),
        vault=vault_id,
        op=RESOLVE_OP,
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
