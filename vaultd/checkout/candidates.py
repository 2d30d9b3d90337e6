"""The notes a checkout made from a search takes: the best hits, then their link neighbours.

The ranking decides nothing about relevance beyond what the search and the links say: the best
:data:`SEEDS` hits are seeds at distance 0; links out of a note and links into it reach its
neighbours, up to :data:`MAX_DISTANCE` steps. A note reached scores the larger of its own search
score and :data:`DECAY` times the score of the note it was reached from. The list is sorted by
score (then path) and cut to the limit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from vaultd.vault.index import VaultIndex

SEEDS = 12
MAX_DISTANCE = 2
DECAY = 0.6


def _neighbours(index: VaultIndex, path: str) -> set[str]:
    record = index.notes.get(path)
    found: set[str] = set()
    if record is not None:
        for link in record.links:
            if link.target:
                resolved = index.resolve(link, path).path
                if resolved is not None and resolved != path:
                    found.add(resolved)
    found.update(source for source, _ in index.backlinks(path) if source != path)
    return found


def candidates(index: VaultIndex, query: str, limit: int, shown: Callable[[str], bool]) -> list[tuple[str, str]]:
    """Up to ``limit`` (path, how it was reached) pairs, best first; only notes ``shown`` passes."""
    if index.cache is None:
        return []
    hits = [h for h in index.cache.search(query, limit=SEEDS * 4) if shown(h.path)][:SEEDS]
    scores: dict[str, float] = {}
    reached: dict[str, str] = {}
    for hit in hits:
        scores[hit.path] = max(scores.get(hit.path, 0.0), float(hit.score), 1e-6)  # a weak hit still reaches neighbours
        reached.setdefault(hit.path, "search")
    frontier = list(scores)
    for _ in range(MAX_DISTANCE):
        step: list[str] = []
        for path in frontier:
            for other in sorted(_neighbours(index, path)):
                if not shown(other):
                    continue
                score = DECAY * scores[path]
                if score > scores.get(other, 0.0):
                    if other not in scores:
                        step.append(other)
                    scores[other] = score
                    reached.setdefault(other, f"linked with {path}")
        frontier = step
    ranked = sorted(scores, key=lambda p: (-scores[p], p))
    return [(p, reached[p]) for p in ranked[:limit]]
