"""edition.configure and edition.list, and the schedule that publishes changed volumes.

``edition.publish`` is an operation (:mod:`vaultd.ops.edition_publish`). The schedule is a
person's setting, so a scheduled edition is published as a person's operation would be: through
the same runner, on the ``cli`` channel, by the client ``vaultd-schedule``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio
import msgspec
import structlog

from protocol.methods import editions
from protocol.methods.common import Channel
from protocol.methods.editions import (
    MAX_VOLUMES_LISTED,
    EditionConfigureParams,
    EditionConfigureResult,
    EditionListParams,
    EditionListResult,
    EditionPublishParams,
    Schedule,
    VolumeInfo,
    VolumesSettings,
)
from vaultd.api.handlers import CallContext, handles
from vaultd.editions.volume import body_of, clean_folder, latest_edition, volume_hash, volume_name, volumes
from vaultd.errors import Conflict, InvalidParams, NotFound, PolicyRefused, VaultError
from vaultd.ops import operations
from vaultd.txn.engine import read_current

if TYPE_CHECKING:
    from pathlib import Path

    from vaultd.registry.config import Config
    from vaultd.runtime import VaultRuntime
    from vaultd.vault.index import VaultIndex

log = structlog.get_logger("vaultd.editions")

SCHEDULE_CHECK_S = 300.0  #: how often a vault's schedule is looked at
FIRST_CHECK_S = 5.0  #: after the vault is taken: an edition due while the daemon was down is made soon


@handles(editions.EDITION_CONFIGURE)
async def configure(ctx: CallContext, params: EditionConfigureParams) -> EditionConfigureResult:
    """Set (or clear) the vault's volumes folder, editions folder and schedule (a person only).

    Raises:
        PolicyRefused: POLICY, an agent asked.
        InvalidParams: INVALID_PARAMS, a folder leaves the vault or hides, or the two overlap.
    """
    if ctx.channel == Channel.MCP:
        raise PolicyRefused("only a person sets where journal volumes live and when they publish")
    runtime = ctx.host.vault(params.vault)
    current = runtime.entry.volumes or VolumesSettings()
    settings: VolumesSettings | None = None
    if not params.off:
        folder = clean_folder(params.folder) if params.folder is not None else current.folder
        where = clean_folder(params.editions) if params.editions is not None else current.editions
        if folder is None or where is None:
            raise InvalidParams("a volumes or editions folder is a vault-relative folder, not hidden and not leaving the vault")
        if folder == where or folder.startswith(where + "/") or where.startswith(folder + "/"):
            raise InvalidParams("the editions folder and the volumes folder may not hold one another")
        schedule = params.schedule if params.schedule is not None else current.schedule
        settings = VolumesSettings(folder=folder, editions=where, schedule=schedule)
    vault_id = runtime.entry.id

    def change(config: Config) -> Config:
        return msgspec.structs.replace(
            config, vaults=[msgspec.structs.replace(e, volumes=settings) if e.id == vault_id else e for e in config.vaults]
        )

    async with runtime.writer:  # no operation plans under the old folders and applies under the new
        await anyio.to_thread.run_sync(ctx.host.config.update, change)
        runtime.entry = msgspec.structs.replace(runtime.entry, volumes=settings)
    log.info("journal volumes set", vault=vault_id, volumes=msgspec.to_builtins(settings))
    return EditionConfigureResult(vault=vault_id, volumes=settings)


def _volume_infos(index: VaultIndex, settings: VolumesSettings, root: Path) -> list[VolumeInfo]:
    """Each volume with its entries counted and whether they changed since its latest edition
    (worker thread, index held still)."""
    notes = {p: r.frontmatter for p, r in index.notes.items()}
    out = []
    for volume, paths in list(volumes(settings, index.notes).items())[:MAX_VOLUMES_LISTED]:
        prefix = f"{settings.folder}/{volume}/"
        entries = [(p.removeprefix(prefix), body_of((read_current(root, p) or b"").decode("utf-8", errors="replace"))) for p in paths]
        latest = latest_edition(settings, volume, notes)
        changed = latest is None or latest[1] != volume_hash(entries)
        out.append(
            VolumeInfo(volume=volume, name=volume_name(volume), entries=len(paths), latest=latest[0] if latest else None, changed=changed)
        )
    return out


@handles(editions.EDITION_LIST)
async def list_volumes(ctx: CallContext, params: EditionListParams) -> EditionListResult:
    runtime = ctx.host.vault(params.vault)
    await runtime.wait_ready()
    settings = runtime.entry.volumes
    if settings is None:
        return EditionListResult(volumes=[], settings=None)
    live = runtime.owned_live()
    async with live.held_still() as index:
        infos = await anyio.to_thread.run_sync(_volume_infos, index, settings, runtime.root)
    return EditionListResult(volumes=infos, settings=settings)


# -- the schedule ----------------------------------------------------------------------------------


def due(schedule: Schedule, latest_day: str | None, today: dt.date) -> bool:
    """Whether a volume whose latest edition is of ``latest_day`` is due a new one today."""
    if latest_day is None:
        return True
    try:
        last = dt.date.fromisoformat(latest_day[:10])
    except ValueError:
        return True
    if schedule is Schedule.DAILY:
        return last < today
    if schedule is Schedule.WEEKLY:
        return (today - last).days >= 7
    return (last.year, last.month) < (today.year, today.month)


@dataclass(frozen=True, slots=True)
class _ScheduleCall:
    """The schedule a person set, publishing as that person would (a WriteCall)."""

    runtime: VaultRuntime
    channel: Channel = Channel.CLI
    client: str = "vaultd-schedule"
    session: str | None = None

    @property
    def host(self) -> _ScheduleCall:
        return self

    def vault(self, vault_id: str | None) -> VaultRuntime:
        return self.runtime


async def publish_due(runtime: VaultRuntime) -> list[str]:
    """Publish every changed volume whose schedule says an edition is due; the editions written."""
    settings = runtime.entry.volumes
    if settings is None or settings.schedule is None:
        return []
    listed = await list_volumes_of(runtime, settings)
    today = dt.datetime.now().astimezone().date()
    notes_days: dict[str, str | None] = {}
    live = runtime.owned_live()
    for info in listed:
        day = None
        if info.latest is not None:
            record = live.index.notes.get(info.latest)
            day = str((record.frontmatter or {}).get("edition") or "") if record is not None else None
        notes_days[info.volume] = day
    written = []
    publish = operations()[editions.EDITION_PUBLISH.name]
    for info in listed:
        if not info.changed or not due(settings.schedule, notes_days[info.volume], today):
            continue
        try:
            receipt = await publish.run(_ScheduleCall(runtime), EditionPublishParams(vault=runtime.entry.id, volume=info.volume))
        except (Conflict, NotFound):
            continue  # changed back meanwhile, or gone
        written += [c.path for c in receipt.changes]
        log.info("scheduled edition published", vault=runtime.entry.id, volume=info.volume)
    return written


async def list_volumes_of(runtime: VaultRuntime, settings: VolumesSettings) -> list[VolumeInfo]:
    live = runtime.owned_live()
    async with live.held_still() as index:
        return await anyio.to_thread.run_sync(_volume_infos, index, settings, runtime.root)


async def scheduled_editions(runtime: VaultRuntime) -> None:
    """Publish due editions on the vault's schedule (opt-in), until the vault is released. A
    failure is logged and tried again at the next look; it never stops the daemon."""
    keeper = runtime.git
    await keeper.sleep(FIRST_CHECK_S)
    while not keeper.stopped:
        settings = runtime.entry.volumes
        if settings is not None and settings.schedule is not None:
            try:
                await runtime.wait_ready()
                await publish_due(runtime)
            except (VaultError, OSError) as exc:
                log.warning("scheduled editions failed", vault=runtime.entry.id, error=getattr(exc, "message", None) or str(exc))
        await keeper.sleep(SCHEDULE_CHECK_S)
