"""The topic navigator of one note: Up, Below, Sources, Cited by and Beside.

- **Up**: its parents (the topic map's parent keys, ``up`` by default).
- **Below**: the notes naming it as a parent.
- **Sources**: the notes it links to (body or frontmatter), other than the above.
- **Cited by**: the notes linking to it, other than the above.
- **Beside**: the notes sharing a parent with it (its siblings), other than the above.

Each note stands in one group, the first that holds it in that order, and each group is in
title order (then path), so the page reads the same every time. Beside uses the parent keys
only, never a tag or a folder: a marker tag would make siblings of unrelated notes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vaultd.graph.topics import reaches

if TYPE_CHECKING:
    from vaultd.graph.snapshot import LinkSnapshot


@dataclass(slots=True)
class Navigator:
    up: list[str] = field(default_factory=list)
    below: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    cited_by: list[str] = field(default_factory=list)
    beside: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def children(snap: LinkSnapshot, path: str) -> list[str]:
    return [child for child, parents in snap.parents.items() if path in parents]


def navigate(snap: LinkSnapshot, path: str) -> Navigator:
    nav = Navigator()
    placed = {path}

    def ordered(paths: set[str]) -> list[str]:
        fresh = paths - placed
        placed.update(fresh)
        return sorted(fresh, key=lambda p: (snap.title(p).casefold(), p))

    parents = snap.parents.get(path, [])
    nav.up = ordered(set(parents))
    nav.below = ordered(set(children(snap, path)))
    nav.sources = ordered(set(snap.out.get(path, {})))
    nav.cited_by = ordered(set(snap.into.get(path, {})))
    siblings = {child for parent in parents for child in children(snap, parent)}
    nav.beside = ordered(siblings)
    for parent in parents:
        chain = reaches(parent, path, lambda p: snap.parents.get(p, []))
        if chain is not None:
            nav.warnings.append("in a topic-map cycle: " + " → ".join([path, *chain]))
            break
    for bad in snap.misnamed.get(path, []):
        nav.warnings.append(f"{bad.key}: {bad.value!r} names no parent ({bad.reason})")
    return nav
