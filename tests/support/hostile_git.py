"""Hostile repositories for the git tests and the hostile-repository round: a config that names a
command for every key git runs one from (each leaves a marker file when it runs), attributes that
name those filters and drivers, commits whose trees hold paths git or vaultd refuse, and blobs over
the bounds. Everything is made with the real ``git`` binary (``mktree`` and ``commit-tree`` for the
trees ``git add`` would refuse)."""

from __future__ import annotations

import os
import shlex
import stat
from typing import TYPE_CHECKING

from tests.support.gitrepo import git

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

#: Every hook git may run in a client repository.
HOOKS = (
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-push",
    "post-checkout",
    "post-merge",
    "reference-transaction",
    "post-index-change",
    "fsmonitor-watchman",
    "pre-auto-gc",
    "post-rewrite",
    "push-to-checkout",
)


def touch(marks: Path, name: str) -> str:
    """A shell command that leaves the marker ``name``."""
    return f"touch {shlex.quote(str(marks / name))}"


def command_keys(marks: Path) -> dict[str, str]:
    """Every command-valued key of a repository's config, each naming a command that leaves its
    marker (and then behaves, so a run that reaches it is not cut short by a failure)."""

    def t(name: str) -> str:
        return touch(marks, name)

    return {
        "remote.origin.uploadpack": f"{t('uploadpack')}; git-upload-pack",
        "remote.origin.receivepack": f"{t('receivepack')}; git-receive-pack",
        "core.sshCommand": f"{t('sshcommand')}; ssh",
        "core.fsmonitor": t("fsmonitor"),
        "core.pager": f"{t('pager')}; cat",
        "core.editor": f"{t('editor')}; true",
        "core.askPass": f"{t('askpass')}; echo x",
        "core.gitProxy": t("gitproxy"),
        "core.alternateRefsCommand": f"{t('alternaterefs')}; true",
        "diff.external": f"{t('diffexternal')}; true",
        "credential.helper": f"!{t('credential')}; true",
        "gpg.program": f"{t('gpg')}; false",
        "gpg.ssh.defaultKeyCommand": f"{t('gpgssh')}; false",
        "sequence.editor": f"{t('sequenceeditor')}; true",
        "pager.log": f"{t('pagerlog')}; cat",
        "filter.evilclean.clean": f"{t('filterclean')}; cat",
        "filter.evilclean.smudge": f"{t('filtersmudge')}; cat",
        "filter.evilclean.required": "true",
        "filter.evilproc.process": f"{t('filterprocess')}; false",
        "filter.a=b.clean": f"{t('filterequals')}; cat",
        "diff.evil.textconv": f"{t('textconv')}; cat",
        "diff.evil.command": f"{t('diffcommand')}; true",
        "merge.evil.driver": f"{t('mergedriver')}; false",
        "uploadpack.packObjectsHook": f"{t('packobjectshook')}; ",
        "log.showSignature": "true",
        "commit.gpgSign": "true",
        "push.gpgSign": "if-asked",
    }


#: The attributes files that name those drivers: the work tree's .gitattributes (untracked here)
#: and the repository's info/attributes (which git reads first).
ATTRIBUTES = "*.md filter=evilclean diff=evil merge=evil\n*.txt filter=evilproc\n*.csv filter=a=b\n"
INFO_ATTRIBUTES = "*.log filter=included diff=evil\n"
INCLUDED = '[filter "included"]\n\tclean = {cmd}; cat\n\tsmudge = {cmd}; cat\n'


def make_hostile(repo: Path, marks: Path, keys: dict[str, str] | None = None, *, hooks: bool = True, include: bool = True) -> None:
    """Give ``repo`` a hostile config (``keys``, default every one), attributes naming its drivers,
    hooks that leave markers, and an include of another config file defining one more filter."""
    marks.mkdir(parents=True, exist_ok=True)
    for key, value in (command_keys(marks) if keys is None else keys).items():
        git(repo, "config", key, value)
    (repo / ".gitattributes").write_text(ATTRIBUTES)
    info = repo / ".git" / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text(INFO_ATTRIBUTES)
    if hooks:
        folder = repo / ".git" / "evil-hooks"
        folder.mkdir(exist_ok=True)
        for hook in HOOKS:
            path = folder / hook
            path.write_text(f"#!/bin/sh\n{touch(marks, 'hook-' + hook)}\n")
            path.chmod(path.stat().st_mode | stat.S_IXUSR)
        git(repo, "config", "core.hooksPath", str(folder))
    if include:
        extra = repo.parent / f"{repo.name}-included.cfg"
        extra.write_text(INCLUDED.format(cmd=touch(marks, "included-filter")))
        git(repo, "config", "include.path", str(extra))


def ran(marks: Path) -> list[str]:
    """The markers left: every command of the hostile config that ran."""
    return sorted(os.listdir(marks)) if marks.is_dir() else []


def tree_with(repo: Path, rev: str, files: Mapping[str, tuple[str, bytes] | bytes]) -> str:
    """A tree: ``rev``'s, plus ``files`` (path -> bytes, or (mode, bytes)); any component names,
    even those ``git add`` refuses (``.GIT``, ``..``), made with ``mktree``."""
    entries: dict[str, tuple[str, str]] = {}
    listed = git(repo, "ls-tree", "-r", "-z", "--full-tree", rev)
    for record in listed.split("\0"):
        if record:
            meta, path = record.split("\t", 1)
            mode, _, oid = meta.split()
            entries[path] = (mode, oid)
    for path, content in files.items():
        mode, data = content if isinstance(content, tuple) else ("100644", content)
        entries[path] = (mode, blob(repo, data))
    return _mktree(repo, {tuple(p.split("/")): e for p, e in entries.items()})


def blob(repo: Path, data: bytes) -> str:
    tmp = repo.parent / f".{repo.name}-blob"
    tmp.write_bytes(data)
    try:
        return git(repo, "-c", "core.compression=1", "hash-object", "-w", "--no-filters", str(tmp))
    finally:
        tmp.unlink()


def big_blob(repo: Path, size: int, fill: bytes = b"a") -> str:
    """A blob of ``size`` bytes of one byte, written in chunks (it compresses to almost nothing)."""
    tmp = repo.parent / f".{repo.name}-big"
    chunk = fill * (1 << 20)
    with open(tmp, "wb") as fh:
        left = size
        while left > 0:
            fh.write(chunk[: min(left, len(chunk))])
            left -= len(chunk)
    try:
        return git(repo, "-c", "core.compression=1", "-c", "core.bigFileThreshold=1m", "hash-object", "-w", "--no-filters", str(tmp))
    finally:
        tmp.unlink()


def _mktree(repo: Path, entries: dict[tuple[str, ...], tuple[str, str]]) -> str:
    here: list[str] = []
    below: dict[str, dict[tuple[str, ...], tuple[str, str]]] = {}
    for parts, (mode, oid) in entries.items():
        if len(parts) == 1:
            kind = "commit" if mode == "160000" else "tree" if mode == "040000" else "blob"
            here.append(f"{mode} {kind} {oid}\t{parts[0]}")
        else:
            below.setdefault(parts[0], {})[parts[1:]] = (mode, oid)
    for name, sub in below.items():
        here.append(f"040000 tree {_mktree(repo, sub)}\t{name}")
    return git(repo, "mktree", "--missing", input="\n".join(here) + "\n")


def push_tree(repo: Path, tree: str, message: str = "hostile", branch: str = "main") -> str:
    """Commit ``tree`` on top of ``repo``'s HEAD and push it to origin's ``branch``; the commit."""
    commit = git(repo, "commit-tree", tree, "-p", "HEAD", "-m", message)
    git(repo, "update-ref", "HEAD", commit)
    git(repo, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")
    return commit


def state(repo: Path) -> dict[str, str]:
    """What a refused sync must leave as it was: the branch and its head, the person's index (by
    plumbing that runs no filter), and every file's bytes."""
    files = {}
    for p in sorted(repo.rglob("*")):
        rel = p.relative_to(repo).as_posix()
        if rel.split("/")[0] in (".git", ".vaultd") or not p.is_file() or p.is_symlink():
            continue
        files[rel] = p.read_bytes().hex() if p.stat().st_size < 1 << 20 else str(p.stat().st_size)
    return {
        "head": git(repo, "rev-parse", "HEAD"),
        "branch": git(repo, "symbolic-ref", "HEAD"),
        "index": git(repo, "ls-files", "-s", "-z"),
        "files": repr(files),
    }


def clear(marks: Path) -> None:
    for name in ran(marks):
        (marks / name).unlink()
