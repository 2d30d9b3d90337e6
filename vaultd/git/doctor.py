"""What ``vaultctl doctor`` says about a vault's git side: the repository, what waits to be
committed, and whether origin is exactly the registered remote (config only: no network)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.methods.git_settings import GitMode
from protocol.methods.service import Finding, Level
from vaultd.errors import VaultError
from vaultd.git import command, exclude, remote
from vaultd.git.repo import branch_of, busy, find, resolve
from vaultd.git.staging import describe

if TYPE_CHECKING:
    from pathlib import Path

    from vaultd.git.keeper import GitKeeper

MAX_KEYS_NAMED = 40  #: command-valued keys a finding names


def _printable(key: str) -> str:
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in key)[:200]


def config_message(keys: list[str]) -> str:
    named = ", ".join(_printable(k) for k in keys[:MAX_KEYS_NAMED]) + (
        f" and {len(keys) - MAX_KEYS_NAMED} more" if len(keys) > MAX_KEYS_NAMED else ""
    )
    return (
        f"the repository's own git config names commands git runs or places it sends data: {named}; vaultd never runs them, "
        f"but your own git in this folder does: if you did not put them there, remove them (git config --unset {_printable(keys[0])})"
    )


def config_issues(folder: Path) -> list[Issue]:
    """R09 for a repository whose own config names commands (worker thread); nothing outside one."""
    try:
        keys = list(command.view(folder).commands)
    except VaultError:
        return []
    return [Issue(code=IssueCode.R09, severity=Severity.WARNING, message=config_message(keys))] if keys else []


def findings(keeper: GitKeeper) -> list[Finding]:
    """Doctor's findings for one vault (worker thread)."""
    entry = keeper.entry
    check = f"git:{entry.id}"
    if entry.git is GitMode.OFF and entry.remote is None:
        try:
            repo = find(keeper.root)
        except VaultError:
            return []
        if repo is None:
            return []
        return [Finding(level=Level.OK, check=check, finding=f"in the repository at {repo.top}; git: off (history reads only)")]
    try:
        repo = keeper.repo()
    except VaultError as exc:
        return [Finding(level=Level.FAIL, check=check, finding=exc.message)]
    found = [
        Finding(
            level=Level.OK,
            check=check,
            finding=f"git: {entry.git}; repository {repo.top}" + (f", folder {repo.prefix}" if repo.prefix else ""),
        )
    ]

    def warn(text: str) -> None:
        found.append(Finding(level=Level.WARN, check=check, finding=text))

    try:
        keys = list(command.view(repo.top).commands)
    except VaultError as exc:
        found.append(Finding(level=Level.FAIL, check=check, finding=exc.message))
        keys = []
    if keys:
        warn(config_message(keys))
    if lacking := exclude.missing(repo):
        warn(f"info/exclude lacks {', '.join(lacking)}; the next start of the vault adds them")
    if (state := busy(repo)) is not None:
        warn(f"a {state.name.lower().replace('_', '-')} is in progress; vaultd commits nothing until it is done")
    branch = branch_of(repo)
    if branch is None:
        warn("HEAD is detached; vaultd commits only on a branch: check one out")
    if command.run(repo.top, "var", "GIT_AUTHOR_IDENT", ok=(0, 128)).status != 0:
        warn("git has no user.name/user.email for this repository; vaultd's commits are by 'vaultd <vaultd@localhost>'")
    if entry.git is not GitMode.OFF and branch is not None:
        try:
            _, staging = keeper.tools()
            staged = staging.staged(resolve(repo, branch), flush=False)
        except VaultError:
            staged = []
        if staged:
            warn(f"staged changes in the vault's paths ({describe(staged)}) hold back vaultd's commits: commit or unstage them")
    if keeper.pending:
        warn(f"{len(keeper.pending)} operation(s) wait for their commit: {keeper.problem or 'see the daemon log'}")
    elif keeper.problem:
        warn(keeper.problem)
    if entry.remote is not None:
        if not repo.is_root:
            found.append(Finding(level=Level.FAIL, check=f"remote:{entry.id}", finding="only a vault that is its repository's root syncs"))
        problems = remote.problems(repo, entry.remote)
        for issue in problems:
            found.append(Finding(level=Level.FAIL, check=f"remote:{entry.id}", finding=issue.message))
        if not problems:
            interval = f"; background sync every {entry.sync_interval_s} s" if entry.sync_interval_s else ""
            found.append(Finding(level=Level.OK, check=f"remote:{entry.id}", finding=f"origin is {command.redact(entry.remote)}{interval}"))
    return found
