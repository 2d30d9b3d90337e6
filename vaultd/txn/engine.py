"""Applying a plan as one transaction, rolling back, and recovering after a crash.

Order on disk (each step durable before the next):

1. the journal (originals, their modes, and the manifest), renamed into place;
2. every target re-checked against the hash it had when planned (CONFLICT, nothing written);
3. each target: temp file in its own folder, fsync, the target re-checked once more, rename over
   the target, folder fsync (a removal: re-check, unlink, folder fsync);
4. the ``committed`` marker.

Every target is reached through :mod:`vaultd.txn.dirfd`: the vault root is opened once per
operation and each folder below it without following symlinks, so a folder swapped for a symlink
mid-operation is refused, never written through. The re-check right before each rename catches
an editor's save made while earlier targets were written; what remains is the span between that
read and the rename (microseconds), which no lock-free editor can be kept out of.

A failure before 4 rolls back in process; a crash before 4 is rolled back by :func:`recover`
before the vault is served again. Rolling back restores only what this operation wrote: a file
someone else changed meanwhile is left alone and reported, never overwritten.

Modes: a rewritten file keeps its own; a created one gets :attr:`Change.mode` (a move's or a
trash's source mode) or the user's new-file mode (:mod:`vaultd.content_mode`).
"""

from __future__ import annotations

import enum
import os
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from vaultd import faults
from vaultd.content_mode import new_file_mode
from vaultd.errors import Conflict, Internal, LimitExceeded, Unavailable, VaultError
from vaultd.fsio import is_temp_name
from vaultd.policy import check_inside_vault
from vaultd.txn import journal, opids, seal
from vaultd.txn.dirfd import Current, Folder, VaultRoot
from vaultd.txn.journal import (
    Entry,
    JournalRef,
    Manifest,
    mark_committed,
    open_journal,
    original_bytes,
    remove_journal,
    write_journal,
)
from vaultd.txn.plan import MAX_NOTE_BYTES, Change, Plan, over_bounds, over_file_bound, read_limit, sha256
from vaultd.vault.layout import JOURNAL_DIR

if TYPE_CHECKING:
    from collections.abc import Sequence

log = structlog.get_logger("vaultd.txn")


class RollbackFailed(Internal):
    """An operation failed and its rollback failed too: the vault holds a half-done change until
    recovery at the next start, so it must not be served meanwhile."""


def read_current(root: Path, rel: str, limit: int = MAX_NOTE_BYTES) -> bytes | None:
    """A target's bytes now (None when absent), never through a symlink, bounded."""
    current = read_state(root, rel, limit)
    return None if current is None else current.data


def read_state(root: Path, rel: str, limit: int = MAX_NOTE_BYTES) -> Current | None:
    """A target's bytes and permission bits now (None when absent), as :func:`read_current`."""
    with VaultRoot(root) as vroot:
        return vroot.read_file(rel, limit)


def check_bounds(plan: Plan) -> None:
    """Refuse (LIMIT) a plan over the operation's bounds: files, bytes, and each note's size.

    Raises:
        LimitExceeded: LIMIT, too many files or bytes, or a note or file over its own bound.
    """
    changes = plan.effective()
    why = over_bounds(len(changes), sum(len(c.after or b"") for c in changes))
    if why is not None:
        raise LimitExceeded(why)
    for c in changes:
        too_big = None if c.after is None else over_file_bound(c.path, len(c.after))
        if too_big is not None:
            raise LimitExceeded(too_big)


def _verify(vroot: VaultRoot, plan: Plan) -> None:
    """Every target as planned, recording each one's mode for the journal.

    Raises:
        Conflict: CONFLICT, a target changed since it was read; ``candidates`` names them.
    """
    changed = []
    for change in plan.effective():
        current = vroot.read_file(change.path, read_limit(change.path))
        if sha256(current.data if current else None) != change.before_sha:
            changed.append(change.path)
        elif current is not None:
            change.before_mode = current.mode
    if changed:
        raise Conflict(
            f"changed since it was read: {', '.join(changed)}; read again, then retry",
            candidates=changed,
        )


def _recheck(folder: Folder, name: str, change: Change) -> Current | None:
    """The target right before its own rename or unlink; CONFLICT naming it if it moved on.

    Raises:
        Conflict: CONFLICT, the target changed while the operation was applied.
    """
    try:
        current = folder.read(name, read_limit(change.path))
    except LimitExceeded:
        current, grown = None, True
    else:
        grown = False
    if grown or sha256(current.data if current else None) != change.before_sha:
        raise Conflict(
            f"{change.path} changed while this operation was being applied (an editor, git or "
            "another program saved it); nothing was changed: read it again, then retry",
            candidates=[change.path],
        )
    return current


def _mode_for(change: Change) -> int:
    if change.before is not None and change.before_mode is not None:
        return change.before_mode
    return change.mode if change.mode is not None else new_file_mode()


def _put(vroot: VaultRoot, change: Change) -> None:
    """Write or remove one target through its folder's descriptor, re-checked just before.

    Raises:
        Conflict: CONFLICT, the target's folder vanished meanwhile.
    """
    try:
        folder, name = vroot.parent(change.path, create=change.after is not None)
    except FileNotFoundError:
        raise Conflict(
            f"the folder of {change.path} vanished while this operation was being applied; read again, then retry", candidates=[change.path]
        ) from None
    with folder:
        if change.after is None:
            _recheck(folder, name, change)
            folder.unlink(name)
            folder.sync()
            return
        mode = _mode_for(change)
        temp = folder.write_temp(change.after, mode)
        try:
            current = _recheck(folder, name, change)
            if current is not None and current.mode != mode:
                temp.set_mode(current.mode)  # chmod-ed meanwhile: the file keeps the mode it has
            temp.rename_over(name)
        except BaseException:
            temp.discard()
            raise
        folder.sync()


@dataclass
class RollbackReport:
    op_id: str
    restored: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)  #: changed by someone else; not touched


class Restore(enum.Enum):
    """What rolling back did to one journaled target."""

    UNTOUCHED = "untouched"  #: as it was before the operation (never written, or restored already)
    RESTORED = "restored"  #: this operation's bytes replaced by the original
    LEFT = "left"  #: someone else changed it (or put a symlink on its way): not touched


def _restore(vroot: VaultRoot, folder: Path, entry: Entry) -> Restore:
    try:
        current = vroot.read_file(entry.path, read_limit(entry.path))
    except (Conflict, LimitExceeded):
        return Restore.LEFT
    current_sha = sha256(current.data if current else None)
    if current_sha == entry.before_sha:
        return Restore.UNTOUCHED
    if current_sha != entry.after_sha:
        return Restore.LEFT
    undo = Change(
        path=entry.path,
        before=current.data if current else None,
        after=original_bytes(folder, entry),
        mode=entry.mode,
        before_mode=current.mode if current else None,
    )
    try:
        _put(vroot, undo)
    except Conflict:
        return Restore.LEFT  # changed in the instant between the read above and the rename
    return Restore.RESTORED


def _roll_back(root: Path, folder: Path, manifest: Manifest, vroot: VaultRoot | None = None) -> RollbackReport:
    report = RollbackReport(manifest.op_id)
    anchor = VaultRoot(root) if vroot is None else vroot
    try:
        first = True
        for entry in reversed(manifest.entries):
            outcome = _restore(anchor, folder, entry)
            if outcome is Restore.RESTORED:
                report.restored.append(entry.path)
                if first:
                    faults.point("during-recovery")
                    first = False
            elif outcome is Restore.LEFT:
                report.left.append(entry.path)
        remove_journal(folder)
    finally:
        if vroot is None:
            anchor.close()
    return report


def apply_plan(root: Path, plan: Plan, op_id: str, channel: str, undoes: str | None = None) -> None:
    """Apply ``plan`` durably, or leave the vault as it was and raise.

    Raises:
        Unavailable: UNAVAILABLE, the journal or a write failed with an OSError; the vault is as it
            was.
        RollbackFailed: INTERNAL, the write failed and so did its rollback; the journal is kept for
            recovery.
    """
    check_bounds(plan)
    changes = plan.effective()
    with VaultRoot(root) as vroot:
        _verify(vroot, plan)
        try:
            folder = write_journal(root, op_id, plan, channel, undoes)
        except OSError as exc:
            raise Unavailable(f"the journal could not be written ({exc.strerror or exc}); nothing was changed") from exc
        faults.point("after-journal")
        try:
            _verify(vroot, plan)  # again: the journal write took time an editor may have used
            for change in changes:
                _put(vroot, change)
                faults.point("after-rename")
            faults.point("before-commit")
            mark_committed(folder)
        except BaseException as exc:
            (folder / "committed").unlink(missing_ok=True)  # a marker whose folder fsync failed is no commit
            try:
                report = _roll_back(root, folder, open_journal(folder), vroot)
            except Exception:
                log.exception("rollback failed; the journal is kept for recovery", op_id=op_id)
                raise RollbackFailed(f"operation {op_id} failed and could not be rolled back; restart the daemon to recover it") from exc
            log.warning("operation rolled back", op_id=op_id, restored=len(report.restored), left=report.left)
            if isinstance(exc, VaultError):
                raise
            if isinstance(exc, OSError):
                raise Unavailable(f"the write failed ({exc.strerror or exc}); nothing was changed") from exc
            raise
    faults.point("after-commit")


@dataclass(frozen=True, slots=True)
class Part:
    """One vault's share of an operation over several vaults."""

    root: Path
    plan: Plan
    op_id: str


def apply_together(parts: Sequence[Part], channel: str) -> None:
    """Apply plans to several vaults as one transaction: all of them durably, or none.

    Every part's targets are checked against their planned hashes before any journal is written,
    and again after; each vault gets its journal (the later ones name the first's as the one they
    commit with), then every target is written in order, each re-checked right before its rename.
    The first vault's ``committed`` marker is the operation's one commit point: before it, any
    failure (an editor's save, a full disk) rolls every vault back and nothing was applied; a
    crash is rolled back by recovery in each vault. After it, the other markers are written; one
    lost to a crash is restored by recovery, which asks the first vault's journal.

    Raises:
        Unavailable: UNAVAILABLE, a journal or a write failed with an OSError; every vault is as it
            was.
    """
    if not parts:
        return
    for part in parts:
        check_bounds(part.plan)
    first = parts[0]
    with ExitStack() as stack:
        vroots = [stack.enter_context(VaultRoot(part.root)) for part in parts]
        for vroot, part in zip(vroots, parts, strict=True):
            _verify(vroot, part.plan)  # every vault as planned before anything is written anywhere
        folders: list[Path] = []
        try:
            for i, part in enumerate(parts):
                link = JournalRef(vault=str(first.root), op_id=first.op_id) if i else None
                joined = [JournalRef(vault=str(p.root), op_id=p.op_id) for p in parts if p is not part]
                folders.append(journal.write_journal(part.root, part.op_id, part.plan, channel, commit_with=link, joined=joined))
        except BaseException as exc:
            for folder in reversed(folders):  # no target was touched: the journals go, nothing else
                try:
                    remove_journal(folder)
                except OSError:
                    log.warning("a journal of an operation that wrote nothing was not removed", folder=str(folder))
            if isinstance(exc, OSError):
                raise Unavailable(f"the journal could not be written ({exc.strerror or exc}); nothing was changed") from exc
            raise
        faults.point("after-journal")
        try:
            for vroot, part in zip(vroots, parts, strict=True):
                _verify(vroot, part.plan)  # again: the journals took time an editor may have used
            for i, (vroot, part) in enumerate(zip(vroots, parts, strict=True)):
                if i:
                    faults.point("between-vaults")
                for change in part.plan.effective():
                    _put(vroot, change)
                    faults.point("after-rename")
            faults.point("before-commit")
            mark_committed(folders[0])
        except BaseException as exc:
            (folders[0] / "committed").unlink(missing_ok=True)
            _roll_back_parts(parts, folders, vroots, exc)
            if isinstance(exc, VaultError):
                raise
            if isinstance(exc, OSError):
                raise Unavailable(f"the write failed ({exc.strerror or exc}); nothing was changed") from exc
            raise
        faults.point("between-commit-markers")
        for folder in folders[1:]:
            try:
                mark_committed(folder)
            except OSError as exc:  # committed with the first: recovery restores the marker
                log.warning("a joined journal's commit marker was not written", folder=str(folder), error=exc.strerror or str(exc))
    faults.point("after-commit")


def _roll_back_parts(parts: Sequence[Part], folders: list[Path], vroots: list[VaultRoot], exc: BaseException) -> None:
    """Roll back every vault's share, last first; RollbackFailed when any could not be.

    Raises:
        RollbackFailed: INTERNAL, a share could not be rolled back; its journal is kept for
            recovery.
    """
    failed = False
    for part, folder, vroot in reversed(list(zip(parts, folders, vroots, strict=True))):
        try:
            report = _roll_back(part.root, folder, open_journal(folder), vroot)
        except Exception:
            log.exception("rollback failed; the journal is kept for recovery", op_id=part.op_id)
            failed = True
            continue
        log.warning("operation rolled back", op_id=part.op_id, restored=len(report.restored), left=report.left)
    if failed:
        raise RollbackFailed(f"operation {parts[0].op_id} failed and could not be rolled back; restart the daemon to recover it") from exc


def _first_committed(ref: JournalRef, key: bytes) -> bool | None:
    """Whether the journal an operation over several vaults commits with committed; None when
    that cannot be told (its vault is not there, or its journal is not this daemon's)."""
    vault = Path(ref.vault)
    if not vault.is_dir() or journal.runtime_issue(vault) is not None or not opids.is_op_id(ref.op_id):
        return None
    folder = journal.journal_root(vault) / ref.op_id
    if not os.path.lexists(folder):
        # Written before this one and removed only by a rollback: the operation never committed.
        return False
    try:
        journal.open_journal(folder, key)
    except journal.UntrustedJournal:
        if not os.path.lexists(folder):
            # Gone between the two looks, as if gone at the first: that vault's own recovery,
            # running beside this one, rolled it back and retired it.
            return False
        return None
    return journal.is_committed(folder)


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
    applied, and it is rolled back (even when all its files were already written). A journal
    that is one vault's share of an operation over several (:func:`apply_together`) is decided
    by the journal it commits with instead: finished when that one committed, rolled back when it
    did not or is gone, left as found (reported in ``refused``) while that vault cannot be read.
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
        report.refused.append(RefusedJournal(f"{JOURNAL_DIR}/{folder.name}", reason))
    sealed: list[tuple[Path, journal.Manifest]] = []
    for folder in listing.live:
        try:
            manifest = journal.open_journal(folder, key)
        except journal.UntrustedJournal as exc:
            report.refused.append(RefusedJournal(f"{JOURNAL_DIR}/{folder.name}", exc.reason))
            continue
        sealed.append((folder, manifest))
    committed = [journal.is_committed(folder) for folder, _ in sealed]
    newest_committed = max((i for i, c in enumerate(committed) if c), default=-1)
    folders_touched: set[Path] = set()
    for i, (folder, manifest) in enumerate(sealed):
        finish = committed[i] or i < newest_committed
        if not committed[i] and manifest.commit_with is not None:
            # One share of an operation over several vaults: it committed exactly when the first
            # vault's journal did, whatever else this vault did since.
            decided = _first_committed(manifest.commit_with, key)
            if decided is None:
                reason = f"it commits with {manifest.commit_with.op_id} in {manifest.commit_with.vault}, which cannot be read now"
                report.refused.append(RefusedJournal(f"{JOURNAL_DIR}/{folder.name}", reason))
                continue
            finish = decided
        if finish:
            if not committed[i]:
                try:
                    mark_committed(folder)
                except OSError as exc:  # e.g. a 'committed' that is a symlink or a folder: not ours
                    report.refused.append(
                        RefusedJournal(f"{JOURNAL_DIR}/{folder.name}", f"its commit marker cannot be written ({exc.strerror})")
                    )
                    continue
                report.remarked.append(manifest.op_id)
            report.finished.append(manifest.op_id)
        else:
            try:
                _check_rollback(root, folder, manifest)
            except journal.UntrustedJournal as exc:
                report.refused.append(RefusedJournal(f"{JOURNAL_DIR}/{folder.name}", exc.reason))
                continue
            report.rolled_back.append(_roll_back(root, folder, manifest))
        folders_touched.update((root / e.path).parent for e in manifest.entries if not check_inside_vault(root, e.path))
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
    """Remove this daemon's temp files from one folder, bound to the folder's descriptor."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return 0
    removed = 0
    with Folder(fd, str(folder)) as opened:
        for name in opened.names():
            if is_temp_name(name):
                try:
                    os.unlink(name, dir_fd=opened.fd)
                except FileNotFoundError:
                    continue
                removed += 1
        if removed:
            opened.sync()
    return removed


def undo_plan(root: Path, folder: Path, leave: frozenset[str] = frozenset()) -> tuple[Plan, Manifest]:
    """The plan that reverses a committed operation, if every file is still as it left it; the
    paths in ``leave`` are left as they are now (a file the undo must not put back).

    Raises:
        Conflict: CONFLICT, a file changed since the operation; ``candidates`` names them.
    """
    manifest = open_journal(folder)
    changes = []
    moved = []
    for entry in manifest.entries:
        if entry.path in leave:
            continue
        current = read_current(root, entry.path, read_limit(entry.path))
        if sha256(current) != entry.after_sha:
            moved.append(entry.path)
            continue
        # a file the operation removed comes back with the mode the journal kept for it
        changes.append(Change(path=entry.path, before=current, after=original_bytes(folder, entry), mode=entry.mode))
    if moved:
        raise Conflict(f"cannot undo {manifest.op_id}: changed since: {', '.join(moved)}", candidates=moved)
    return Plan(op="op.undo", changes=changes, summary=f"undo {manifest.op_id} ({manifest.op})", log_type="RETHINK"), manifest


def committed_entries(folder: Path) -> list[Entry]:
    return open_journal(folder).entries
