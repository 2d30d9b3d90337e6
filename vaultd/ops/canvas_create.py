"""graph.canvas: create a ``.canvas`` file (JSON Canvas 1.0) drawing one note's neighbourhood.

It is a create like ``note.create``: the path is screened before anything can echo it, its
folders are spelled as on disk, it must not exist (by any case or Unicode form), and the file is
written by the runner as one journaled, undoable operation. The canvas shows only what the caller
may see, so a private note never lands on a canvas made for a channel that cannot see it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.methods import graph
from vaultd.errors import InvalidParams
from vaultd.graph.canvas import canvas_bytes, canvas_document
from vaultd.graph.walks import Edges, neighbourhood
from vaultd.lint.gather import text_reader, view_of
from vaultd.ops._runner import no_detail
from vaultd.ops.catalog import operation
from vaultd.ops.create import refuse_existing, screen_new_path
from vaultd.txn.plan import Change, Plan

if TYPE_CHECKING:
    from protocol.methods.graph import CanvasParams
    from vaultd.ops._context import OpContext


def canvas_path(ctx: OpContext, raw: str) -> str:
    """The vault-relative path the canvas will have, screened like a new note's.

    Raises:
        InvalidParams: INVALID_PARAMS, the path does not end in .canvas.
    """
    path = raw.strip("/")
    if not path.lower().endswith(".canvas") or path.lower() == ".canvas":
        raise InvalidParams("the canvas path must end in .canvas")
    return screen_new_path(ctx, path)


@operation(graph.CANVAS, detail=no_detail)
def plan_canvas(ctx: OpContext, params: CanvasParams) -> Plan:
    path = canvas_path(ctx, params.path)
    refuse_existing(ctx, path, "file", "choose another name, or delete it first")
    center = ctx.find(params.target)
    snap = view_of(ctx.index, ctx.entry, ctx.visibility)
    edges = Edges(snap, params.relation, text_reader(ctx.root, snap))
    reached = neighbourhood(edges, center, params.hops, params.direction)[: params.limit]
    document = canvas_document(center, reached, edges)
    return Plan(
        op="graph.canvas",
        changes=[Change(path=path, before=None, after=canvas_bytes(document))],
        summary=f"drew {center} and {len(reached)} neighbour(s) in {path}",
        log_type="GRAPH",
    )
