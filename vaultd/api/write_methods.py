"""Handlers of the write methods: each binds a planner to the operation runner."""

from __future__ import annotations

import functools

import anyio

from protocol.methods import writes
from protocol.methods.common import Channel
from protocol.methods.receipts import DeleteDetail, LogReceipt, MergeDetail, MoveDetail, NoDetail, WriteReceipt
from protocol.methods.writes import (
    AppendParams,
    CreateParams,
    DeleteParams,
    LinkParams,
    LogAppendParams,
    LogGrepParams,
    LogLines,
    LogTailParams,
    MergeParams,
    MoveParams,
    OpListParams,
    OpListResult,
    PatchParams,
    SetFrontmatterParams,
    SupersedeParams,
    UndoParams,
)
from vaultd.api.handlers import CallContext, handles
from vaultd.errors import PolicyRefused
from vaultd.ops.append import plan_append
from vaultd.ops.context import OpContext
from vaultd.ops.create import plan_create
from vaultd.ops.delete import delete_detail, plan_delete
from vaultd.ops.link import plan_link
from vaultd.ops.merge import merge_detail, plan_merge
from vaultd.ops.move import move_detail, plan_move
from vaultd.ops.patch import plan_patch
from vaultd.ops.runner import no_detail, run_operation
from vaultd.ops.set_frontmatter import plan_set_frontmatter
from vaultd.ops.supersede import plan_supersede
from vaultd.ops.undo import list_ops, plan_undo
from vaultd.policy import pii_findings, secret_issues, write_channel_issue
from vaultd.policy.visibility import Visibility
from vaultd.vault import oplog


@handles(writes.CREATE)
async def create(ctx: CallContext, params: CreateParams) -> WriteReceipt[NoDetail]:
    return await run_operation(ctx, params, plan_create, no_detail)


@handles(writes.PATCH)
async def patch(ctx: CallContext, params: PatchParams) -> WriteReceipt[NoDetail]:
    return await run_operation(ctx, params, plan_patch, no_detail)


@handles(writes.APPEND)
async def append(ctx: CallContext, params: AppendParams) -> WriteReceipt[NoDetail]:
    return await run_operation(ctx, params, plan_append, no_detail)


@handles(writes.SET_FRONTMATTER)
async def set_frontmatter(ctx: CallContext, params: SetFrontmatterParams) -> WriteReceipt[NoDetail]:
    return await run_operation(ctx, params, plan_set_frontmatter, no_detail)


@handles(writes.LINK)
async def link(ctx: CallContext, params: LinkParams) -> WriteReceipt[NoDetail]:
    return await run_operation(ctx, params, plan_link, no_detail)


@handles(writes.SUPERSEDE)
async def supersede(ctx: CallContext, params: SupersedeParams) -> WriteReceipt[NoDetail]:
    return await run_operation(ctx, params, plan_supersede, no_detail)


@handles(writes.MOVE)
async def move(ctx: CallContext, params: MoveParams) -> WriteReceipt[MoveDetail]:
    return await run_operation(ctx, params, plan_move, move_detail)


@handles(writes.DELETE)
async def delete(ctx: CallContext, params: DeleteParams) -> WriteReceipt[DeleteDetail]:
    return await run_operation(ctx, params, plan_delete, delete_detail)


@handles(writes.MERGE)
async def merge(ctx: CallContext, params: MergeParams) -> WriteReceipt[MergeDetail]:
    return await run_operation(ctx, params, plan_merge, merge_detail)


@handles(writes.UNDO)
async def undo(ctx: CallContext, params: UndoParams) -> WriteReceipt[NoDetail]:
    return await run_operation(ctx, params, plan_undo, no_detail, undoes=params.op_id)


@handles(writes.OP_LIST)
async def op_list(ctx: CallContext, params: OpListParams) -> OpListResult:
    runtime = ctx.host.vault(params.vault)
    await runtime.wait_ready()
    assert runtime.live is not None
    octx = OpContext(
        root=runtime.root,
        entry=runtime.entry,
        index=runtime.live.index,
        channel=ctx.channel,
        now=__import__("datetime").datetime.now().astimezone(),
    )
    return OpListResult(ops=await anyio.to_thread.run_sync(list_ops, octx, params.limit))


@handles(writes.LOG_APPEND)
async def log_append(ctx: CallContext, params: LogAppendParams) -> LogReceipt:
    """Record an event in the vault's log: not a write operation (nothing to preview or undo), but
    screened as one is.

    Raises:
        PolicyRefused: POLICY (P01), the vault's write policy refuses this channel.
        ValidationFailed: VALIDATION, the event holds a secret, PII, or a field the log line cannot
            carry.
    """
    import datetime as dt

    from protocol.errors import Severity
    from vaultd.errors import ValidationFailed

    runtime = ctx.host.vault(params.vault)
    runtime.check_root()
    if (issue := write_channel_issue(runtime.entry.write, ctx.channel)) is not None:
        raise PolicyRefused(issue.message, issues=[issue])
    line = oplog.format_line(params.event, dt.datetime.now().astimezone(), agent=ctx.channel == Channel.MCP)
    problems = secret_issues(line, oplog.log_name(runtime.entry)) + [
        i for i in pii_findings(line, runtime.entry.pii, runtime.entry.kind, "log") if i.severity == Severity.ERROR
    ]
    if problems:
        raise ValidationFailed(problems[0].message, issues=problems)
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
