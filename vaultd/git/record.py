"""Commits on a vault's branch, made with git plumbing through vaultd's own index file.

The index file (``.vaultd/git/index``) mirrors the branch's last commit; a commit stages only the
paths it records (``update-index --index-info`` with blobs whose ids were checked against the
exact bytes), writes the tree, makes the commit and moves the branch by compare-and-swap
(``update-ref BRANCH NEW OLD``): if anyone moved the branch meanwhile, nothing is overwritten, the
mirror is rebuilt from the new head and the commit made again on top of it.

What the mirror mirrors is recorded beside it with the index file's identity (git replaces the file
on every write), so an index left half-staged by a crash is never taken for a mirror: it is
rebuilt. A crash between the commit object and the branch update leaves an unreferenced commit,
which git tolerates and ``git gc`` removes; the branch never points at a half-made commit.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import structlog

from vaultd import faults
from vaultd.errors import Conflict
from vaultd.git import command
from vaultd.git.objects import EMPTY_TREE
from vaultd.git.repo import ZERO, Repo, checked_branch, resolve
from vaultd.vault.layout import STATE_DIR

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from vaultd.git.staging import Entry

log = structlog.get_logger("vaultd.git")

GIT_STATE_DIR = f"{STATE_DIR}/git"  #: vault-relative: vaultd's index file and its record
INTEGRATION_RECORD = f"{GIT_STATE_DIR}/integration"  #: vault-relative: a sync's integration under way
MAX_TRACKED = 100_000  #: paths remembered as tracked (beyond it, git is asked)
MAX_ATTEMPTS = 5  #: compare-and-swap attempts before giving up on a branch that keeps moving
FALLBACK_IDENTITY = {
    "GIT_AUTHOR_NAME": "vaultd",
    "GIT_AUTHOR_EMAIL": "vaultd@localhost",
    "GIT_COMMITTER_NAME": "vaultd",
    "GIT_COMMITTER_EMAIL": "vaultd@localhost",
}


@dataclass(frozen=True, slots=True)
class Made:
    commit: str
    parent: str | None
    tree: str
    branch: str


class Recorder:
    """Makes one vault's commits. Not thread-safe: the vault's writer serialises its callers."""

    def __init__(self, root: Path, repo: Repo, vault_id: str) -> None:
        self.root = root
        self.repo = repo
        self.vault_id = vault_id
        self.folder = root / GIT_STATE_DIR
        self.index = self.folder / "index"
        self._record = self.folder / "index.head"
        self.fallback_identity = False  #: git has no user.name/email: commits are by "vaultd"
        #: Repository paths known to be in the mirrored tree (committed by this recorder since the
        #: mirror was last rebuilt), so a checkpoint need not ask git whether they are ignored.
        self.tracked: set[str] = set()

    @property
    def env(self) -> dict[str, str]:
        return {"GIT_INDEX_FILE": str(self.index)}

    # -- the mirror ------------------------------------------------------------------------

    def _identity(self) -> str:
        try:
            st = os.stat(self.index)
        except FileNotFoundError:
            return "-"
        return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"

    def _mirrored(self) -> tuple[str, str, str] | None:
        """(branch, head, tree) the index holds, if the record still describes this very file."""
        try:
            branch, head, tree, ident = self._record.read_text(encoding="utf-8").split()
        except (OSError, ValueError):
            return None
        return (branch, head, tree) if ident == self._identity() else None

    def remember(self, branch: str, head: str, tree: str) -> None:
        tmp = self._record.with_name("index.head.tmp")
        tmp.write_text(f"{branch} {head} {tree} {self._identity()}\n", encoding="utf-8")
        os.replace(tmp, self._record)

    def mirror(self, branch: str, head: str | None) -> str:
        """Make the index hold ``head``'s tree (an empty one on an unborn branch); returns the tree."""
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        key = head or ZERO
        have = self._mirrored()
        if have is not None and have[1] == key:
            return have[2]
        self.tracked.clear()
        if head is None:
            command.run(self.repo.top, "read-tree", "--empty", env=self.env)
            tree = EMPTY_TREE
        else:
            command.run(self.repo.top, "read-tree", head, env=self.env)
            tree = command.line(self.repo.top, "rev-parse", "--verify", f"{head}^{{tree}}")
        self.remember(branch, key, tree)
        return tree

    def guess_head(self, branch: str) -> str | None:
        """The branch's head as vaultd last left it (no process): a guess the compare-and-swap
        checks; None when vaultd has no record for this branch (then git is asked)."""
        have = self._mirrored()
        if have is None or have[0] != branch:
            return resolve(self.repo, branch)
        return None if have[1] == ZERO else have[1]

    def forget(self) -> None:
        """Drop the record, so the next commit rebuilds the mirror (after the index was used freely)."""
        self._record.unlink(missing_ok=True)

    # -- committing --------------------------------------------------------------------------

    def stage(self, changes: dict[str, Entry]) -> None:
        lines = []
        for path, entry in sorted(changes.items()):
            mode, oid = entry if entry is not None else ("0", "0" * 40)
            lines.append(f"{mode} {oid}\t{path}".encode("utf-8", "surrogateescape") + b"\0")
        if lines:
            command.run(self.repo.top, "update-index", "-z", "--index-info", input=b"".join(lines), env=self.env)

    def commit_tree(self, tree: str, parents: list[str], message: str) -> str:
        args = ["commit-tree", "--no-gpg-sign", tree, *[a for p in parents for a in ("-p", p)]]
        env = dict(self.env, **(FALLBACK_IDENTITY if self.fallback_identity else {}))
        try:
            return command.run(self.repo.top, *args, input=message.encode("utf-8"), env=env).text.strip()
        except command.GitFailed as exc:
            if self.fallback_identity or not any(
                w in exc.stderr for w in ("identity", "tell me who you are", "auto-detect", "empty ident")
            ):
                raise
        self.fallback_identity = True
        log.warning("git has no user identity for this repository; commits are by 'vaultd'", vault=self.vault_id)
        return command.run(self.repo.top, *args, input=message.encode("utf-8"), env=dict(self.env, **FALLBACK_IDENTITY)).text.strip()

    def move_branch(self, branch: str, new: str, old: str | None, reason: str) -> bool:
        """Compare-and-swap the branch from ``old`` to ``new``; False when it had moved."""
        out = command.run(self.repo.top, "update-ref", "-m", f"vaultd: {reason}"[:200], branch, new, old or ZERO, ok=(0, 1, 128))
        return out.status == 0

    def commit(
        self,
        build: dict[str, Entry],
        message: str,
        *,
        reason: str,
        extra_parents: tuple[str, ...] = (),
        allow_empty: bool = False,
        on_commit: Callable[[str, str | None], None] | None = None,
    ) -> Made | None:
        """Commit ``build`` (repository path -> entry, None removes) on top of the branch's head.

        Returns None when the result is the head's tree (nothing to record) and no merge parent
        asks for a commit anyway. ``on_commit(commit, parent)`` is called with each commit object
        made, before the branch is moved to it (a sync records it, to finish the move after a crash).

        Raises:
            Conflict: CONFLICT, HEAD is detached, a merge or rebase is in progress, or the branch
                kept moving under every attempt.
        """
        branch = checked_branch(self.repo, self.vault_id)
        head = self.guess_head(branch)
        for _ in range(MAX_ATTEMPTS):
            base_tree = self.mirror(branch, head)
            self.stage(build)
            tree = command.line(self.repo.top, "write-tree", env=self.env)
            if tree == base_tree and not extra_parents and not allow_empty:
                if resolve(self.repo, branch) == head:  # a guessed head is confirmed before "nothing to do"
                    self.remember(branch, head or ZERO, tree)
                    return None
                head = resolve(self.repo, branch)
                continue
            parents = [p for p in (head, *extra_parents) if p]
            new = self.commit_tree(tree, parents, message)
            if on_commit is not None:
                on_commit(new, head)
            faults.point("git-after-commit-tree")
            if self.move_branch(branch, new, head, reason):
                self.remember(branch, new, tree)
                if len(self.tracked) < MAX_TRACKED:
                    self.tracked.update(p for p, e in build.items() if e is not None)
                faults.point("git-after-update-ref")
                return Made(commit=new, parent=head, tree=tree, branch=branch)
            log.info("the branch moved while vaultd committed; committing again on its new head", vault=self.vault_id, branch=branch)
            head = resolve(self.repo, branch)
        raise Conflict(f"vault {self.vault_id!r}: {branch} kept moving while vaultd committed; nothing was committed, try again")
