"""Applying a plan as one transaction, rolling back, and recovering after a crash.

Order on disk (each step durable before the next):

1. the journal (originals and manifest), renamed into place;
2. every target re-checked against the hash it had when planned (CONFLICT, nothing written);
3. each target: temp file in its own folder, fsync, rename over the target, folder fsync
   (a removal: unlink, folder fsync);
4. the ``committed`` marker.

A failure before 4 rolls back in process; a crash before 4 is rolled back by :func:`recover`
before the vault is served again. Rolling back restores only what this operation wrote: a file
someone else changed meanwhile is left alone and reported, never overwritten.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from vaultd.errors import Conflict, Internal, InvalidParams, LimitExceeded, Unavailable, VaultError
from vaultd.fsio import fsync_dir, is_temp_name, unlink, write_atomic
from vaultd.policy import check_inside_vault
from vaultd.txn import faults, journal, seal
from vaultd.txn.journal import (
    Entry,
    Manifest,
    is_committed,
    mark_committed,
    original_bytes,
    read_manifest,
    remove_journal,
    write_journal,
)
from vaultd.txn.plan import MAX_NOTE_BYTES, MAX_OP_BYTES, MAX_OP_FILES, Plan, sha256

log = structlog.get_logger("vaultd.txn")


class RollbackFailed(Internal):
    """An operation failed and its rollback failed too: the vault holds a half-done change until
    recovery at the next start, so it must not be served meanwhile."""


def read_current(root: Path, rel: str, limit: int = MAX_NOTE_BYTES) -> bytes | None:
    """A target's bytes now (None when absent), never through a symlink, bounded."""
    if "\x00" in rel:
        raise InvalidParams("a path may not contain a NUL byte")
    try:
        fd = os.open(root / rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Conflict(f"{rel} is a symbolic link; vaultd never writes through links") from exc
        if exc.errno == errno.ENOTDIR:
            return None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Conflict(f"{rel} is not a regular file")
        if st.st_size > limit:
            raise LimitExceeded(f"{rel} is {st.st_size} bytes, over the {limit}-byte limit")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(limit + 1)
    finally:
        os.close(fd)


def check_bounds(plan: Plan) -> None:
    changes = plan.effective()
    if len(changes) > MAX_OP_FILES:
        raise LimitExceeded(f"the operation would write {len(changes)} files; the limit is {MAX_OP_FILES}")
    total = sum(len(c.after or b"") for c in changes)
    if total > MAX_OP_BYTES:
        raise LimitExceeded(f"the operation would write {total} bytes; the limit is {MAX_OP_BYTES}")
    for c in changes:
        if c.after is not None and len(c.after) > MAX_NOTE_BYTES and c.path.lower().endswith(".md"):
            raise LimitExceeded(f"{c.path} would be {len(c.after)} bytes; a note may be {MAX_NOTE_BYTES}")


def _make_parents(root: Path, rel: str) -> None:
    """Create missing folders one at a time, syncing each parent so the new name is durable."""
    parts = rel.split("/")[:-1]
    current = root
    for part in parts:
        nxt = current / part
        try:
            nxt.mkdir(mode=0o755)
        except FileExistsError:
            if nxt.is_symlink() or not nxt.is_dir():
                raise Conflict(f"{nxt.relative_to(root)} is not a folder") from None
        else:
            fsync_dir(current)
        current = nxt


def _verify(root: Path, plan: Plan) -> None:
    changed = [c.path for c in plan.effective() if sha256(read_current(root, c.path)) != c.before_sha]
    if changed:
        raise Conflict(
            f"changed since it was read: {', '.join(changed)}; read again, then retry",
            candidates=changed,
        )


def _write(root: Path, rel: str, data: bytes | None) -> None:
    target = root / rel
    if data is None:
        try:
            unlink(target)
        except FileNotFoundError:
            pass
        fsync_dir(target.parent)
        return
    _make_parents(root, rel)
    mode = 0o644
    try:
        mode = stat.S_IMODE(target.lstat().st_mode)
    except FileNotFoundError:
        pass
    write_atomic(target, data, mode)


@dataclass
class RollbackReport:
    op_id: str
    restored: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)  #: changed by someone else; not touched


def _roll_back(root: Path, folder: Path, manifest: Manifest) -> RollbackReport:
    report = RollbackReport(manifest.op_id)
    first = True
    for entry in reversed(manifest.entries):
        current = sha256(read_current(root, entry.path))
        if current == entry.before_sha:
            continue  # never touched, or already restored
        if current == entry.after_sha or (current is None and entry.after_sha is None):
            _write(root, entry.path, original_bytes(folder, entry))
            report.restored.append(entry.path)
            if first:
                faults.point("during-recovery")
                first = False
        else:
            report.left.append(entry.path)
    remove_journal(folder)
    return report


def apply_plan(root: Path, plan: Plan, op_id: str, channel: str, undoes: str | None = None) -> None:
    """Apply ``plan`` durably, or leave the vault as it was and raise."""
    check_bounds(plan)
    changes = plan.effective()
    _verify(root, plan)
    try:
        folder = write_journal(root, op_id, plan, channel, undoes)
    except OSError as exc:
        raise Unavailable(f"the journal could not be written ({exc.strerror or exc}); nothing was changed") from exc
    faults.point("after-journal")
    try:
        _verify(root, plan)  # again: the journal write took time an editor may have used
        for change in changes:
            _write(root, change.path, change.after)
            faults.point("after-rename")
        faults.point("before-commit")
        mark_committed(folder)
    except BaseException as exc:
        (folder / "committed").unlink(missing_ok=True)  # a marker whose folder fsync failed is no commit
        try:
            report = _roll_back(root, folder, read_manifest(folder))
        except Exception:
            log.exception("rollback failed; the journal is kept for recovery", op_id=op_id)
            raise RollbackFailed(f"operation {op_id} failed and could not be rolled back; "
                                 "restart the daemon to recover it") from exc
        log.warning("operation rolled back", op_id=op_id, restored=len(report.restored), left=len(report.left))
        if isinstance(exc, VaultError):
            raise
        if isinstance(exc, OSError):
            raise Unavailable(f"the write failed ({exc.strerror or exc}); nothing was changed") from exc
        raise
    faults.point("after-commit")


@dataclass
class RefusedJournal:
    name: str  #: vault-relative, e.g. ``.vaultd/journal/<name>``
    reason: str


@dataclass
class RecoveryReport:
    rolled_back: list[RollbackReport] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)
    discarded: list[str] = field(default_factory=list)  #: journals that never became whole, or were being deleted
    refused: list[RefusedJournal] = field(default_factory=list)  #: not this daemon's: left exactly as found
    remarked: list[str] = field(default_factory=list)  #: finished journals whose lost commit marker was restored
    temp_files: int = 0


def recover(root: Path, key: bytes | None = None) -> RecoveryReport:
    """Bring the vault to a state with no operation half-applied. Idempotent.

    Only journals this daemon wrote are acted on (``key`` seals them; default: the installed
    key): a journal whose seal, folder, paths or originals do not check is reported in
    ``refused`` and left untouched. Of the sealed journals without a commit marker, one older
    than a committed journal is finished, never rolled back: operations apply one at a time and
    each commits (or is rolled back and removed) before the next journal is written, so a newer
    committed journal proves this one was committed and acknowledged and only its marker was
    lost; the marker is written again. The newest uncommitted journal is the operation a crash
    interrupted: its marker is durable before any receipt is sent, so no caller was told it
    applied, and it is rolled back (even when all its files were already written).
    """
    key = seal.installed_key() if key is None else key
    report = RecoveryReport()
    problem = journal.runtime_issue(root)
    if problem is not None:
        report.refused.append(RefusedJournal(problem.split(" ", 1)[0], problem))
        return report
    listing = journal.scan(root, key)
    for folder in listing.leftovers:
        journal.delete_leftover(folder)
        report.discarded.append(journal.own_transient(key, folder.name) or folder.name)
    for folder, reason in listing.foreign:
        report.refused.append(RefusedJournal(f"{journal.JOURNAL}/{folder.name}", reason))
    sealed: list[tuple[Path, journal.Manifest]] = []
    for folder in listing.live:
        try:
            manifest = journal.open_journal(folder, key)
        except journal.UntrustedJournal as exc:
            report.refused.append(RefusedJournal(f"{journal.JOURNAL}/{folder.name}", exc.reason))
            continue
        sealed.append((folder, manifest))
    committed = [journal.is_committed(folder) for folder, _ in sealed]
    newest_committed = max((i for i, c in enumerate(committed) if c), default=-1)
    folders_touched: set[Path] = set()
    for i, (folder, manifest) in enumerate(sealed):
        if committed[i] or i < newest_committed:
            if not committed[i]:
                try:
                    mark_committed(folder)
                except OSError as exc:  # e.g. a 'committed' that is a link or a folder: not ours
                    report.refused.append(RefusedJournal(f"{journal.JOURNAL}/{folder.name}",
                                                         f"its commit marker cannot be written ({exc.strerror})"))
                    continue
                report.remarked.append(manifest.op_id)
            report.finished.append(manifest.op_id)
        else:
            try:
                _check_rollback(root, folder, manifest)
            except journal.UntrustedJournal as exc:
                report.refused.append(RefusedJournal(f"{journal.JOURNAL}/{folder.name}", exc.reason))
                continue
            report.rolled_back.append(_roll_back(root, folder, manifest))
        folders_touched.update((root / e.path).parent for e in manifest.entries
                               if not check_inside_vault(root, e.path))
    for parent in folders_touched:
        report.temp_files += _remove_temp_files(parent)
    return report


def _check_rollback(root: Path, folder: Path, manifest: Manifest) -> None:
    """Everything a rollback will read or write checks, before it writes anything."""
    journal.check_originals(folder, manifest)
    for entry in manifest.entries:
        issues = check_inside_vault(root, entry.path)
        if issues:
            raise journal.UntrustedJournal(f"{entry.path}: {issues[0].message}")


def _remove_temp_files(folder: Path) -> int:
    removed = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        if is_temp_name(name):
            (folder / name).unlink(missing_ok=True)
            removed += 1
    if removed:
        fsync_dir(folder)
    return removed


def undo_plan(root: Path, folder: Path) -> tuple[Plan, Manifest]:
    """The plan that reverses a committed operation, if every file is still as it left it."""
    manifest = read_manifest(folder)
    changes = []
    moved = []
    from vaultd.txn.plan import Change

    for entry in manifest.entries:
        current = read_current(root, entry.path)
        if sha256(current) != entry.after_sha:
            moved.append(entry.path)
            continue
        changes.append(Change(path=entry.path, before=current, after=original_bytes(folder, entry)))
    if moved:
        raise Conflict(f"cannot undo {manifest.op_id}: changed since: {', '.join(moved)}", candidates=moved)
    return Plan(op="op.undo", changes=changes, summary=f"undo {manifest.op_id} ({manifest.op})",
                log_type="RETHINK"), manifest


def committed_entries(folder: Path) -> list[Entry]:
    return read_manifest(folder).entries
