"""Snapshots: hand edits (Obsidian, an editor, a script) committed as one commit once the vault is quiet.

The watcher says when something changed; git says what: ``diff-files`` against vaultd's index
(which mirrors the branch head) for tracked files, ``ls-files --others --exclude-standard`` for new
ones, so ``.gitignore`` and ``info/exclude`` are honoured exactly as ``git add`` would.

A file is never committed half-written. Every changed file must have been left alone for the quiet
period (its modification time, not only the watcher's silence, which a lost event could fake),
and each is hashed from disk and then checked again: a file whose size, inode or modification time
moved while it was read is not committed, and the snapshot waits for the next quiet period.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vaultd.git import command, objects
from vaultd.git.checkpoint import committable
from vaultd.git.repo import ZERO, checked_branch, resolve
from vaultd.git.staging import Entry, StagedContent, StagingArea

if TYPE_CHECKING:
    from collections.abc import Callable

    from vaultd.git.record import Made, Recorder

MAX_LISTED = 50


@dataclass(slots=True)
class Snapshot:
    made: Made | None
    paths: list[str]  #: vault-relative paths committed (or waiting)
    waiting: bool = False  #: a file changed too recently (or while read): try again after the quiet period


def changed(recorder: Recorder) -> list[str]:
    """Repository paths under the vault whose file differs from the branch head (tracked or new)."""
    repo = recorder.repo
    branch = checked_branch(repo, recorder.vault_id)
    head = resolve(repo, branch)
    tree = recorder.mirror(branch, head)
    # Stat data only (the index content stays the head's), so later calls hash only what changed.
    command.run(repo.top, "update-index", "-q", "--refresh", env=recorder.env, ok=(0, 1))
    recorder.remember(branch, head or ZERO, tree)
    modified = command.run(repo.top, "diff-files", "--name-only", "-z", "--", repo.pathspec, env=recorder.env).stdout
    new = command.run(repo.top, "ls-files", "--others", "--exclude-standard", "-z", "--", repo.pathspec, env=recorder.env).stdout
    found = {p.decode("utf-8", "surrogateescape") for p in (modified + b"\0" + new).split(b"\0") if p}
    return sorted(p for p in found if committable(p[len(repo.prefix) :]))


_Stat = tuple[int, int, int] | None


def _stat(path: str) -> _Stat:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return (-1, -1, -1)  # a link, a folder, a device: never committed by a snapshot
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def take(
    recorder: Recorder,
    staging: StagingArea,
    *,
    quiet_s: float,
    now: float | None = None,
    force: bool = False,
    leave_out: Callable[[str], bool] = lambda _rel: False,
) -> Snapshot:
    """Commit every hand edit as one snapshot commit, if each has been quiet for ``quiet_s``.

    ``force`` (an explicit ``vault.snapshot``, a sync) skips the quiet check but never the re-check
    of each file after it is read.
    ``leave_out``: vault-relative paths never committed (the raw copies, unless the user opts in).

    Raises:
        StagedContent: the person staged content under the vault's folder; nothing was committed.
        Conflict: CONFLICT, detached HEAD or a merge or rebase in progress.
    """
    repo = recorder.repo
    paths = [p for p in changed(recorder) if not leave_out(p[len(repo.prefix) :])]
    if not paths:
        return Snapshot(None, [])
    now = time.time() if now is None else now
    stats = {p: _stat(str(repo.top / p)) for p in paths}
    paths = [p for p in paths if stats[p] != (-1, -1, -1)]
    rels = [p[len(repo.prefix) :] for p in paths]
    if not paths:
        return Snapshot(None, [])
    if not force and any(s is not None and s[2] / 1e9 > now - quiet_s for s in stats.values()):
        return Snapshot(None, rels, waiting=True)
    branch = checked_branch(repo, recorder.vault_id)
    head = resolve(repo, branch)
    if staged := staging.staged(head):
        raise StagedContent(staged)
    present = [p for p in paths if stats[p] is not None]
    oids = _hash(recorder, present)
    if any(_stat(str(repo.top / p)) != stats[p] for p in paths):
        return Snapshot(None, rels, waiting=True)  # written to while it was read: not a finished file
    entries: dict[str, Entry] = {p: ((objects.file_mode(repo.top / p), oids[p]) if stats[p] is not None else None) for p in paths}
    listed = "\n".join(f"  {r}" for r in rels[:MAX_LISTED]) + (f"\n  … and {len(rels) - MAX_LISTED} more" if len(rels) > MAX_LISTED else "")
    message = (
        f"snapshot: {len(rels)} hand edit(s)\n\nCommitted by vaultd after the vault was quiet:\n{listed}\n\n"
        f"Vaultd-Snapshot: {len(rels)}\nVaultd-Channel: snapshot\n"
    )
    made = recorder.commit(entries, message, reason="snapshot")
    if made is not None:
        staging.refresh(entries, made.commit)
    return Snapshot(made, rels)


def _hash(recorder: Recorder, paths: list[str]) -> dict[str, str]:
    if not paths:
        return {}
    repo = recorder.repo
    out = command.run(repo.top, "hash-object", "-w", "--no-filters", "--", *[str(repo.top / p) for p in paths]).text.split()
    return dict(zip(paths, out, strict=True))
