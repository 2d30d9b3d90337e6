"""vault.rebuild: every note of a vault re-read, its progress streamed to subscribers."""

from __future__ import annotations

from protocol.methods import indexing
from protocol.methods.indexing import VaultRebuildParams, VaultRebuildResult
from vaultd.api.handlers import CallContext, handles


@handles(indexing.VAULT_REBUILD)
async def rebuild(ctx: CallContext, params: VaultRebuildParams) -> VaultRebuildResult:
    runtime = ctx.host.vault(params.vault)
    done = await runtime.rebuild()
    return VaultRebuildResult(
        vault=runtime.entry.id, notes=done.notes, parsed=done.parsed, changed=done.changed, seconds=round(done.seconds, 3)
    )
