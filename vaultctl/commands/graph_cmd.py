"""neighbors, communities, path, hubs, mocs, nav: the link graph, each with --vault and --json.

``neighbors NOTE --canvas OUT.canvas`` draws the neighbourhood as a JSON Canvas: inside a vault
it is created by the daemon as an ordinary operation (journaled, undoable); outside every vault
it is a plain file this command writes. An existing file is never overwritten.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from protocol.errors import ExitStatus
from protocol.methods import graph, vaults
from protocol.methods.common import Empty
from protocol.methods.graph import (
    CanvasParams,
    CommunitiesParams,
    CommunitiesResult,
    Direction,
    HubsParams,
    MocsParams,
    NavParams,
    NavResult,
    NeighborsParams,
    NeighborsResult,
    PathParams,
    PathResult,
)
from protocol.schema import field_help as doc
from vaultctl import render, vault_choice
from vaultctl.commands.common import JsonOpt, VaultOpt, call, emit, fail, pick_vault, session
from vaultctl.commands.receipts import exit_if_not_logged, log_event, receipt_text

if TYPE_CHECKING:
    from vaultctl.client import Client

FreshOpt = Annotated[bool, typer.Option("--fresh", help=doc(NeighborsParams, "fresh"))]
HopsOpt = Annotated[int, typer.Option(help=doc(NeighborsParams, "hops"))]
RelationOpt = Annotated[str | None, typer.Option("--relation", help=doc(NeighborsParams, "relation"))]
DirectionOpt = Annotated[Direction, typer.Option(help=doc(NeighborsParams, "direction"))]


def _vault_holding(client: Client, path: Path) -> tuple[str, str] | None:
    """(vault id, vault-relative path) of the registered vault holding ``path``, else None."""
    found = vault_choice.holding(call(vaults.VAULT_LIST, Empty(), client=client).vaults, os.path.realpath(path.parent))
    return None if found is None else (found[0], f"{found[1]}/{path.name}".lstrip("/"))


def _neighbors_text(r: NeighborsResult) -> str:
    if not r.neighbors:
        return f"{r.path}: no neighbours"
    rows = [(n.hops, n.path, n.title, n.relation, n.direction, n.via) for n in r.neighbors]
    tail = f"\n\n{len(r.neighbors)} of {r.total} neighbours" + ("; raise --limit" if r.truncated else "")
    return render.compose([r.path, render.table(["hops", "path", "title", "relation", "direction", "via"], rows)]) + tail


def neighbors(
    target: Annotated[str, typer.Argument(metavar="NOTE", help=doc(NeighborsParams, "target"))],
    hops: HopsOpt = 1,
    relation: RelationOpt = None,
    direction: DirectionOpt = Direction.BOTH,
    limit: Annotated[int, typer.Option(help=doc(NeighborsParams, "limit"))] = 200,
    canvas: Annotated[
        Path | None,
        typer.Option(
            "--canvas",
            metavar="OUT.canvas",
            help="Draw the neighbourhood as a JSON Canvas file: created through an operation inside a vault, "
            "a plain file outside every vault; never overwritten.",
        ),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help=doc(CanvasParams, "dry_run") + " With --canvas.")] = False,
    log: Annotated[str | None, typer.Option("--log", help=doc(CanvasParams, "log") + " With --canvas inside a vault.")] = None,
    vault: VaultOpt = None,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """The notes up to --hops links away from NOTE; --canvas OUT.canvas draws them for Obsidian."""
    if canvas is None and (dry_run or log):
        fail("--dry-run and --log go with --canvas", ExitStatus.USAGE)
    with session() as c:
        chosen = pick_vault(c, vault)
        if canvas is None:
            params = NeighborsParams(
                vault=chosen, target=target, hops=hops, relation=relation, direction=direction, limit=limit, fresh=fresh
            )
            emit(call(graph.NEIGHBORS, params, client=c), as_json, _neighbors_text)
            return
        if canvas.suffix.lower() != ".canvas":
            fail("--canvas needs a file name ending in .canvas", ExitStatus.USAGE)
        out = Path(os.path.abspath(canvas))
        holder = _vault_holding(c, out)
        if holder is not None:
            if vault is not None and vault != holder[0]:
                fail(f"{out} is in vault {holder[0]!r}, not {vault!r}: a canvas names the notes of its own vault", ExitStatus.USAGE)
            make = CanvasParams(
                vault=holder[0],
                target=target,
                path=holder[1],
                hops=hops,
                relation=relation,
                direction=direction,
                limit=limit,
                dry_run=dry_run,
                log=log_event(log),
            )
            receipt = call(graph.CANVAS, make, client=c)
            emit(receipt, as_json, receipt_text)
            exit_if_not_logged(receipt)
            return
        if log:
            fail(f"{out} is outside every vault: a plain file, written with no operation and no log line", ExitStatus.USAGE)
        if out.exists() or out.is_symlink():
            fail(f"{out} exists; choose another name (a canvas is never overwritten)", ExitStatus.REFUSED)
        params = NeighborsParams(
            vault=chosen, target=target, hops=hops, relation=relation, direction=direction, limit=limit, canvas=True, fresh=fresh
        )
        result = call(graph.NEIGHBORS, params, client=c)
    document = result.canvas or {"nodes": [], "edges": []}
    if dry_run:
        summary = {"path": str(out), "nodes": len(document["nodes"]), "edges": len(document["edges"]), "dry_run": True}
        emit(summary, as_json, lambda s: f"dry run: would write {out}: {s['nodes']} cards, {s['edges']} edges; nothing was written")
        return
    try:
        with open(out, "x", encoding="utf-8") as fh:
            fh.write(json.dumps(document, indent="\t", ensure_ascii=False) + "\n")
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}", ExitStatus.REFUSED)
    if as_json:
        print(render.json_line({"path": str(out), "nodes": len(document["nodes"]), "edges": len(document["edges"])}))
    else:
        render.say(f"wrote {out}: {len(document['nodes'])} cards, {len(document['edges'])} edges (outside every vault: a plain file)")


def communities(
    vault: VaultOpt = None,
    resolution: Annotated[float, typer.Option(help=doc(CommunitiesParams, "resolution"))] = 1.0,
    min_size: Annotated[int, typer.Option("--min-size", help=doc(CommunitiesParams, "min_size"))] = 2,
    limit: Annotated[int, typer.Option(help=doc(CommunitiesParams, "limit"))] = 50,
    members: Annotated[int, typer.Option(help=doc(CommunitiesParams, "members"))] = 10,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Communities of closely linked notes (Leiden, fixed seed), each named by its most central note.
    Needs the graph extra: pip install 'vaultd[graph]'."""
    with session() as c:
        params = CommunitiesParams(
            vault=pick_vault(c, vault), resolution=resolution, min_size=min_size, limit=limit, members=members, fresh=fresh
        )
        result = call(graph.COMMUNITIES, params, client=c)

    def text(r: CommunitiesResult) -> str:
        head = (
            f"{r.total} communities among {r.notes} notes ({r.singletons} unlinked), modularity {r.modularity:.3f}, "
            f"resolution {r.resolution}, seed {r.seed}"
        )
        rows = [(m.id, m.size, m.name, m.central, m.members[1:]) for m in r.communities]
        table = render.table(["id", "size", "name", "central", "members"], rows) if rows else "none of that size"
        return render.compose([head, "", table] + (["", "[truncated; raise --limit]"] if r.truncated else []))

    emit(result, as_json, text)


def path(
    source: Annotated[str, typer.Argument(metavar="A", help=doc(PathParams, "source"))],
    target: Annotated[str, typer.Argument(metavar="B", help=doc(PathParams, "target"))],
    direction: Annotated[Direction, typer.Option(help=doc(PathParams, "direction"))] = Direction.BOTH,
    vault: VaultOpt = None,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """The shortest chain of links from A to B; exit 1 when none joins them."""
    with session() as c:
        result = call(
            graph.PATH, PathParams(vault=pick_vault(c, vault), source=source, target=target, direction=direction, fresh=fresh), client=c
        )

    def text(r: PathResult) -> str:
        if not r.found:
            return f"no chain of links joins {source} and {target}"
        arrows = {Direction.OUT: "→ links to", Direction.IN: "← linked from"}
        lines = [r.steps[0].path] + [f"  {arrows.get(s.direction, '-') if s.direction else ''} {s.path}" for s in r.steps[1:]]
        return render.compose([*lines, f"{r.hops} hop(s)"])

    emit(result, as_json, text)
    if not result.found:
        raise typer.Exit(int(ExitStatus.REFUSED))


def hubs(
    vault: VaultOpt = None,
    limit: Annotated[int, typer.Option(help=doc(HubsParams, "limit"))] = 20,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """The most central notes (PageRank over links) with their link counts. Needs the graph extra: pip install 'vaultd[graph]'."""
    with session() as c:
        result = call(graph.HUBS, HubsParams(vault=pick_vault(c, vault), limit=limit, fresh=fresh), client=c)
    emit(
        result,
        as_json,
        lambda r: render.table(
            ["pagerank", "in", "out", "path", "title"], [(h.pagerank, h.incoming, h.outgoing, h.path, h.title) for h in r.hubs]
        ),
    )


def mocs(
    vault: VaultOpt = None,
    limit: Annotated[int, typer.Option(help=doc(MocsParams, "limit"))] = 100,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Maps of content and topic-map roots, with how many notes link to each."""
    with session() as c:
        result = call(graph.MOCS, MocsParams(vault=pick_vault(c, vault), limit=limit, fresh=fresh), client=c)
    emit(
        result,
        as_json,
        lambda r: (
            render.table(["in", "out", "path", "title", "why"], [(m.incoming, m.outgoing, m.path, m.title, m.why) for m in r.mocs])
            if r.mocs
            else "no maps of content"
        ),
    )


def nav(
    target: Annotated[str, typer.Argument(metavar="NOTE", help=doc(NavParams, "target"))],
    limit: Annotated[int, typer.Option(help=doc(NavParams, "limit"))] = 100,
    vault: VaultOpt = None,
    fresh: FreshOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """The topic navigator of NOTE: Up, Below, Sources, Cited by and Beside."""
    with session() as c:
        result = call(graph.NAV, NavParams(vault=pick_vault(c, vault), target=target, limit=limit, fresh=fresh), client=c)

    def text(r: NavResult) -> str:
        parts = [f"{r.title} ({r.path})"]
        for name, group in (("Up", r.up), ("Below", r.below), ("Sources", r.sources), ("Cited by", r.cited_by), ("Beside", r.beside)):
            parts.append(f"{name}:")
            parts += [f"  {e.title} ({e.path})" for e in group] or ["  -"]
        parts += [f"warning: {w}" for w in r.warnings]
        if r.truncated:
            parts.append("[truncated; raise --limit]")
        return render.compose(parts)

    emit(result, as_json, text)
