"""vault.add, vault.list and vault.remove: the registry, changed only through the daemon."""

from __future__ import annotations

import hashlib
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import msgspec
import structlog

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from protocol.methods import vaults
from protocol.methods.common import Empty  # noqa: TC001 - handler annotation, read by get_type_hints in tests/unit/test_protocol_table.py
from protocol.methods.vaults import (
    VaultAddParams,
    VaultEntry,
    VaultInfo,
    VaultListResult,
    VaultRemoved,
    VaultRemoveParams,
    VaultRemovePreview,
    VaultRemoveResult,
    VaultSetApplied,
    VaultSetParams,
    VaultSetPreview,
    VaultSetResult,
)
from vaultd.api.git_methods import check_git_entry, git_config_warnings
from vaultd.api.handlers import CallContext, handles
from vaultd.errors import InvalidParams, NotFound, StalePreview, ValidationFailed
from vaultd.policy import check_inside_vault, check_new_path, validate_pii_policy
from vaultd.registry.changes import changed_entry, setting_changes
from vaultd.registry.config import canonical_folder, check_new_entry
from vaultd.vault.oplog import LogFile, foreign_message, log_file_kind, log_name

if TYPE_CHECKING:
    from vaultd.registry.config import Config

log = structlog.get_logger("vaultd.registry")


def check_log_path(entry: VaultEntry) -> None:
    """Refuse a log path that is not a safe note path, or where a file of the user's already is:
    vaultd's log never adopts a note (a diary named log.md stays the user's).

    Raises:
        InvalidParams: INVALID_PARAMS, the log path is not a safe new path inside the vault.
        ValidationFailed: VALIDATION (V09), a file of the user's already has that path.
    """
    rel = log_name(entry)
    problems = check_new_path(rel) + check_inside_vault(Path(entry.path), rel)
    if problems:
        raise InvalidParams(f"log path {rel!r}: {problems[0].message}", issues=problems)
    if log_file_kind(Path(entry.path), rel) == LogFile.FOREIGN:
        message = foreign_message(rel, entry.id, shlex.quote(entry.path))
        raise ValidationFailed(f"refused: {message}", issues=[Issue(code=IssueCode.V09, path=rel, message=message)])


def _info(ctx: CallContext, entry: VaultEntry) -> VaultInfo:
    return VaultInfo(entry=entry, health=ctx.host.vault(entry.id).health())


def check_pii_policy(entry: VaultEntry) -> None:
    """Refuse a PII policy whose patterns cannot screen (P03): a vault must never believe it is
    screened by a pattern that matches nothing.

    Raises:
        ValidationFailed: VALIDATION (P03), a pattern is invalid or repeated.
    """
    problems = validate_pii_policy(entry.pii)
    if problems:
        raise ValidationFailed(f"the PII policy is not usable: {problems[0].message}", issues=problems)


@handles(vaults.VAULT_ADD)
async def add(ctx: CallContext, params: VaultAddParams) -> VaultInfo:
    host = ctx.host
    path = canonical_folder(params.path)
    entry = VaultEntry(
        id=params.id,
        path=path,
        kind=params.kind,
        write=params.write,
        schema=params.schema,
        pii=params.pii,
        deny_paths=params.deny_paths,
        private_paths=params.private_paths,
        log_path=params.log_path,
        agents=params.agents,
        dead_links=params.dead_links,
        sources=params.sources,
        git=params.git,
        remote=params.remote,
        snapshot_quiet_s=params.snapshot_quiet_s,
        sync_interval_s=params.sync_interval_s,
        domains=params.domains,
        roles=params.roles,
        git_raw=params.git_raw,
        projects=params.projects,
        canon_tables=params.canon_tables,
    )
    if params.stamp_keys is not None:
        entry = msgspec.structs.replace(entry, stamp_keys=params.stamp_keys)
    if params.parent_keys is not None:
        entry = msgspec.structs.replace(entry, parent_keys=params.parent_keys)
    check_pii_policy(entry)
    await anyio.to_thread.run_sync(check_log_path, entry)
    await anyio.to_thread.run_sync(check_git_entry, entry)

    def change(config: Config) -> Config:
        check_new_entry(config, entry, host.home)
        return msgspec.structs.replace(config, vaults=[*config.vaults, entry])

    warnings = await anyio.to_thread.run_sync(git_config_warnings, entry)
    await anyio.to_thread.run_sync(host.config.update, change)
    await host.attach_and_index(entry)
    return VaultInfo(entry=entry, health=ctx.host.vault(entry.id).health(), warnings=warnings)


@handles(vaults.VAULT_LIST)
async def list_vaults(ctx: CallContext, params: Empty) -> VaultListResult:
    config = await anyio.to_thread.run_sync(ctx.host.config.load)
    infos = []
    for entry in config.vaults:
        runtime = ctx.host.vaults.get(entry.id)
        if runtime is not None:
            infos.append(VaultInfo(entry=entry, health=runtime.health()))
    return VaultListResult(vaults=infos)


def removal_fingerprint(entry: VaultEntry) -> str:
    """Covers the operation and the entry as registered, so a changed entry needs a new preview."""
    return hashlib.sha256(b"vault.remove\0" + msgspec.json.encode(entry)).hexdigest()


@handles(vaults.VAULT_REMOVE)
async def remove(ctx: CallContext, params: VaultRemoveParams) -> VaultRemoveResult:
    """Unregister a vault in two steps (preview, then confirm its fingerprint); its files are never
    touched.

    Raises:
        NotFound: NOT_FOUND, no vault with that id is registered.
        InvalidParams: INVALID_PARAMS, confirm without the preview's fingerprint.
    """
    host = ctx.host
    config = await anyio.to_thread.run_sync(host.config.load)
    entry = next((e for e in config.vaults if e.id == params.id), None)
    if entry is None:
        raise NotFound(f"no vault {params.id!r} is registered; see 'vaultctl vault list'")
    fingerprint = removal_fingerprint(entry)
    if not params.confirm:
        return VaultRemovePreview(fingerprint=fingerprint, entry=entry)
    if params.fingerprint is None:
        raise InvalidParams("confirm needs the fingerprint from the preview")

    def change(current: Config) -> Config:
        """Remove the entry from the registry as it is at save time, only if it is still the one
        previewed.

        Raises:
            StalePreview: STALE_PREVIEW, the entry changed or went since the preview.
        """
        now = next((e for e in current.vaults if e.id == params.id), None)
        if now is None or removal_fingerprint(now) != params.fingerprint:
            raise StalePreview("the vault entry changed since the preview; preview again")
        return msgspec.structs.replace(current, vaults=[e for e in current.vaults if e.id != params.id])

    await anyio.to_thread.run_sync(host.config.update, change)
    host.detach(params.id)
    return VaultRemoved(entry=entry)


def setting_fingerprint(entry: VaultEntry, params: VaultSetParams) -> str:
    """Covers the entry as registered and the change asked for: a preview confirms only itself."""
    asked = msgspec.structs.replace(params, confirm=False, fingerprint=None)
    return hashlib.sha256(b"vault.set\0" + msgspec.json.encode(entry) + b"\0" + msgspec.json.encode(asked)).hexdigest()


def _registered(config: Config, vault_id: str) -> VaultEntry:
    """The entry a vault call names, from the registry as read.

    Raises:
        NotFound: NOT_FOUND, no vault with that id is registered.
    """
    entry = next((e for e in config.vaults if e.id == vault_id), None)
    if entry is None:
        raise NotFound(f"no vault {vault_id!r} is registered; see 'vaultctl vault list'")
    return entry


@handles(vaults.VAULT_SET)
async def set_settings(ctx: CallContext, params: VaultSetParams) -> VaultSetResult:
    """Change a vault's settings in two steps (preview, then confirm its fingerprint).

    Raises:
        InvalidParams: INVALID_PARAMS, confirm without the preview's fingerprint.
    """
    host = ctx.host
    config = await anyio.to_thread.run_sync(host.config.load)
    entry = _registered(config, params.id)
    after = changed_entry(entry, params)
    check_pii_policy(after)
    changes = setting_changes(entry, after)
    fingerprint = setting_fingerprint(entry, params)
    if not params.confirm or not changes:
        return VaultSetPreview(fingerprint=fingerprint, changes=changes, entry=after)
    if params.fingerprint is None:
        raise InvalidParams("confirm needs the fingerprint from the preview")
    runtime = host.vaults.get(params.id)

    def change(current: Config) -> Config:
        """Apply the settings to the registry as it is at save time, only if they are still the ones
        previewed.

        Raises:
            StalePreview: STALE_PREVIEW, the vault's settings (or the change asked) differ from the
                preview.
        """
        now = _registered(current, params.id)
        if setting_fingerprint(now, params) != params.fingerprint:
            raise StalePreview("the vault's settings changed since the preview, or the change asked is another; preview again")
        return msgspec.structs.replace(current, vaults=[after if e.id == params.id else e for e in current.vaults])

    if runtime is None:
        await anyio.to_thread.run_sync(host.config.update, change)
    else:
        # Under the writer, so no operation plans under the old policy and applies under the new.
        async with runtime.writer:
            await anyio.to_thread.run_sync(host.config.update, change)
            runtime.entry = after
    log.info(
        "vault settings changed", vault=params.id, settings=[c.setting for c in changes], loosened=[c.setting for c in changes if c.loosens]
    )
    return VaultSetApplied(changes=changes, entry=after)
