"""Handlers of the write methods: each binds a planner to the operation runner."""

from __future__ import annotations

import anyio

from protocol.methods.common import Channel
from protocol.methods.writes import (
    AppendParams,
    CreateParams,
    DeleteParams,
    LinkParams,
    LogAppendParams,
    LogGrepParams,
    LogLines,
    LogReceipt,
    LogTailParams,
    MergeParams,
    MoveParams,
    OpListParams,
    OpListResult,
    PatchParams,
    SetFrontmatterParams,
    SupersedeParams,
    UndoParams,
    WriteReceipt,
)
from vaultd.api.registry import CallContext, handles
from vaultd.errors import PolicyRefused
from vaultd.ops.append import plan_append
from vaultd.ops.context import OpContext
from vaultd.ops.create import plan_create
from vaultd.ops.delete import delete_detail, plan_delete
from vaultd.ops.link import plan_link
from vaultd.ops.merge import merge_detail, plan_merge
from vaultd.ops.move import move_detail, plan_move
from vaultd.ops.patch import plan_patch
from vaultd.ops.runner import run_operation
from vaultd.ops.set_frontmatter import plan_set_frontmatter
from vaultd.ops.supersede import plan_supersede
from vaultd.ops.undo import list_ops, plan_undo
from vaultd.policy import pii_findings, secret_issues, write_channel_issue
from vaultd.vault import oplog


@handles("note.create")
async def create(ctx: CallContext, params: CreateParams) -> WriteReceipt:
    return await run_operation(ctx, params, plan_create)


@handles("note.patch")
async def patch(ctx: CallContext, params: PatchParams) -> WriteReceipt:
    return await run_operation(ctx, params, plan_patch)


@handles("note.append")
async def append(ctx: CallContext, params: AppendParams) -> WriteReceipt:
    return await run_operation(ctx, params, plan_append)


@handles("note.set_frontmatter")
async def set_frontmatter(ctx: CallContext, params: SetFrontmatterParams) -> WriteReceipt:
    return await run_operation(ctx, params, plan_set_frontmatter)


@handles("note.link")
async def link(ctx: CallContext, params: LinkParams) -> WriteReceipt:
    return await run_operation(ctx, params, plan_link)


@handles("note.supersede")
async def supersede(ctx: CallContext, params: SupersedeParams) -> WriteReceipt:
    return await run_operation(ctx, params, plan_supersede)


@handles("note.move")
async def move(ctx: CallContext, params: MoveParams) -> WriteReceipt:
    return await run_operation(ctx, params, plan_move, detail=move_detail)


@handles("note.delete")
async def delete(ctx: CallContext, params: DeleteParams) -> WriteReceipt:
    return await run_operation(ctx, params, plan_delete, detail=delete_detail)


@handles("note.merge")
async def merge(ctx: CallContext, params: MergeParams) -> WriteReceipt:
    return await run_operation(ctx, params, plan_merge, detail=merge_detail)


@handles("op.undo")
async def undo(ctx: CallContext, params: UndoParams) -> WriteReceipt:
    return await run_operation(ctx, params, plan_undo, undoes=params.op_id)


@handles("op.list")
async def op_list(ctx: CallContext, params: OpListParams) -> OpListResult:
    runtime = ctx.daemon.vault(params.vault)
    await runtime.wait_ready()
    assert runtime.live is not None
    octx = OpContext(root=runtime.root, entry=runtime.entry, index=runtime.live.index, channel=ctx.channel,
                     now=__import__("datetime").datetime.now().astimezone())
    return OpListResult(ops=await anyio.to_thread.run_sync(list_ops, octx, params.limit))


@handles("log.append")
async def log_append(ctx: CallContext, params: LogAppendParams) -> LogReceipt:
    import datetime as dt

    from protocol.errors import Severity
    from vaultd.errors import ValidationFailed

    runtime = ctx.daemon.vault(params.vault)
    runtime.check_root()
    if (issue := write_channel_issue(runtime.entry.write, ctx.channel)) is not None:
        raise PolicyRefused(issue.message, issues=[issue])
    line = oplog.format_line(params.event, dt.datetime.now().astimezone(), agent=ctx.channel == Channel.MCP)
    problems = secret_issues(line, oplog.log_name(runtime.entry)) + [
        i for i in pii_findings(line, runtime.entry.pii, runtime.entry.kind, "log") if i.severity == Severity.ERROR]
    if problems:
        raise ValidationFailed(problems[0].message, issues=problems)
    async with runtime.writer:
        runtime.check_root()
        await anyio.to_thread.run_sync(oplog.append, runtime.root, line, oplog.log_name(runtime.entry))
    return LogReceipt(appended=True, line=line.rstrip("\n"))


@handles("log.tail")
async def log_tail(ctx: CallContext, params: LogTailParams) -> LogLines:
    runtime = ctx.daemon.vault(params.vault)
    runtime.check_root()
    lines, warnings = await anyio.to_thread.run_sync(oplog.tail, runtime.root, params.limit, params.type,
                                                     oplog.log_name(runtime.entry))
    return LogLines(lines=lines, warnings=warnings)


@handles("log.grep")
async def log_grep(ctx: CallContext, params: LogGrepParams) -> LogLines:
    runtime = ctx.daemon.vault(params.vault)
    runtime.check_root()
    lines, warnings = await anyio.to_thread.run_sync(oplog.grep, runtime.root, params.pattern, params.limit,
                                                     params.type, oplog.log_name(runtime.entry))
    return LogLines(lines=lines, warnings=warnings)
