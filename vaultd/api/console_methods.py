"""console.open and console.stop: the daemon starts the web console and hands out its tokens.

The address is answered to the caller only; it is never logged (the token in it is a login).
"""

from __future__ import annotations

from protocol.methods import console
from protocol.methods.common import Empty  # noqa: TC001 - handler annotation, read by get_type_hints in tests/unit/test_protocol_table.py
from protocol.methods.console import ConsoleOpenParams, ConsoleOpenResult, ConsoleStopResult
from vaultd.api.handlers import CallContext, handles


@handles(console.CONSOLE_OPEN)
async def console_open(ctx: CallContext, params: ConsoleOpenParams) -> ConsoleOpenResult:
    # NOT_FOUND for an unknown vault, before anything starts; with no vault at all the page opens on none
    vault = ctx.host.vault(params.vault).entry.id if params.vault is not None or ctx.host.vaults else None
    return await ctx.host.console.open(vault)


@handles(console.CONSOLE_STOP)
async def console_stop(ctx: CallContext, params: Empty) -> ConsoleStopResult:
    return ConsoleStopResult(stopped=await ctx.host.console.stop())
