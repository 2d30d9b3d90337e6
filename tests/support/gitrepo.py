"""Real git repositories in temp folders for the git tests: a working repository with an identity,
a bare remote, clones of it. Every call runs the real ``git`` binary with a clean environment (no
global or system config of the machine running the tests)."""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

IDENTITY = {"user.name": "Ada Lovelace", "user.email": "ada@example.org"}


def env() -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {**base, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C"}


def git(cwd: Path, *args: str, check: bool = True, input: str | None = None) -> str:
    """Run git in ``cwd``; its stdout (stripped). Raises on failure when ``check``."""
    proc = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, env=env(), input=input, timeout=60)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc.stdout.strip()


def identify(repo: Path, name: str = IDENTITY["user.name"], email: str = IDENTITY["user.email"]) -> None:
    git(repo, "config", "user.name", name)
    git(repo, "config", "user.email", email)


def init(folder: Path, files: dict[str, str] | None = None, *, commit: bool = True) -> Path:
    """A new repository at ``folder`` (created) with an identity and, optionally, a first commit."""
    folder.mkdir(parents=True, exist_ok=True)
    git(folder, "init", "-q", "-b", "main")
    identify(folder)
    for rel, text in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    if commit and files:
        git(folder, "add", "-A")
        git(folder, "commit", "-q", "-m", "first notes")
    return folder


def bare(folder: Path) -> Path:
    git(folder.parent, "init", "-q", "--bare", "-b", "main", str(folder))
    return folder


def clone(remote: Path, folder: Path, name: str = IDENTITY["user.name"]) -> Path:
    git(remote.parent, "clone", "-q", str(remote), str(folder))
    identify(folder, name, f"{name.split()[0].lower()}@example.org")
    return folder


def head(repo: Path, rev: str = "HEAD") -> str:
    return git(repo, "rev-parse", rev)


def tree(repo: Path, rev: str = "HEAD") -> dict[str, str]:
    """Path -> blob id of every file in a commit."""
    out = git(repo, "ls-tree", "-r", "-z", rev)
    entries = {}
    for record in out.split("\0"):
        if record:
            meta, path = record.split("\t", 1)
            entries[path] = meta.split()[2]
    return entries


def op_ids(repo: Path, rev: str = "HEAD") -> list[str]:
    """Every Vaultd-Op trailer on the history of ``rev``, newest first (repeats kept)."""
    out = git(repo, "log", "--format=%(trailers:key=Vaultd-Op,valueonly,separator=%x2c)", rev)
    return [v for line in out.splitlines() for v in line.split(",") if v]


def fsck(repo: Path) -> str:
    """``git fsck --full --strict``'s complaints (dangling objects are not complaints)."""
    proc = subprocess.run(
        ["git", "-C", str(repo), "fsck", "--full", "--strict", "--no-dangling"], capture_output=True, text=True, env=env(), timeout=120
    )
    return "" if proc.returncode == 0 else proc.stdout + proc.stderr
