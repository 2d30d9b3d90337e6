"""work.start, work.progress, work.finish and work.list; work.cancel is an operation
(:mod:`vaultd.ops.work_cancel`), since it writes the vault.

Each change tells the vault's subscribers (a ``work.changed`` event: the console and
``vaultctl watch`` show it live) and goes into the session's record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from protocol.methods import work
from protocol.methods.common import Channel
from protocol.methods.events import WorkChanged
from protocol.methods.work import WorkListParams, WorkListResult, WorkProgressParams, WorkRef, WorkStartParams, WorkState, WorkSummary
from vaultd.api.handlers import CallContext, handles
from vaultd.errors import Conflict, PolicyRefused
from vaultd.sessions.work import WorkStore, work_for

if TYPE_CHECKING:
    from vaultd.runtime import VaultRuntime


def _store(ctx: CallContext, vault: str | None) -> tuple[VaultRuntime, WorkStore]:
    runtime = ctx.host.vault(vault)
    runtime.check_root()
    return runtime, work_for(runtime.root, runtime.entry.id)


def _announce(runtime: VaultRuntime, summary: WorkSummary) -> WorkSummary:
    runtime.events.record(
        WorkChanged(id=summary.id, state=summary.state, what=summary.what, progress=summary.progress, session=summary.session or "")
    )
    return summary


def _own(ctx: CallContext, summary: WorkSummary) -> None:
    """An agent reports only on its own session's work, and only while it runs.

    Raises:
        PolicyRefused: POLICY, an agent reached for another session's work.
        Conflict: CONFLICT, the work is closed already.
    """
    if ctx.channel == Channel.MCP and summary.session != ctx.session:
        raise PolicyRefused(f"work {summary.id} is another session's; an agent reports only on its own work")
    if summary.state is not WorkState.RUNNING:
        raise Conflict(f"work {summary.id} is {summary.state}, not running")


@handles(work.WORK_START)
async def start(ctx: CallContext, params: WorkStartParams) -> WorkSummary:
    runtime, store = _store(ctx, params.vault)
    await runtime.wait_ready()
    session = ctx.session if ctx.channel == Channel.MCP else None
    summary = await anyio.to_thread.run_sync(lambda: store.start(session, params.what, params.kind, params.notes))
    if ctx.session is not None:
        ctx.host.sessions.worked(ctx.session, ctx.client, runtime.entry.id, summary.id, summary.what)
    return _announce(runtime, summary)


@handles(work.WORK_PROGRESS)
async def progress(ctx: CallContext, params: WorkProgressParams) -> WorkSummary:
    runtime, store = _store(ctx, params.vault)
    summary = store.get(params.id)
    _own(ctx, summary)
    return _announce(runtime, await anyio.to_thread.run_sync(lambda: store.change(summary, progress=params.line)))


@handles(work.WORK_FINISH)
async def finish(ctx: CallContext, params: WorkRef) -> WorkSummary:
    runtime, store = _store(ctx, params.vault)
    summary = store.get(params.id)
    if summary.state is WorkState.FINISHED:
        return summary  # finishing twice changes nothing
    _own(ctx, summary)
    return _announce(runtime, await anyio.to_thread.run_sync(lambda: store.change(summary, state=WorkState.FINISHED)))


@handles(work.WORK_LIST)
async def work_list(ctx: CallContext, params: WorkListParams) -> WorkListResult:
    _, store = _store(ctx, params.vault)
    found = [w for w in store.all() if params.all or w.state is WorkState.RUNNING]
    return WorkListResult(work=found[: params.limit])
