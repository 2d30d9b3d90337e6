"""The user's staging area (the repository's own index): read to refuse, kept coherent, never used.

vaultd commits through an index file of its own (:mod:`vaultd.git.record`), so what a person
staged is never committed by it. Two duties remain towards the user's index:

- refuse: when the person has staged content under the vault's folder, vaultd does not commit
  there at all (the change stands, the commit waits): a commit of ours on top of their half-done
  staging would make their next ``git commit`` revert or mix our change;
- keep coherent: after vaultd commits paths the person had *not* staged, their index entries for
  exactly those paths are set to the new commit's, as ``git reset -- PATHS`` would. Left alone,
  ``git status`` would show our commit as a staged reversal and their next commit would make it.
  After a sync moves the branch (:func:`follow`), the same for every path that differs between
  the branch's old head and its new one, where the entry still holds the old head's.

That is the only write to the person's index, and it only ever makes an entry equal to what the
branch's new head holds: never to bytes vaultd wrote to disk but did not commit (a note merged
with an edit the person saved during a sync stays an unstaged change), never over an entry the
person staged.

The check is cached on the index file's identity and HEAD: git replaces the file on every write,
so an unchanged (inode, size, mtime) is an unchanged staging area.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import structlog

from vaultd.git import command
from vaultd.git.objects import EMPTY_TREE

if TYPE_CHECKING:
    from vaultd.git.repo import Repo

log = structlog.get_logger("vaultd.git")

MAX_REPORTED = 20  #: staged paths a refusal names

Identity = tuple[int, int, int]
Entry = tuple[str, str] | None  #: (mode, blob id), or None: the path is absent


class StagedContent(Exception):
    """The person has staged content under the vault's folder: vaultd commits nothing there."""

    def __init__(self, paths: list[str]) -> None:
        super().__init__(", ".join(paths))
        self.paths = paths


@dataclass
class StagingArea:
    repo: Repo
    _clean: tuple[Identity | None, str | None] | None = None  #: (index identity, head) last seen with nothing staged
    pending: dict[str, Entry] = field(default_factory=dict)  #: entries to point at vaultd's last commit
    _flushed_head: str | None = None  #: that commit

    @property
    def path(self) -> str:
        return str(self.repo.git_dir / "index")

    def _identity(self) -> Identity | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def staged(self, head: str | None, *, flush: bool = True) -> list[str]:
        """Repository paths under the vault's folder whose staged content differs from ``head``
        (entries waiting for their refresh are refreshed first; ``flush=False``, for a reader
        without the vault's writer, does not, and says nothing is staged while some wait)."""
        if self.pending and not flush:
            return []
        self.flush()
        ident = self._identity()
        if self._clean == (ident, head) or ident is None:
            return []
        out = command.run(self.repo.top, "diff-index", "--cached", "--name-only", "-z", head or EMPTY_TREE, "--", self.repo.pathspec)
        found = [p.decode("utf-8", "surrogateescape") for p in out.stdout.split(b"\0") if p]
        if not found:
            self._clean = (ident, head)
        return found

    def refresh(self, entries: dict[str, Entry], head: str, *, checked: bool = True) -> bool:
        """Point the person's index entries for ``entries`` at the new commit; False when the
        index was busy (another git command held its lock): kept and retried before the next check.
        ``checked``: nothing was staged just before (so the index is then known to hold ``head``);
        False when the caller did not look, and the next check asks git."""
        self.pending.update(entries)
        self._flushed_head = head if checked else None
        if not checked:
            self._clean = None
        return self.flush()

    def flush(self) -> bool:
        if not self.pending:
            return True
        lines = []
        for path, entry in sorted(self.pending.items()):
            mode, oid = entry if entry is not None else ("0", "0" * 40)
            lines.append(f"{mode} {oid}\t{path}".encode("utf-8", "surrogateescape") + b"\0")
        out = command.run(self.repo.top, "update-index", "-z", "--index-info", input=b"".join(lines), ok=(0, 128))
        if out.status != 0:
            log.warning(
                "the staging area is busy; its entries are refreshed later", repo=str(self.repo.top), error=command.redact(out.stderr)
            )
            return False
        self.pending.clear()
        if self._flushed_head is not None:
            self._clean = (self._identity(), self._flushed_head)  # we checked nothing was staged before
        return True


def catch_up(area: StagingArea, head: str) -> list[str]:
    """After a crash between a checkpoint or snapshot of vaultd's and the refresh of the person's
    entries: point the entries the commit changed at it, where they still hold what the commit
    replaced (an entry holding anything else is the person's staging, and stays). Returns the
    paths refreshed. A sync's integration is not found this way: it records its old and new
    heads itself (:mod:`vaultd.git.integration`), whatever the tip commit says."""
    repo = area.repo
    ours = command.run(repo.top, "log", "-1", "--format=%(trailers:key=Vaultd-Channel,valueonly)", head).text.strip()
    parent = command.run(repo.top, "rev-parse", "-q", "--verify", f"{head}~1", ok=(0, 1, 128)).text.strip()
    if not ours or not parent:
        return []  # a commit of the person's (or the first one): their staging area is theirs
    return follow(area, parent, head)


def follow(area: StagingArea, old: str | None, new: str) -> list[str]:
    """Make the person's index follow the branch from ``old`` to ``new`` (vaultd moved it): each
    entry for a path that differs between the two commits is set to ``new``'s, where it still
    holds ``old``'s, as ``git reset -- PATHS`` would; an entry holding anything else is the
    person's staging, and stays. Nothing else in the index is written: the person's edits on
    disk stay unstaged changes, never staged ones. Returns the paths refreshed."""
    repo = area.repo
    out = command.run(repo.top, "diff-tree", "-r", "-z", "--no-renames", old or EMPTY_TREE, new, "--", repo.pathspec)
    fields = out.stdout.split(b"\0")
    changed: dict[str, tuple[Entry, Entry]] = {}
    for meta, raw in zip(fields[0::2], fields[1::2], strict=False):
        if not meta:
            break
        old_mode, new_mode, old_oid, new_oid = meta.decode().lstrip(":").split()[:4]
        before: Entry = None if set(old_oid) == {"0"} else (old_mode, old_oid)
        after: Entry = None if set(new_oid) == {"0"} else (new_mode, new_oid)
        changed[raw.decode("utf-8", "surrogateescape")] = (before, after)
    if not changed:
        return []
    # The whole index under the vault's folder, read once: a sync may change more paths than a
    # command line holds.
    listed = command.run(repo.top, "ls-files", "-s", "-z", "--", repo.pathspec).stdout
    current: dict[str, Entry] = {}
    for record in listed.split(b"\0"):
        if record:
            meta, _, name = record.partition(b"\t")
            path = name.decode("utf-8", "surrogateescape")
            if path in changed:
                mode, oid, _stage = meta.decode().split()
                current[path] = (mode, oid)
    stale = {path: after for path, (before, after) in changed.items() if current.get(path) == before}
    if stale:
        area.refresh(stale, new, checked=False)
    return sorted(stale)


def describe(paths: list[str]) -> str:
    shown = ", ".join(paths[:MAX_REPORTED])
    return shown + (f" and {len(paths) - MAX_REPORTED} more" if len(paths) > MAX_REPORTED else "")
