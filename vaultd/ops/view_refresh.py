"""view.refresh: the vault's generated views written through the write path, and the keeper that
runs it a moment after what they show changes.

A view is planned only where the file at its path is absent or still vaultd's own (its mark holds,
:mod:`vaultd.views.render`); one a person has edited is left alone and reported in the receipt's
``edited``. What a view names passes the agents' visibility: an agent reads views like any note,
so a proposal or work that touches a note private to agents is left out of them.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio
import structlog

from protocol.methods import views
from protocol.methods.common import Channel
from protocol.methods.proposals import ProposalState
from protocol.methods.views import VIEW_PATHS, ViewName, ViewRefreshDetail, ViewRefreshParams
from protocol.methods.work import WorkState
from vaultd.errors import VaultError
from vaultd.events.wake import Waker
from vaultd.gate.store import store_for
from vaultd.graph.snapshot import snapshot
from vaultd.ops._runner import run_operation
from vaultd.ops.catalog import operation
from vaultd.ops.create import existing_twin
from vaultd.policy.visibility import Visibility
from vaultd.sessions.work import work_for
from vaultd.txn.plan import Change, Plan
from vaultd.views.render import Item, home_body, is_ours, marked, topics_body, waiting_body

if TYPE_CHECKING:
    from vaultd.ops._context import OpContext
    from vaultd.runtime import VaultRuntime

log = structlog.get_logger("vaultd.views")

MAX_ITEMS = 50  #: proposals, and work, a waiting view lists
MAX_LINKS = 5  #: notes linked per item
QUIET_S = 2.0  #: a vault quiet this long gets its views brought up to date
IDLE_CHECK_S = 5.0
MAX_TOPIC_LINES = 300  #: lines of the topic navigator
TOPIC_DEPTH = 3  #: levels of the topic tree shown


def _links(ctx: OpContext, view: Visibility, source: str, paths: list[str]) -> tuple[list[str], int]:
    shown = [p for p in paths if p.lower().endswith(".md") and p in ctx.index.notes and not p.startswith(".trash/")]
    return [ctx.link(p, source) for p in shown[:MAX_LINKS]], max(0, len(shown) - MAX_LINKS)


def _waiting(ctx: OpContext, view: Visibility, source: str) -> tuple[str, int]:
    try:
        kept, _ = store_for(ctx.root).entries()
    except VaultError:
        kept = []
    proposals = []
    for p in kept:
        if p.state is not ProposalState.PENDING or any(view.hidden(t.removeprefix(".trash/")) for t in p.targets):
            continue
        if view.names_hidden_in(p.summary, ctx.index):
            continue
        links, more = _links(ctx, view, source, p.targets)
        proposals.append(Item(id=p.id, what=f"{p.op} by {p.proposer}", links=links, more=more))
    work = []
    try:
        running = work_for(ctx.root, ctx.entry.id).all()
    except VaultError:  # a work folder that is not vaultd's own: no work is listed from it
        running = []
    for w in running:
        if w.state is not WorkState.RUNNING or any(view.hidden(n) for n in w.notes) or view.names_hidden_in(w.what, ctx.index):
            continue
        what = w.what + (f" ({w.progress})" if w.progress and not view.names_hidden_in(w.progress, ctx.index) else "")
        links, more = _links(ctx, view, source, w.notes)
        work.append(Item(id=w.id, what=what, links=links, more=more))
    home = VIEW_PATHS[ViewName.HOME] if ViewName.HOME in ctx.entry.views else None
    body = waiting_body(proposals[:MAX_ITEMS], work[:MAX_ITEMS], ctx.link(home, source) if home else None)
    return body, len(proposals) + len(work)


def _topics(ctx: OpContext, view: Visibility, source: str) -> str:
    snap = snapshot(ctx.index, tuple(ctx.entry.parent_keys), hidden=view.hidden, view_key=tuple(ctx.entry.private_paths))
    below: dict[str, list[str]] = {}
    for child, parents in snap.parents.items():
        for parent in parents:
            below.setdefault(parent, []).append(child)

    def order(paths: list[str]) -> list[str]:
        return sorted(paths, key=lambda p: (snap.title(p).casefold(), p))

    lines: list[str] = []
    seen: set[str] = set()

    def walk(path: str, depth: int) -> None:
        if len(lines) >= MAX_TOPIC_LINES or path in seen:
            return
        seen.add(path)
        lines.append("  " * depth + "- " + ctx.link(path, source))
        if depth < TOPIC_DEPTH - 1:
            for child in order(below.get(path, [])):
                walk(child, depth + 1)

    for root in order([p for p in below if not snap.parents.get(p)]):
        walk(root, 0)
    return topics_body(lines, len(lines) >= MAX_TOPIC_LINES)


def _home(ctx: OpContext, view: Visibility, source: str, waiting: int) -> str:
    folders = Counter(p.split("/", 1)[0] for p in ctx.index.notes if "/" in p and not view.hidden(p))
    target = VIEW_PATHS[ViewName.WAITING] if ViewName.WAITING in ctx.entry.views else None
    notes = sum(1 for p in ctx.index.notes if not view.hidden(p))
    topics = VIEW_PATHS[ViewName.TOPICS] if ViewName.TOPICS in ctx.entry.views else None
    return home_body(
        ctx.entry.id,
        notes,
        sorted(folders.items()),
        ctx.link(target, source) if target else None,
        waiting,
        ctx.link(topics, source) if topics else None,
    )


def views_detail(ctx: OpContext, plan: Plan) -> ViewRefreshDetail:
    detail: ViewRefreshDetail = plan.detail
    return detail


@operation(views.VIEW_REFRESH, detail=views_detail)
def plan_views(ctx: OpContext, params: ViewRefreshParams) -> Plan:
    agents = Visibility.of(ctx.entry, Channel.MCP)
    changes: list[Change] = []
    detail = ViewRefreshDetail()
    waiting_path = VIEW_PATHS[ViewName.WAITING]
    waiting_body_text, waiting = _waiting(ctx, agents, waiting_path)
    for name in ctx.entry.views:
        path = VIEW_PATHS[name]
        current = ctx.read(path)
        twin = existing_twin(ctx, path) if current is None else None
        if (current is not None and not is_ours(current)) or (twin is not None and twin != path):
            detail.edited.append(path)  # a person's (or, in another letter case, the same file elsewhere)
            continue
        if name is ViewName.WAITING:
            body = waiting_body_text
        elif name is ViewName.TOPICS:
            body = _topics(ctx, agents, path)
        else:
            body = _home(ctx, agents, path, waiting)
        wanted = marked(body)
        if wanted != current:
            changes.append(Change(path=path, before=current, after=wanted))
            detail.written.append(path)
    summary = "refresh generated views: " + (", ".join(detail.written) or "none changed")
    return Plan(op="view.refresh", changes=changes, summary=summary, log_type="EXTRACT", detail=detail)


def edited_views(runtime: VaultRuntime) -> list[str]:
    """The vault's views a person has edited (vaultd leaves them alone): for status."""
    out = []
    for name in runtime.entry.views:
        path = runtime.root / VIEW_PATHS[name]
        try:
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        except OSError:
            data = None
        if data is not None and not is_ours(data):
            out.append(VIEW_PATHS[name])
    return out


@dataclass(frozen=True, slots=True)
class _One:
    runtime: VaultRuntime

    def vault(self, vault_id: str | None) -> VaultRuntime:
        return self.runtime


@dataclass(frozen=True, slots=True)
class _Keeper:
    """Who writes the views: vaultd for the person who opted in (a person's channel, never gated)."""

    host: _One
    channel: Channel = Channel.CLI
    client: str = "vaultd-views"
    session: str | None = None


async def keep_views(runtime: VaultRuntime) -> None:
    """Bring the vault's views up to date a moment after each change, until the vault is released.
    A failure is logged and tried again on the next change; it never stops the daemon."""
    waker = Waker()
    events = runtime.events
    events.follow(waker)
    keeper = _Keeper(host=_One(runtime))
    pending = True  # once at start: a view may be missing or stale from before
    last: list[ViewName] = []
    try:
        while not runtime.git.stopped:
            if runtime.events is not events:  # the vault's log started again (a new instance): follow the new one
                events.unfollow(waker)
                events = runtime.events
                events.follow(waker)
                pending = True
            if not pending:
                with anyio.move_on_after(IDLE_CHECK_S) as idle:
                    await waker.wait()
                if idle.cancelled_caught and runtime.entry.views == last:
                    continue  # quiet, and the setting as it was: nothing to bring up to date
            pending = False
            last = list(runtime.entry.views)
            if not last:
                continue
            while True:  # wait for quiet: a burst of changes makes one refresh
                with anyio.move_on_after(QUIET_S) as quiet:
                    await waker.wait()
                if quiet.cancelled_caught or runtime.git.stopped:
                    break
            if runtime.git.stopped:
                break
            started = time.monotonic()
            try:
                await run_operation(keeper, ViewRefreshParams(vault=runtime.entry.id), plan_views, views_detail)
            except (VaultError, OSError) as exc:
                log.warning("views not refreshed", vault=runtime.entry.id, error=getattr(exc, "message", None) or str(exc))
            log.debug("views checked", vault=runtime.entry.id, seconds=round(time.monotonic() - started, 3))
    finally:
        events.unfollow(waker)
