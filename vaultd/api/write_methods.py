"""Handlers of the write methods that are not operations: the list of kept operations and the log.

Every write operation's handler is made from the operation catalogue
(:mod:`vaultd.api.operation_methods`); these answer the methods around them.
"""

from __future__ import annotations

import datetime as dt
import functools

import anyio

from protocol.methods import writes
from protocol.methods.common import Channel
from protocol.methods.receipts import LogReceipt
from protocol.methods.writes import LogAppendParams, LogGrepParams, LogLines, LogTailParams, OpListParams, OpListResult
from vaultd.api.handlers import CallContext, handles
from vaultd.api.read_methods import live_view
from vaultd.errors import PolicyRefused
from vaultd.ops import screen_log_line
from vaultd.ops.undo import list_ops
from vaultd.policy import write_channel_issue
from vaultd.policy.visibility import Visibility
from vaultd.vault import oplog


@handles(writes.OP_LIST)
async def op_list(ctx: CallContext, params: OpListParams) -> OpListResult:
    live, view = await live_view(ctx, params.vault)
    root = ctx.host.vault(params.vault).root
    async with live.held_still() as index:
        ops = await anyio.to_thread.run_sync(list_ops, root, view, index, params.limit)
    return OpListResult(ops=ops)


@handles(writes.LOG_APPEND)
async def log_append(ctx: CallContext, params: LogAppendParams) -> LogReceipt:
    """Record an event in the vault's log: not a write operation (nothing to preview or undo), but
    screened as one is.

    Raises:
        PolicyRefused: POLICY (P01), the vault's write policy refuses this channel.
        ValidationFailed: VALIDATION, the event holds a secret or PII the log refuses, or a project
            the vault's project registry does not declare (V18).
    """
    runtime = ctx.host.vault(params.vault)
    runtime.check_root()
    if (issue := write_channel_issue(runtime.entry.write, ctx.channel)) is not None:
        raise PolicyRefused(issue.message, issues=[issue])
    line = oplog.format_line(params.event, dt.datetime.now().astimezone(), agent=ctx.channel == Channel.MCP)
    screen_log_line(runtime.entry, line, params.event.project)  # the very screen an operation's log event passes
    async with runtime.writer:
        runtime.check_root()
        await anyio.to_thread.run_sync(oplog.append, runtime.root, line, oplog.log_name(runtime.entry))
    return LogReceipt(appended=True, line=line.rstrip("\n"))


@handles(writes.LOG_TAIL)
async def log_tail(ctx: CallContext, params: LogTailParams) -> LogLines:
    runtime = ctx.host.vault(params.vault)
    runtime.check_root()
    rel = oplog.log_name(runtime.entry)
    view = Visibility.of(runtime.entry, ctx.channel)
    if view.hidden(rel):
        return LogLines(lines=[], warnings=[])  # a private log is absent, like any private note
    hide = view.names_hidden if view.hides_anything else None
    lines, warnings = await anyio.to_thread.run_sync(functools.partial(oplog.tail, runtime.root, params.limit, params.type, rel, hide=hide))
    return LogLines(lines=lines, warnings=warnings)


@handles(writes.LOG_GREP)
async def log_grep(ctx: CallContext, params: LogGrepParams) -> LogLines:
    runtime = ctx.host.vault(params.vault)
    runtime.check_root()
    rel = oplog.log_name(runtime.entry)
    view = Visibility.of(runtime.entry, ctx.channel)
    if view.hidden(rel):
        oplog.grep_pattern(params.pattern)  # a bad pattern is still refused as such
        return LogLines(lines=[], warnings=[])
    hide = view.names_hidden if view.hides_anything else None
    lines, warnings = await anyio.to_thread.run_sync(
        functools.partial(oplog.grep, runtime.root, params.pattern, params.limit, params.type, rel, hide=hide)
    )
    return LogLines(lines=lines, warnings=warnings)
