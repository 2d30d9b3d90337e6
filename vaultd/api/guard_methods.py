"""guard.check and guard.context: the questions agent-host hooks ask before a tool runs.

Both are reads answered from the registry entries the daemon serves, never from a note; the rule
itself is :func:`protocol.methods.guard.verdict`, shared with the hook's fallback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from protocol.methods import guard
from protocol.methods.common import Empty  # noqa: TC001 - handler annotation, read by get_type_hints in tests/unit/test_protocol_table.py
from protocol.methods.gate import Gate, OpClass
from protocol.methods.guard import GuardCheckParams, GuardCheckResult, GuardContextResult, VaultContext, canonical, guarded, verdict
from protocol.methods.vaults import VaultState
from vaultd.api.handlers import CallContext, handles
from vaultd.api.session_methods import hot_summary
from vaultd.errors import VaultError
from vaultd.gate.store import store_for

if TYPE_CHECKING:
    from vaultd.runtime import VaultRuntime

MAX_CONTEXT_VAULTS = 8  #: what a session-start hook may put in a model's context stays short


@handles(guard.GUARD_CHECK)
async def check(ctx: CallContext, params: GuardCheckParams) -> GuardCheckResult:
    entries = [runtime.entry for runtime in ctx.host.vaults.values()]

    def judge() -> list[guard.GuardVerdict]:
        return [verdict(entries, canonical(path)) for path in params.paths]

    verdicts = await anyio.to_thread.run_sync(judge)
    return GuardCheckResult(refused=any(v.refused for v in verdicts), verdicts=verdicts, guarded=guarded(entries))


async def _context(runtime: VaultRuntime) -> VaultContext:
    policy = runtime.entry.agent_policy()
    pending = 0
    if runtime.state in (VaultState.READY, VaultState.INDEXING):
        try:
            pending = await anyio.to_thread.run_sync(store_for(runtime.root).pending_count)
        except VaultError:
            pending = 0  # an unusable proposals folder is a doctor finding, not a reason to stay silent
    return VaultContext(
        id=runtime.entry.id,
        path=runtime.entry.path,
        notes=runtime.note_count(),
        pending_proposals=pending,
        proposes=[c.value for c in OpClass if policy.gate(c) is Gate.PROPOSE],
        refuses=[c.value for c in OpClass if policy.gate(c) is Gate.REFUSE],
        hot=await hot_summary(runtime) if runtime.state is VaultState.READY else "",
    )


@handles(guard.GUARD_CONTEXT)
async def context(ctx: CallContext, params: Empty) -> GuardContextResult:
    told = [r for r in ctx.host.vaults.values() if r.entry.agent_policy().session_context][:MAX_CONTEXT_VAULTS]
    return GuardContextResult(vaults=[await _context(r) for r in told])
