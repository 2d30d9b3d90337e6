"""A neighbourhood drawn as a JSON Canvas 1.0 document (the ``.canvas`` file Obsidian opens).

Layout: the centre note in the middle, each hop on a ring around it. A ring's radius grows with
the number of cards it carries, so cards never overlap (the ring's circumference holds every
card's width plus a gap); cards on a ring are spread evenly, ordered by the note they were
reached from and then by path, so a note's own neighbours sit together and near it. Every card
is a ``file`` card of the note (Obsidian shows the note in it); every link between two cards is
an edge with an arrow at its target, labelled with its relation unless it is a plain link.

Ids are derived from the paths (the same neighbourhood gives the same file), coordinates are
integers as the spec asks, and only the attributes the spec defines are written.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from vaultd.graph.walks import Edges, Reached

CARD_WIDTH = 400
CARD_HEIGHT = 240
GAP = 120  #: between two cards on a ring, and between rings
RING = 700  #: the first ring's least radius; ring h is at least h times this
CENTRE_COLOR = "6"  #: purple, one of the spec's presets
RING_COLORS = ("", "5", "4", "3")  #: cyan, green, yellow for hops 1..3 (none for the centre's own)


def _id(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:16]


def _ring_radius(hop: int, cards: int) -> float:
    needed = cards * (CARD_WIDTH + GAP) / (2 * math.pi)
    return max(hop * RING, needed, (hop - 1) * RING + CARD_HEIGHT + GAP)


def layout(center: str, reached: Sequence[Reached]) -> dict[str, tuple[int, int]]:
    """The top-left corner of each card, the centre card's centre at (0, 0)."""
    places: dict[str, tuple[int, int]] = {center: (-CARD_WIDTH // 2, -CARD_HEIGHT // 2)}
    rings: dict[int, list[Reached]] = {}
    for r in reached:
        rings.setdefault(r.hops, []).append(r)
    inner = 0.0
    angle_of: dict[str, float] = {center: 0.0}
    for hop in sorted(rings):
        ring = sorted(rings[hop], key=lambda r: (angle_of.get(r.via, 0.0), r.via, r.path))
        radius = max(_ring_radius(hop, len(ring)), inner + CARD_HEIGHT + GAP)
        inner = radius
        for i, r in enumerate(ring):
            angle = 2 * math.pi * i / len(ring) - math.pi / 2
            angle_of[r.path] = angle
            x = radius * math.cos(angle)
            y = radius * math.sin(angle)
            places[r.path] = (round(x - CARD_WIDTH / 2), round(y - CARD_HEIGHT / 2))
    return places


def canvas_document(center: str, reached: Sequence[Reached], edges: Edges) -> dict[str, Any]:
    """The JSON Canvas document of ``center`` and the notes ``reached`` from it."""
    places = layout(center, reached)
    hop_of = {center: 0, **{r.path: r.hops for r in reached}}
    nodes: list[dict[str, Any]] = []
    for path in [center, *(r.path for r in reached)]:
        x, y = places[path]
        node: dict[str, Any] = {"id": _id("node", path), "type": "file", "file": path, "x": x, "y": y}
        node["width"], node["height"] = CARD_WIDTH, CARD_HEIGHT
        color = CENTRE_COLOR if path == center else RING_COLORS[min(hop_of[path], len(RING_COLORS) - 1)]
        if color:
            node["color"] = color
        nodes.append(node)
    lines: list[dict[str, Any]] = []
    on_canvas = set(hop_of)
    for source in sorted(on_canvas):
        for target in sorted(edges.snap.out.get(source, {})):
            if target not in on_canvas:
                continue
            relation = edges.label(source, target)
            if relation is None:
                continue
            line: dict[str, Any] = {
                "id": _id("edge", source, target),
                "fromNode": _id("node", source),
                "toNode": _id("node", target),
                "toEnd": "arrow",
            }
            if relation != "link":
                line["label"] = relation
            lines.append(line)
    return {"nodes": nodes, "edges": lines}


def canvas_bytes(document: dict[str, Any]) -> bytes:
    """The file's bytes: tab-indented as Obsidian writes its canvases."""
    return (json.dumps(document, indent="\t", ensure_ascii=False) + "\n").encode("utf-8")
