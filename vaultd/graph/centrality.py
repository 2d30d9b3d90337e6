"""Which notes hold the vault together: hubs by PageRank, and the maps of content.

A map of content (MOC) is a note that says it is one: ``type: moc`` in its frontmatter, a
``#moc`` tag (also nested, ``#moc/...``), or "MOC" as a word of its file name. A topic-map root
(a note that others name as their parent while it has no parent itself) is one too: it is where
the navigator's Up ends. Lint's reachability rule (L05) starts from exactly these notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vaultd.graph.snapshot import LinkSnapshot

_MOC_WORD = re.compile(r"(?<![A-Za-z])MOC(?![A-Za-z])")


@dataclass(frozen=True, slots=True)
class HubRow:
    path: str
    incoming: int
    outgoing: int
    pagerank: float


def hubs(snap: LinkSnapshot, limit: int) -> list[HubRow]:
    """The ``limit`` notes of highest PageRank over the directed links (ties by path)."""
    import igraph

    paths = snap.paths
    if not paths:
        return []
    number = {p: i for i, p in enumerate(paths)}
    edges = sorted((number[s], number[t]) for s, targets in snap.out.items() if s in number for t in targets if t in number)
    graph = igraph.Graph(n=len(paths), edges=edges, directed=True)
    rank = graph.pagerank(directed=True)
    order = sorted(range(len(paths)), key=lambda v: (-rank[v], paths[v]))[:limit]
    return [HubRow(paths[v], len(snap.into.get(paths[v], {})), len(snap.out.get(paths[v], {})), round(float(rank[v]), 6)) for v in order]


def moc_reason(snap: LinkSnapshot, path: str) -> str | None:
    """Why ``path`` is a map of content, or None when it is not one."""
    record = snap.notes[path]
    kind = (record.frontmatter or {}).get("type")
    if isinstance(kind, str) and kind.strip().lower() == "moc":
        return "type: moc"
    if any(t.name[:3].lower() == "moc" and (len(t.name) == 3 or t.name[3] == "/") for t in record.tags):
        return "tag #moc"
    if "MOC" in path and _MOC_WORD.search(path.rpartition("/")[2]):
        return "named MOC"
    return None


def topic_roots(snap: LinkSnapshot) -> list[str]:
    """Notes that some note names as a parent and that have no parent themselves."""
    named = {p for parents in snap.parents.values() for p in parents}
    return sorted(p for p in named if p in snap.notes and not snap.parents.get(p))


def mocs(snap: LinkSnapshot) -> list[tuple[str, str]]:
    """(path, why) of every map of content and topic-map root, by path."""
    found = {p: why for p in snap.notes if (why := moc_reason(snap, p)) is not None}
    for root in topic_roots(snap):
        found.setdefault(root, "topic-map root")
    return sorted(found.items())
