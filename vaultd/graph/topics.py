"""The topic map: a note names its broader topics in parent properties (``up``, Breadcrumbs'
``parent``), several parents allowed, and the map is the graph of those edges.

One rule reads a note's parents everywhere (the snapshot, lint, the navigator and the write
check): every value of a parent key, a string or a list of strings, is read for wiki-links; each
link resolving to a note is a parent. A value that is plain text (``up: Topic``), or a link that
names no note, names no parent: it is *misnamed*, and lint reports it (L17), since Obsidian
shows no link there either.

A write is refused only for a cycle it closes (V11): an edge the write adds, ``u → v``, closes
a cycle when ``v`` already reaches ``u`` through parents. Cycles that exist already are
reported by lint (L16) and never block an unrelated write. The walk for that is lazy (each
note's parents are read only when reached), so a write never pays for the whole map.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vaultd.vault import markdown
from vaultd.vault.link_targets import ResolutionStatus

Resolve = Callable[[str, str], tuple[ResolutionStatus, str | None]]  #: (target, source) -> (status, path)


@dataclass(frozen=True, slots=True)
class Misnamed:
    """A parent value that names no note."""

    key: str
    value: str  #: as written, cut to 120 characters
    reason: str


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def parent_targets(frontmatter: Mapping[str, Any] | None, keys: Sequence[str]) -> list[tuple[str, str, list[str]]]:
    """(key, value, link targets) for every parent value, in key then value order."""
    if not frontmatter:
        return []
    found: list[tuple[str, str, list[str]]] = []
    for key in keys:
        for value in _strings(frontmatter.get(key)):
            if value.strip():
                found.append((key, value, [lk.target for lk in markdown.links_in_value(value, 1)]))
    return found


def parents_of(path: str, frontmatter: Mapping[str, Any] | None, keys: Sequence[str], resolve: Resolve) -> tuple[list[str], list[Misnamed]]:
    """The notes ``path`` names as its parents (in order, once each), and the values naming none."""
    parents: list[str] = []
    misnamed: list[Misnamed] = []
    for key, value, targets in parent_targets(frontmatter, keys):
        shown = value if len(value) <= 120 else value[:119] + "…"
        if not targets:
            misnamed.append(Misnamed(key, shown, "plain text, not a link; write it as [[...]]"))
            continue
        for target in targets:
            status, resolved = resolve(target, path)
            if status is ResolutionStatus.RESOLVED and resolved is not None and resolved.lower().endswith(".md"):
                if resolved not in parents:
                    parents.append(resolved)
            else:
                what = "names several notes" if status is ResolutionStatus.AMBIGUOUS else "names no note"
                misnamed.append(Misnamed(key, shown, f"[[{target}]] {what}"))
    return parents, misnamed


def reaches(start: str, goal: str, parents: Callable[[str], Iterable[str]], limit: int = 100_000) -> list[str] | None:
    """The chain of parents from ``start`` up to ``goal`` (both included), or None.

    Breadth first, so the chain is a shortest one; ``limit`` bounds the notes visited.
    """
    if start == goal:
        return [start]
    came: dict[str, str] = {start: start}
    frontier = [start]
    while frontier and len(came) < limit:
        nxt: list[str] = []
        for node in frontier:
            for parent in parents(node):
                if parent in came:
                    continue
                came[parent] = node
                if parent == goal:
                    chain = [goal]
                    while chain[-1] != start:
                        chain.append(came[chain[-1]])
                    return chain[::-1]
                nxt.append(parent)
        frontier = nxt
    return None


def cycles(parents: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """Every cycle component of the parent graph (Tarjan's strongly connected components, kept
    when larger than one note or a note that is its own parent), each sorted, the list sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(parents):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(parents.get(root, ())))]
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in parents.get(node, ()):
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(parents.get(child, ()))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return sorted(found)
