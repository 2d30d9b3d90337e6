"""Handlers of the graph reads: neighbours, communities, paths, hubs, maps, the navigator
(graph.canvas is an operation, answered by the handler the catalogue makes).

Every read works on the snapshot the caller may see (see :func:`vaultd.lint.gather.view_of`), in a
worker thread, built from a copy of the index (the index is never held); communities and hubs are
kept on the snapshot, so asking again before the vault changes costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from protocol.methods import graph
from protocol.methods.graph import (
    CommunitiesParams,
    CommunitiesResult,
    Community,
    Direction,
    GraphEdge,
    Hub,
    HubsParams,
    HubsResult,
    Moc,
    MocsParams,
    MocsResult,
    NavEntry,
    NavParams,
    NavResult,
    Neighbor,
    NeighborsParams,
    NeighborsResult,
    PathParams,
    PathResult,
    PathStep,
)
from vaultd import faults
from vaultd.api.handlers import CallContext, handles
from vaultd.api.read_methods import live_view
from vaultd.errors import Unavailable
from vaultd.graph import centrality, communities, need_graph_extra
from vaultd.graph.canvas import canvas_document
from vaultd.graph.leiden_worker import WorkerFailed
from vaultd.graph.nav import navigate
from vaultd.graph.walks import Edges, neighbourhood, shortest_path
from vaultd.lint.gather import text_reader, view_of
from vaultd.memory import collector_paused
from vaultd.vault.lookup import find_note
from vaultd.vault_work import VAULT_WORK

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from vaultd.graph.snapshot import LinkSnapshot
    from vaultd.policy.visibility import Visibility
    from vaultd.vault.index import IndexCopy

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Copied:
    """What a graph read has of the live index: a copy of it, and the vault's root."""

    index: IndexCopy
    root: Path


async def _on_snapshot(ctx: CallContext, vault: str | None, fresh: bool, work: Callable[[Copied, Visibility, LinkSnapshot], T]) -> T:
    """Run ``work`` on the caller's snapshot, in a worker thread, from a copy of the index.

    The copy is taken in one synchronous step on the event loop (where every change to the index
    is applied), so the snapshot and every note the work looks up are of one state, and the
    watcher's refreshes and the vault's writes go on while the snapshot is built (seconds at
    20,000 notes, once per index state)."""
    live, view = await live_view(ctx, vault, fresh)
    entry = ctx.host.vault(vault).entry
    copied = Copied(live.index.copy(), live.root)

    def run() -> T:
        with collector_paused():
            snap = view_of(copied.index, entry, view)
            faults.point("graph-snapshot")
            return work(copied, view, snap)

    return await anyio.to_thread.run_sync(run)


@handles(graph.NEIGHBORS)
async def neighbors(ctx: CallContext, params: NeighborsParams) -> NeighborsResult:
    def work(live: Copied, view: Visibility, snap: LinkSnapshot) -> NeighborsResult:
        center = find_note(live.index, params.target, view.hidden)
        edges = Edges(snap, params.relation, text_reader(live.root, snap))
        reached = neighbourhood(edges, center, params.hops, params.direction)
        shown = reached[: params.limit]
        on = {center, *(r.path for r in shown)}
        lines = [
            GraphEdge(source=s, target=t, relation=label)
            for s in sorted(on)
            for t in sorted(snap.out.get(s, {}))
            if t in on and (label := edges.label(s, t)) is not None
        ]
        return NeighborsResult(
            path=center,
            title=snap.title(center),
            neighbors=[
                Neighbor(
                    path=r.path, title=snap.title(r.path), hops=r.hops, via=r.via, direction=Direction(r.direction), relation=r.relation
                )
                for r in shown
            ],
            edges=lines,
            total=len(reached),
            truncated=len(reached) > params.limit,
            canvas=canvas_document(center, shown, edges) if params.canvas else None,
        )

    return await _on_snapshot(ctx, params.vault, params.fresh, work)


@handles(graph.COMMUNITIES)
async def communities_of(ctx: CallContext, params: CommunitiesParams) -> CommunitiesResult:
    need_graph_extra(graph.COMMUNITIES.name)
    # Counted against the connection's bound from its arrival, before the snapshot is built: a
    # snapshot of a large vault takes seconds, and requests that finish building in another order
    # than they came must not take each other's places.
    async with VAULT_WORK.admitted(ctx, "graph.communities"):
        return await _partitioned(ctx, params)


async def _partitioned(ctx: CallContext, params: CommunitiesParams) -> CommunitiesResult:
    """The communities of the caller's snapshot (built from a copy of the index); Leiden runs on
    it after, in its turn, unless this snapshot was partitioned already."""
    snap = await _on_snapshot(ctx, params.vault, params.fresh, lambda live, view, snap: snap)

    key = ("communities", params.resolution)

    def work() -> CommunitiesResult:
        """Partition in a worker thread and keep the result on the snapshot, so one index state is
        partitioned once.

        Raises:
            Unavailable: UNAVAILABLE, the community worker failed or was stopped; retrying may
                succeed.
        """
        found = snap.derived.get(key)
        if not isinstance(found, communities.Partition):
            try:
                found = snap.derived[key] = communities.partition(snap, params.resolution)
            except WorkerFailed as exc:
                raise Unavailable(f"communities could not be computed: {exc}; retry") from exc
        listed = [c for c in found.communities if len(c) >= params.min_size]
        return CommunitiesResult(
            notes=len(snap.notes),
            edges=found.edges,
            modularity=round(found.modularity, 6),
            seed=communities.SEED,
            resolution=params.resolution,
            total=len(found.communities),
            singletons=sum(1 for c in found.communities if len(c) == 1),
            communities=[
                Community(id=i, name=snap.title(c[0]), central=c[0], size=len(c), members=c[: params.members])
                for i, c in enumerate(listed[: params.limit], start=1)
            ],
            truncated=len(listed) > params.limit,
        )

    if isinstance(snap.derived.get(key), communities.Partition):
        return await anyio.to_thread.run_sync(work)  # known for this snapshot: no vault-wide work
    # Leiden itself runs in a worker process (see vaultd.graph.leiden_worker) for a large vault.
    async with VAULT_WORK.turn():
        return await anyio.to_thread.run_sync(work)


@handles(graph.PATH)
async def path(ctx: CallContext, params: PathParams) -> PathResult:
    def work(live: Copied, view: Visibility, snap: LinkSnapshot) -> PathResult:
        source = find_note(live.index, params.source, view.hidden)
        target = find_note(live.index, params.target, view.hidden)
        chain = shortest_path(Edges(snap, None, lambda _p: None), source, target, params.direction)
        if chain is None:
            return PathResult(found=False, hops=None, steps=[])
        steps = [PathStep(path=p, title=snap.title(p), direction=how) for p, how in chain]
        return PathResult(found=True, hops=len(steps) - 1, steps=steps)

    return await _on_snapshot(ctx, params.vault, params.fresh, work)


@handles(graph.HUBS)
async def hubs(ctx: CallContext, params: HubsParams) -> HubsResult:
    need_graph_extra(graph.HUBS.name)

    def work(live: Copied, view: Visibility, snap: LinkSnapshot) -> HubsResult:
        key = ("hubs", params.limit)
        rows: Any = snap.derived.get(key)
        if rows is None:
            rows = snap.derived[key] = centrality.hubs(snap, params.limit)
        return HubsResult(
            notes=len(snap.notes),
            hubs=[Hub(path=r.path, title=snap.title(r.path), incoming=r.incoming, outgoing=r.outgoing, pagerank=r.pagerank) for r in rows],
        )

    return await _on_snapshot(ctx, params.vault, params.fresh, work)


@handles(graph.MOCS)
async def mocs(ctx: CallContext, params: MocsParams) -> MocsResult:
    def work(live: Copied, view: Visibility, snap: LinkSnapshot) -> MocsResult:
        found = centrality.mocs(snap)
        rows = sorted(
            (
                Moc(path=p, title=snap.title(p), incoming=len(snap.into.get(p, {})), outgoing=len(snap.out.get(p, {})), why=why)
                for p, why in found
            ),
            key=lambda m: (-m.incoming, m.path),
        )
        return MocsResult(total=len(rows), mocs=rows[: params.limit], truncated=len(rows) > params.limit)

    return await _on_snapshot(ctx, params.vault, params.fresh, work)


@handles(graph.NAV)
async def nav(ctx: CallContext, params: NavParams) -> NavResult:
    def work(live: Copied, view: Visibility, snap: LinkSnapshot) -> NavResult:
        note = find_note(live.index, params.target, view.hidden)
        found = navigate(snap, note)
        groups = (found.up, found.below, found.sources, found.cited_by, found.beside)

        def entries(paths: list[str]) -> list[NavEntry]:
            return [NavEntry(path=p, title=snap.title(p)) for p in paths[: params.limit]]

        return NavResult(
            path=note,
            title=snap.title(note),
            parent_keys=list(snap.parent_keys),
            up=entries(found.up),
            below=entries(found.below),
            sources=entries(found.sources),
            cited_by=entries(found.cited_by),
            beside=entries(found.beside),
            truncated=any(len(g) > params.limit for g in groups),
            warnings=found.warnings,
        )

    return await _on_snapshot(ctx, params.vault, params.fresh, work)


on_snapshot = _on_snapshot  #: for graph.build (vaultd.api.report_methods), which summarises the same snapshot
partitioned = _partitioned
