"""Handlers of the git methods: history reads, the vault's git settings, snapshots and sync.

History reads see the vault through the caller's visibility like every read: a note private to the
caller's channel has no history either. Settings, snapshots and sync are not MCP tools, so the
daemon refuses them to agents. Promotion and reverts are operations: their handlers are made from
the catalogue (:mod:`vaultd.api.operation_methods`) and go through the agent gate like every write.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import msgspec

from protocol.methods import git
from protocol.methods.git import (
    NoteDiffParams,
    NoteDiffResult,
    NoteHistoryParams,
    NoteHistoryResult,
    SnapshotParams,
    SnapshotResult,
    SyncParams,
    SyncResult,
    VaultGitParams,
)
from protocol.methods.git_settings import GitMode
from protocol.methods.vaults import VaultEntry, VaultInfo
from vaultd.api.handlers import CallContext, handles
from vaultd.api.read_methods import history_path
from vaultd.errors import InvalidParams, NotFound
from vaultd.git import history
from vaultd.git.doctor import config_issues
from vaultd.git.repo import Repo, require
from vaultd.policy.visibility import Visibility
from vaultd.txn.engine import read_current

if TYPE_CHECKING:
    from protocol.errors import Issue
    from vaultd.registry.config import Config
    from vaultd.runtime import VaultRuntime

MAX_LISTED = git.MAX_SYNC_LISTED


async def _note_path(ctx: CallContext, vault: str | None, target: str) -> tuple[VaultRuntime, str]:
    return ctx.host.vault(vault), await history_path(ctx, vault, target)


@handles(git.NOTE_HISTORY)
async def note_history(ctx: CallContext, params: NoteHistoryParams) -> NoteHistoryResult:
    """A note's commits, newest first, with the commits a private note's name would leak left out.

    Raises:
        NotFound: NOT_FOUND, no commit the caller may see touched the note and it is not in the
            vault now.
    """
    runtime, path = await _note_path(ctx, params.vault, params.target)
    repo = await anyio.to_thread.run_sync(require, runtime.root, runtime.entry.id)
    entries, truncated = await anyio.to_thread.run_sync(history.log, repo, path, params.limit)
    seen = Visibility.of(runtime.entry, ctx.channel)
    index = runtime.live.index if runtime.live is not None else None
    entries = [e for e in entries if seen.visible(e.path) and not seen.names_hidden_in(e.subject, index)]
    if not entries and not (runtime.live and path in runtime.live.index.notes):
        raise NotFound(f"no commit touched {path}; see 'vaultctl history' of a note the repository tracks")
    return NoteHistoryResult(path=path, entries=entries, truncated=truncated)


@handles(git.NOTE_DIFF)
async def note_diff(ctx: CallContext, params: NoteDiffParams) -> NoteDiffResult:
    runtime, path = await _note_path(ctx, params.vault, params.target)
    repo = await anyio.to_thread.run_sync(require, runtime.root, runtime.entry.id)

    seen = Visibility.of(runtime.entry, ctx.channel)

    def compute() -> NoteDiffResult:
        """The diff in a worker thread: reading blobs runs git.

        Raises:
            NotFound: NOT_FOUND, the note was private to the caller at either revision (as if it did
                not exist).
        """
        if params.to_rev is not None:
            new = history.at(repo, path, params.to_rev)
        else:
            new = history.Version(None, path, read_current(runtime.root, path))
        old = history.at(repo, new.path, params.from_rev) if params.from_rev is not None else history.last_commit(repo, new.path)
        if params.from_rev is None and params.to_rev is not None and old is not None:
            old = _before(repo, new)
        if any(seen.hidden(v.path) for v in (old, new) if v is not None):
            raise NotFound(f"no note {params.target!r} in vault {runtime.entry.id!r}")  # it was private at that revision
        diff = history.unified(old, new)
        return NoteDiffResult(
            path=new.path,
            from_commit=old.commit if old else None,
            to_commit=new.commit,
            diff=diff.text,
            truncated=diff.truncated,
            added=diff.added,
            removed=diff.removed,
        )

    return await anyio.to_thread.run_sync(compute)


def _before(repo: Repo, new: history.Version) -> history.Version | None:
    """The version before a commit's: its first parent's, or nothing for a note that commit added."""
    try:
        return history.at(repo, new.path, f"{new.commit}~1")
    except NotFound:
        return None


# -- settings and snapshots --------------------------------------------------------------------


def _apply_settings(entry: VaultEntry, params: VaultGitParams) -> VaultEntry:
    """The entry with the git settings asked for, checked as a whole (the fields depend on each
    other).

    Raises:
        InvalidParams: INVALID_PARAMS, remote and clear_remote both given, or a sync interval under
            a minute.
    """
    changes: dict[str, object] = {}
    if params.mode is not None:
        changes["git"] = params.mode
    if params.clear_remote and params.remote is not None:
        raise InvalidParams("give remote or clear_remote, not both")
    if params.remote is not None:
        changes["remote"] = params.remote
    if params.clear_remote:
        changes["remote"] = None
    if params.snapshot_quiet_s is not None:
        changes["snapshot_quiet_s"] = params.snapshot_quiet_s
    if params.sync_interval_s is not None:
        if 0 < params.sync_interval_s < 60:
            raise InvalidParams("sync_interval_s: background sync runs at most once a minute (60 or more; 0 turns it off)")
        changes["sync_interval_s"] = params.sync_interval_s or None
    return msgspec.structs.replace(entry, **changes)


def check_git_entry(entry: VaultEntry) -> None:
    """A vault that records history or syncs must be in a git repository (worker thread).

    Raises:
        Unavailable: UNAVAILABLE, it is in none, or git is missing.
    """
    if entry.git is not GitMode.OFF or entry.remote is not None:
        require(Path(entry.path), entry.id)


def git_config_warnings(entry: VaultEntry) -> list[Issue]:
    """R09 when a vault that records history or syncs sits in a repository whose own config names
    commands (worker thread)."""
    if entry.git is GitMode.OFF and entry.remote is None:
        return []
    return config_issues(Path(entry.path))


@handles(git.VAULT_GIT)
async def vault_git(ctx: CallContext, params: VaultGitParams) -> VaultInfo:
    host = ctx.host
    runtime = host.vault(params.id)
    wanted = _apply_settings(runtime.entry, params)
    await anyio.to_thread.run_sync(check_git_entry, wanted)

    def change(config: Config) -> Config:
        """Apply the settings to the registry as it is at save time, not as it was read.

        Raises:
            NotFound: NOT_FOUND, the vault was removed from the registry meanwhile.
        """
        current = next((e for e in config.vaults if e.id == params.id), None)
        if current is None:
            raise NotFound(f"no vault {params.id!r} is registered; see 'vaultctl vault list'")
        updated = _apply_settings(current, params)
        return msgspec.structs.replace(config, vaults=[updated if e.id == params.id else e for e in config.vaults])

    config = await anyio.to_thread.run_sync(host.config.update, change)
    entry = next(e for e in config.vaults if e.id == params.id)
    async with runtime.writer:  # no commit is half-way while the keeper changes mode
        await anyio.to_thread.run_sync(runtime.git.configure, entry)  # first: it compares the old mode with the new
        runtime.entry = entry
    warnings = await anyio.to_thread.run_sync(git_config_warnings, entry)
    return VaultInfo(entry=entry, health=runtime.health(), warnings=warnings)


@handles(git.VAULT_SNAPSHOT)
async def vault_snapshot(ctx: CallContext, params: SnapshotParams) -> SnapshotResult:
    runtime = ctx.host.vault(params.vault)
    await runtime.wait_ready()
    runtime.git.require_mode()
    async with runtime.writer:
        live = runtime.owned_live()
        await live.barrier()
        taken = await anyio.to_thread.run_sync(lambda: runtime.git.snapshot_sync(force=True))
    if taken.waiting:
        message = "a file changed while it was read; nothing was committed: run it again in a moment"
    elif taken.made is None:
        message = "nothing to commit: the vault's files are as its last commit holds them"
    else:
        message = f"committed {len(taken.paths)} file(s) as {taken.made.commit[:12]}"
    return SnapshotResult(
        commit=taken.made.commit if taken.made else None,
        paths=taken.paths[:MAX_LISTED],
        omitted=max(0, len(taken.paths) - MAX_LISTED),
        message=message,
    )


# -- sync, promotion, reverts ------------------------------------------------------------------


@handles(git.VAULT_SYNC)
async def vault_sync(ctx: CallContext, params: SyncParams) -> SyncResult:
    runtime = ctx.host.vault(params.vault)
    from vaultd.ops.git.sync import sync_vault  # the write path: loaded with the first sync, not with vault.add

    return await sync_vault(runtime, dry_run=params.dry_run, by=f"{ctx.channel}:{ctx.client}")
