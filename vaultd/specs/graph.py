"""References between specs: every edge their frontmatter names, and bounded slices around one."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from protocol.methods.specs import MAX_SPEC_EDGES, Direction, EdgeKind, SpecEdge
from vaultd.errors import LimitExceeded
from vaultd.specs.documents import LIST_LINKS, SCALAR_LINKS

if TYPE_CHECKING:
    from vaultd.specs.documents import SpecDoc, SpecSet

ALL_KINDS = (*SCALAR_LINKS, *LIST_LINKS)


def edges(specs: SpecSet) -> list[SpecEdge]:
    """Every reference of every spec with an id (the first of a duplicated id), in path order.

    Raises:
        LimitExceeded: LIMIT, the source names more references than a graph holds.
    """
    known = specs.by_id()
    out: list[SpecEdge] = []
    seen: set[tuple[str, str, EdgeKind]] = set()
    for doc in known.values():
        assert doc.id is not None
        for kind in ALL_KINDS:
            for target in doc.links(kind):
                key = (doc.id, target, kind)
                if key in seen:
                    continue
                seen.add(key)
                out.append(SpecEdge(source=doc.id, target=target, kind=kind, resolved=target in known))
                if len(out) > MAX_SPEC_EDGES:
                    raise LimitExceeded(f"spec source {specs.source!r} names more than {MAX_SPEC_EDGES} references")
    return out


def children(all_edges: list[SpecEdge], spec_id: str) -> list[str]:
    return sorted({e.source for e in all_edges if e.kind is EdgeKind.PARENT and e.target == spec_id})


def slice_of(
    docs: dict[str, SpecDoc], all_edges: list[SpecEdge], start: str, direction: Direction, edge: EdgeKind | None, depth: int, limit: int
) -> tuple[dict[str, int], list[SpecEdge], bool]:
    """The ids reached from ``start`` (with their depth), the edges among them, and whether the
    limit cut the walk short. Subtree follows edges backwards (children name their parent),
    ancestors forwards, neighbours both ways; an edge kind narrows every direction."""
    kinds = {edge} if edge is not None else ({EdgeKind.PARENT} if direction is not Direction.NEIGHBORS else set(ALL_KINDS))
    forward: dict[str, list[str]] = {}
    backward: dict[str, list[str]] = {}
    for e in all_edges:
        if e.kind in kinds and e.resolved:
            forward.setdefault(e.source, []).append(e.target)
            backward.setdefault(e.target, []).append(e.source)
    reached = {start: 0}
    queue = deque([start])
    truncated = False
    while queue:
        current = queue.popleft()
        if reached[current] >= depth:
            continue
        nexts: list[str] = []
        if direction in (Direction.ANCESTORS, Direction.NEIGHBORS):
            nexts += forward.get(current, [])
        if direction in (Direction.SUBTREE, Direction.NEIGHBORS):
            nexts += backward.get(current, [])
        for nxt in sorted(set(nexts)):
            if nxt in reached or nxt not in docs:
                continue
            if len(reached) >= limit:
                truncated = True
                break
            reached[nxt] = reached[current] + 1
            queue.append(nxt)
    inside = [e for e in all_edges if e.kind in kinds and e.source in reached and e.target in reached]
    return reached, inside, truncated
