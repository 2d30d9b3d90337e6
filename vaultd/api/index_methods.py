"""vault.rebuild: every note of a vault re-read, its progress streamed to subscribers; requests that
pile up join one rebuild, and each connection queues at most a few (see :mod:`vaultd.vault_work`)."""

from __future__ import annotations

from protocol.methods import indexing
from protocol.methods.indexing import VaultRebuildParams, VaultRebuildResult
from vaultd.api.handlers import CallContext, handles
from vaultd.vault_work import VAULT_WORK


@handles(indexing.VAULT_REBUILD)
async def rebuild(ctx: CallContext, params: VaultRebuildParams) -> VaultRebuildResult:
    runtime = ctx.host.vault(params.vault)
    async with VAULT_WORK.admitted(ctx, "vault.rebuild"):
        done = await runtime.rebuild(VAULT_WORK.turn)
    return VaultRebuildResult(
        vault=runtime.entry.id, notes=done.notes, parsed=done.parsed, changed=done.changed, seconds=round(done.seconds, 3)
    )
