"""Where a vault sits in git: the repository holding it, the vault's folder in it, the branch.

A vault may be a repository's root or any folder below it; vaultd then only ever commits paths
under that folder (:attr:`Repo.prefix`). Nothing here writes.
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass
from pathlib import Path

from vaultd.errors import Conflict, Unavailable
from vaultd.git import command

ZERO = "0" * 40


@dataclass(frozen=True, slots=True)
class Repo:
    top: Path  #: the work tree's root folder (real path)
    git_dir: Path  #: this work tree's git folder (absolute)
    common_dir: Path  #: the repository's shared git folder (the same, unless a linked work tree)
    prefix: str  #: the vault's folder relative to ``top``: '' or 'a/b/'

    def path(self, rel: str) -> str:
        """The repository path of a vault-relative path."""
        return self.prefix + rel

    def rel(self, repo_path: str) -> str | None:
        """The vault-relative path of a repository path, or None when it is outside the vault."""
        return repo_path[len(self.prefix) :] if repo_path.startswith(self.prefix) else None

    @property
    def pathspec(self) -> str:
        """The vault's folder as a (literal) pathspec run from ``top``."""
        return self.prefix.rstrip("/") or "."

    @property
    def is_root(self) -> bool:
        return self.prefix == ""


def find(vault: Path) -> Repo | None:
    """The repository holding ``vault``, or None when it is in none (or only in a bare one)."""
    out = command.run(vault, "rev-parse", "--is-inside-work-tree", "--show-toplevel", "--absolute-git-dir", "--git-common-dir", ok=(0, 128))
    lines = out.text.splitlines()
    if out.status != 0 or len(lines) < 4 or lines[0] != "true":
        return None
    top = Path(os.path.realpath(lines[1]))
    git_dir = Path(lines[2])
    common = Path(lines[3]) if os.path.isabs(lines[3]) else (vault / lines[3])
    real = os.path.realpath(vault)
    rel = os.path.relpath(real, top)
    if rel.startswith(".."):
        return None
    prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
    return Repo(top=top, git_dir=git_dir, common_dir=Path(os.path.realpath(common)), prefix=prefix)


def require(vault: Path, vault_id: str) -> Repo:
    """The repository holding the vault.

    Raises:
        Unavailable: UNAVAILABLE, the vault is in no git repository.
    """
    repo = find(vault)
    if repo is None:
        raise Unavailable(
            f"vault {vault_id!r} is not in a git repository; run 'git init' in {vault} (or clone one there) to keep its history"
        )
    return repo


class Busy(enum.Enum):
    """A git operation the user is in the middle of: vaultd commits nothing until it is done."""

    MERGE = "MERGE_HEAD"
    CHERRY_PICK = "CHERRY_PICK_HEAD"
    REVERT = "REVERT_HEAD"
    REBASE_MERGE = "rebase-merge"
    REBASE_APPLY = "rebase-apply"
    BISECT = "BISECT_LOG"


def busy(repo: Repo) -> Busy | None:
    """The merge, rebase, cherry-pick, revert or bisect in progress, if any (a few stats)."""
    for state in Busy:
        if os.path.lexists(repo.git_dir / state.value):
            return state
    return None


@dataclass(frozen=True, slots=True)
class Head:
    branch: str | None  #: e.g. 'refs/heads/main'; None when HEAD is detached
    commit: str | None  #: None on an unborn branch (a repository with no commit yet)


def branch_of(repo: Repo) -> str | None:
    """The branch HEAD names, read from the HEAD file (no process); None when detached."""
    try:
        text = (repo.git_dir / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    return text[5:].strip() if text.startswith("ref: refs/heads/") else None


def resolve(repo: Repo, rev: str) -> str | None:
    """The commit ``rev`` names, or None when it names none (never an option: revs are checked)."""
    out = command.run(repo.top, "rev-parse", "-q", "--verify", "--end-of-options", f"{rev}^{{commit}}", ok=(0, 1, 128))
    return out.text.strip() or None if out.status == 0 else None


def head(repo: Repo) -> Head:
    return Head(branch=branch_of(repo), commit=resolve(repo, "HEAD"))


def checked_branch(repo: Repo, vault_id: str) -> str:
    """The branch to commit on.

    Raises:
        Conflict: CONFLICT, HEAD is detached or a merge, rebase, cherry-pick, revert or bisect is
            in progress: vaultd never commits into the middle of one.
    """
    state = busy(repo)
    if state is not None:
        raise Conflict(
            f"vault {vault_id!r}: the repository is in the middle of a {state.name.lower().replace('_', '-')}; vaultd commits "
            "nothing until it is finished or aborted"
        )
    branch = branch_of(repo)
    if branch is None:
        raise Conflict(f"vault {vault_id!r}: the repository's HEAD is detached; check out a branch and vaultd commits on it")
    return branch


def is_ancestor(repo: Repo, older: str, newer: str) -> bool:
    return command.run(repo.top, "merge-base", "--is-ancestor", older, newer, ok=(0, 1)).status == 0


def merge_base(repo: Repo, a: str, b: str) -> str | None:
    out = command.run(repo.top, "merge-base", a, b, ok=(0, 1))
    return out.text.strip() or None if out.status == 0 else None
