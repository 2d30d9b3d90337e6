"""session.list, session.show and session.hook, and what a session's calls add to its record.

The record of an agent session grows from its calls as they are answered (:func:`observe`, called
by the dispatcher for the ``mcp`` channel): the notes it read, the operations it applied and the
proposals it made, with the notes they wrote. A host's hooks add its prompts' one-line summaries
and its start and end, and ask at the end of a turn what the session leaves unfinished.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from protocol.methods import sessions
from protocol.methods.common import Channel
from protocol.methods.files import FileReadResult
from protocol.methods.gate import HotPart
from protocol.methods.proposals import ProposalState
from protocol.methods.reads import ReadManyResult, ReadResult
from protocol.methods.receipts import Applied, Proposed
from protocol.methods.sessions import (
    HookEvent,
    SessionHookParams,
    SessionHookResult,
    SessionListParams,
    SessionListResult,
    SessionRecord,
    SessionShowParams,
    SessionSummary,
    Unfinished,
)
from vaultd.api.handlers import CallContext, handles
from vaultd.errors import InvalidParams, NotFound, VaultError
from vaultd.fsio import ReadRefused
from vaultd.gate.store import store_for
from vaultd.obsidian.settings import read_settings
from vaultd.ops.daily_write import day_note
from vaultd.ops.undo import list_ops
from vaultd.policy.visibility import Visibility
from vaultd.sessions.work import work_for
from vaultd.txn.engine import read_current
from vaultd.txn.plan import MAX_NOTE_BYTES

if TYPE_CHECKING:
    from vaultd.runtime import VaultRuntime
    from vaultd.sessions.book import SessionBook

MAX_UNFINISHED = 20  #: what a stop hook reminds the agent of, at most


def _vault_id(ctx: CallContext, params: Any) -> str | None:
    try:
        return ctx.host.vault(getattr(params, "vault", None)).entry.id
    except VaultError:
        return None


def observe(ctx: CallContext, params: Any, result: Any) -> None:
    """Add an answered call of an agent session to its record (reads, operations, proposals)."""
    if ctx.channel != Channel.MCP or ctx.session is None:
        return
    book = ctx.host.sessions
    if isinstance(result, Applied | Proposed):
        vault = _vault_id(ctx, params)
        if vault is None:
            return
        paths = [c.path for c in result.changes]
        if isinstance(result, Applied):
            book.wrote(ctx.session, ctx.client, vault, result.op, paths, op_id=result.op_id, proposal=None)
        else:
            book.wrote(ctx.session, ctx.client, vault, result.op, paths, op_id=None, proposal=result.proposal)
        return
    if isinstance(result, ReadResult | FileReadResult):
        read = [result.path]
    elif isinstance(result, ReadManyResult):
        read = [item.note.path for item in result.notes if item.note is not None]
    else:
        return
    vault = _vault_id(ctx, params)
    if vault is not None:
        book.read(ctx.session, ctx.client, vault, read)


def _running(ctx: CallContext, session: str) -> list[str]:
    out = []
    for runtime in ctx.host.vaults.values():
        try:
            work = work_for(runtime.root, runtime.entry.id).running_for(session)
        except VaultError:  # a work folder that is not vaultd's own is read by no one
            continue
        if work is not None:
            out.append(f"{runtime.entry.id}:{work.id}")
    return out


def _summary(ctx: CallContext, record: SessionRecord) -> SessionSummary:
    fields = {name: getattr(record, name) for name in SessionSummary.__struct_fields__}
    fields["running_work"] = _running(ctx, record.id)
    return SessionSummary(**fields)


def _book(ctx: CallContext) -> SessionBook:
    return ctx.host.sessions


@handles(sessions.SESSION_LIST)
async def session_list(ctx: CallContext, params: SessionListParams) -> SessionListResult:
    records = _book(ctx).recent(params.limit, open_only=params.open)
    return SessionListResult(sessions=[_summary(ctx, r) for r in records])


@handles(sessions.SESSION_SHOW)
async def session_show(ctx: CallContext, params: SessionShowParams) -> SessionRecord:
    """One record: the caller's own session unless an id is given.

    Raises:
        InvalidParams: INVALID_PARAMS, no id, from a connection without a session.
        NotFound: NOT_FOUND, no such record (never seen, or dropped to keep the records bounded).
    """
    wanted = params.id or ctx.session
    if wanted is None:
        raise InvalidParams("name a session (this connection has none): see 'vaultctl sessions'")
    record = _book(ctx).get(wanted)
    if record is None:
        raise NotFound(f"no session {wanted} is recorded (never seen, or dropped to keep the records bounded)")
    return msgspec.structs.replace(record, running_work=_running(ctx, record.id))


async def _unfinished(ctx: CallContext, session: str) -> list[Unfinished]:
    """The session's pending proposals and running work, in every vault the daemon serves."""
    out: list[Unfinished] = []
    for runtime in ctx.host.vaults.values():
        try:
            work = work_for(runtime.root, runtime.entry.id).running_for(session)
        except VaultError:
            work = None
        if work is not None:
            out.append(Unfinished(vault=runtime.entry.id, kind="work", id=work.id, what=work.what))
        try:
            entries, _ = await anyio.to_thread.run_sync(store_for(runtime.root).entries)
        except VaultError:
            continue
        out += [
            Unfinished(vault=runtime.entry.id, kind="proposal", id=p.id, what=p.summary)
            for p in entries
            if p.session == session and p.state is ProposalState.PENDING
        ]
    return out[:MAX_UNFINISHED]


@handles(sessions.SESSION_HOOK)
async def session_hook(ctx: CallContext, params: SessionHookParams) -> SessionHookResult:
    """A host's hook: its session's start, prompt and end go into the record; its stop asks what
    the session leaves unfinished.

    Raises:
        Conflict: CONFLICT, a new session's id differs from a recorded one's only in letter case.
    """
    book = _book(ctx)
    client = params.host
    if params.event is HookEvent.START:
        book.started(params.id, client)
    elif params.event is HookEvent.PROMPT:
        book.prompted(params.id, client, params.prompt or "")
    elif params.event is HookEvent.END:
        book.ended(params.id, client)
    else:
        # The agent's own MCP session may carry the host's id ($VAULTD_SESSION); else every agent
        # session open now is the host's candidate (a host runs its MCP servers for its session).
        record = book.get(params.id)
        own = record is not None and bool(record.ops or record.proposals or record.work)
        ids = [params.id] if own else [r.id for r in book.recent(sessions.MAX_SESSIONS) if book.live(r.id)]
        found: list[Unfinished] = []
        for session in ids:
            found += await _unfinished(ctx, session)
        return SessionHookResult(unfinished=found[:MAX_UNFINISHED])
    return SessionHookResult()


# -- the hot session context --------------------------------------------------------------------

HOT_OPS = 5  #: recent operations the ops part lists
HOT_PROPOSALS = 5
HOT_HEADINGS = 12
HOT_PINNED_READ = 16 * 1024  #: the pinned note is read this far; the summary's bound cuts it further


def cut_utf8(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes, never inside a character."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", "ignore")


def _hot_lines(runtime: VaultRuntime) -> list[str]:
    """The hot summary's lines, as the person chose them (worker thread; the index held by the
    caller is only read). Every line that names a note private to agents is left out."""
    policy = runtime.entry.agent_policy()
    view = Visibility.of(runtime.entry, Channel.MCP)
    index = runtime.live.index if runtime.live is not None else None
    lines: list[str] = []
    for part in policy.hot:
        if part is HotPart.OPS:
            ops = list_ops(runtime.root, view, index, HOT_OPS) if index is not None else []
            lines += [f"recent operation {o.op_id}: {o.op} {', '.join(o.paths[:3])}" for o in ops]
        elif part is HotPart.PROPOSALS:
            try:
                entries, _ = store_for(runtime.root).entries()
            except VaultError:
                entries = []
            pending = [p for p in entries if p.state is ProposalState.PENDING and not any(view.hidden(t) for t in p.targets)]
            lines += [f"pending proposal {p.id}: {p.summary}" for p in pending[:HOT_PROPOSALS]]
        elif part is HotPart.DAILY and index is not None:
            try:
                _, path = day_note(read_settings(runtime.root), None, dt.datetime.now().astimezone().date())
            except VaultError:
                continue
            meta = index.notes.get(path)
            if meta is not None and not view.hidden(path):
                heads = [("#" * h.level) + " " + h.text for h in meta.headings[:HOT_HEADINGS]]
                lines.append(f"today's note {path}: " + (" | ".join(heads) or "(no headings)"))
        elif part is HotPart.PINNED and index is not None and policy.hot_pinned:
            path = policy.hot_pinned
            if view.hidden(path) or path not in index.notes:
                continue
            try:
                data = read_current(runtime.root, path, MAX_NOTE_BYTES)
            except (VaultError, OSError, ReadRefused):
                continue
            if data is None:
                continue
            text = data[:HOT_PINNED_READ].decode("utf-8", "replace")
            lines.append(f"pinned note {path}:")
            lines += [ln for ln in text.splitlines() if ln.strip()]
    return [ln for ln in lines if not view.names_hidden_in(ln, index)]


async def hot_summary(runtime: VaultRuntime) -> str:
    """The vault's hot session context: at most its ``hot_bytes``, never a private path."""
    policy = runtime.entry.agent_policy()
    if not policy.hot or policy.hot_bytes == 0 or runtime.live is None:
        return ""
    live = runtime.live
    async with live.held_still():
        lines = await anyio.to_thread.run_sync(_hot_lines, runtime)
    return cut_utf8("\n".join(lines), policy.hot_bytes)
