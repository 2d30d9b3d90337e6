"""Walking the link graph: the neighbourhood of a note, and the shortest chain between two.

Both are breadth first over the snapshot's edges, neighbours taken in path order, so the same
vault gives the same answer. An edge carries its relations: ``link`` and ``embed`` for body
links, the frontmatter key for a header link (``up``, ``related``), and the typed relations
``note.link`` writes (``- [[B]] — supports``), which only the note's text holds: those are read
by :func:`typed_relations` for the notes a walk reaches, never for the whole vault.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from protocol.methods.graph import Direction
from vaultd.vault.link_targets import ResolutionStatus
from vaultd.vault.model import LinkKind

if TYPE_CHECKING:
    from collections.abc import Callable

    from vaultd.graph.snapshot import LinkSnapshot

#: The relations ``note.link`` writes after a link in a list item.
TYPED = ("supports", "contradicts", "extends", "applies-to", "context-for")
_TYPED_AFTER = re.compile(r"[ \t]*(?:—|–|--|-|:|\()[ \t]*(" + "|".join(TYPED) + r")\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Reached:
    path: str
    hops: int
    via: str
    direction: Direction  #: out: ``via`` links to it; in: it links to ``via``
    relation: str


def typed_relations(snap: LinkSnapshot, source: str, text: str) -> dict[str, set[str]]:
    """Target note -> typed relations written after links to it in ``source``'s text."""
    found: dict[str, set[str]] = {}
    for res in snap.resolved(source):
        link = res.link
        if link.kind is LinkKind.FRONTMATTER or link.end < 0 or res.status is not ResolutionStatus.RESOLVED or res.path is None:
            continue
        m = _TYPED_AFTER.match(text, link.end)
        if m is not None:
            found.setdefault(res.path, set()).add(m.group(1).lower())
    return found


class Edges:
    """The edges a walk may take, filtered by relation; typed relations read lazily per note."""

    def __init__(self, snap: LinkSnapshot, relation: str | None, read: Callable[[str], str | None]) -> None:
        self.snap = snap
        self.relation = relation.lower() if relation and relation.lower() in TYPED else relation
        self.read = read
        self._typed: dict[str, dict[str, set[str]]] = {}

    def _typed_of(self, source: str) -> dict[str, set[str]]:
        if source not in self._typed:
            text = self.read(source)
            self._typed[source] = typed_relations(self.snap, source, text) if text is not None else {}
        return self._typed[source]

    def relations(self, source: str, target: str) -> set[str]:
        """Every relation of the edge ``source -> target`` (empty when there is none)."""
        plain = self.snap.out.get(source, {}).get(target)
        if not plain:
            return set()
        if self.relation in TYPED:
            return plain | self._typed_of(source).get(target, set())
        return set(plain)

    def label(self, source: str, target: str) -> str | None:
        """The relation a walk shows for the edge, or None when the filter excludes it."""
        rels = self.relations(source, target)
        if not rels:
            return None
        if self.relation is None:
            return ",".join(sorted(rels))
        return self.relation if self.relation in rels else None

    def steps(self, node: str, direction: Direction) -> list[tuple[str, Direction, str]]:
        """(neighbour, direction, relation) from ``node``, in neighbour path order; a note linked
        both ways is reached ``out``."""
        found: dict[str, tuple[str, Direction, str]] = {}
        if direction in (Direction.OUT, Direction.BOTH):
            for target in self.snap.out.get(node, {}):
                rel = self.label(node, target)
                if rel is not None:
                    found[target] = (target, Direction.OUT, rel)
        if direction in (Direction.IN, Direction.BOTH):
            for source in self.snap.into.get(node, {}):
                rel = self.label(source, node)
                if rel is not None and source not in found:
                    found[source] = (source, Direction.IN, rel)
        return [found[k] for k in sorted(found)]


def neighbourhood(edges: Edges, center: str, hops: int, direction: Direction) -> list[Reached]:
    """Every note within ``hops`` of ``center``, nearest first, then by path."""
    seen = {center}
    reached: list[Reached] = []
    frontier = [center]
    for hop in range(1, hops + 1):
        nxt: list[str] = []
        for node in frontier:
            for other, way, rel in edges.steps(node, direction):
                if other in seen:
                    continue
                seen.add(other)
                reached.append(Reached(other, hop, node, way, rel))
                nxt.append(other)
        frontier = sorted(nxt)
        if not frontier:
            break
    return sorted(reached, key=lambda r: (r.hops, r.path))


def shortest_path(edges: Edges, source: str, target: str, direction: Direction) -> list[tuple[str, Direction | None]] | None:
    """[(note, how it was reached)] from ``source`` to ``target``, or None when they are unconnected."""
    if source == target:
        return [(source, None)]
    came: dict[str, tuple[str, Direction]] = {}
    frontier = [source]
    seen = {source}
    while frontier:
        nxt: list[str] = []
        for node in frontier:
            for other, way, _ in edges.steps(node, direction):
                if other in seen:
                    continue
                seen.add(other)
                came[other] = (node, way)
                if other == target:
                    chain: list[tuple[str, Direction | None]] = []
                    at = target
                    while at != source:
                        prev, how = came[at]
                        chain.append((at, how))
                        at = prev
                    chain.append((source, None))
                    return chain[::-1]
                nxt.append(other)
        frontier = sorted(nxt)
    return None
