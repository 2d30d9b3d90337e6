"""Hybrid ranking: BM25's passages (reranked when asked) fused with the meaning model's.

BM25 over the chunk index ranks every passage from the first second; the meaning model ranks
the passages it has covered so far (its nearest by cosine). The two are fused by reciprocal rank
(k = 60, equal shares: the weights measured on the tune questions did no better on the held-out
ones, docs/performance.md) at the level of notes: a note's share from each ranking is by the
rank of its best passage there, so a note whose best passage by words and best passage by
meaning differ is not split into two half-scored passages (which cost most with one passage a
note, as the search continuation asks). Within a note, passages keep their own fused order. A
passage without a vector yet keeps its BM25 share; a question the model cannot embed gets BM25's
order whole. Before the fusion, the meaning ranking is corrected for the size of each passage's
note (:func:`by_note_size`): a note of hundreds of passages no longer wins by having more chances.
BM25 is asked the question without the English words that only phrase it (:func:`bm25_words`).
"""

from __future__ import annotations

import math
import re
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from protocol.limits import MAX_RETRIEVE_QUERY_CHARS
from protocol.methods.retrieve import RerankStatus
from vaultd.retrieve import rerank as reranker
from vaultd.retrieve.meaning import query_vector

if TYPE_CHECKING:
    from collections.abc import Callable

    from vaultd.retrieve.meaning import Meaning
    from vaultd.retrieve.store import ChunkStore, StoredChunk

RRF_K = 60
NOTE_SIZE_WEIGHT = 0.01  #: how much a note's passage count lowers its passages' cosines (by_note_size)
FUSION_DEPTH = 30  #: passages of each ranking the fusion reads at least
MEANING_CANDIDATES = 200  #: nearest passage keys asked of the vectors per question
MAX_FETCH = 20000  #: ranked chunks fetched at most to fill a page past hidden notes and the per-note cap
#: note.search's continuation reads fewer: it fills what all-words left, one passage a note, and
#: a question's common words would otherwise have it read most of the chunk index.
CONTINUATION_FETCH = 800
_embedder = ThreadPoolExecutor(max_workers=2, thread_name_prefix="vaultd-question")

#: English words that phrase a question rather than say what it is about ("how do I", "is there a
#: way to", "I want to"). BM25 is asked without them (:func:`bm25_words`): the chunk index leaves
#: out only the words found in more than a quarter of its passages, so "want", "way" or "need"
#: stayed, and matched passages for nothing, most in a small vault. The meaning model and the
#: rerank still read the whole question.
QUESTION_WORDS = frozenset(
    """how what which who whom whose why when where can could would should will do does did doing i i'm im me my mine myself
    we us our you your want wanted wants need needs like way ways there is are was were be been being it its it's a an the
    to of for in on at with and or so some something anything any possible able this that these those if then than just
    also again please""".split()
)
_NOT_WORD = re.compile(r"[^\w']+")

#: note.search's operators: a query holding any of them is a person's or a script's exact query,
#: never continued by meaning.
_OPERATOR = re.compile(r'["()]|(?:^|\s)[-+]\S|(?:^|\s)(?:OR|AND|NOT)(?:\s|$)|\b(?:tag|path):', re.UNICODE)


def normalized(query: str) -> str:
    """A search query as retrieval takes it: NFC, runs of whitespace as one, bounded."""
    return " ".join(unicodedata.normalize("NFC", query).split())[:MAX_RETRIEVE_QUERY_CHARS]


def is_plain(query: str) -> bool:
    """Whether a search query is plain words (no phrase, alternative, exclusion, group or filter)."""
    return bool(query.strip()) and _OPERATOR.search(query) is None


def bm25_words(query: str) -> str:
    """``query`` as BM25 is asked it: without the words that only phrase an English question
    (:data:`QUESTION_WORDS`, whatever their case and the punctuation around them), unless
    nothing else is left."""
    words = query.split()
    kept = [w for w in words if _NOT_WORD.sub("", w.lower()) not in QUESTION_WORDS]
    return " ".join(kept) if kept else query


@dataclass(slots=True)
class Ranked:
    chunk: StoredChunk
    score: float
    bm25_rank: int | None = None
    bm25: float | None = None
    meaning_rank: int | None = None
    cosine: float | None = None
    fused: float | None = None


@dataclass(slots=True)
class Ranking:
    passages: list[Ranked]
    rerank: RerankStatus = RerankStatus.OFF
    note: str = ""
    hybrid: bool = False


def capped(chunks: list[Ranked], per_note: int, limit: int) -> list[Ranked]:
    taken: dict[str, int] = {}
    out = []
    for ranked in chunks:
        path = ranked.chunk.path
        if taken.get(path, 0) >= per_note:
            continue
        taken[path] = taken.get(path, 0) + 1
        out.append(ranked)
        if len(out) >= limit:
            break
    return out


def _bm25(
    store: ChunkStore, query: str, keep: Callable[[StoredChunk], bool], want: int, per_note: int, max_fetch: int
) -> list[StoredChunk]:
    fetch = min(max(want * 4, 64), max_fetch)
    while True:
        hits = store.search(query, fetch)
        shown = [c for c in hits if keep(c)]
        taken: dict[str, int] = {}
        enough = 0
        for c in shown:
            if taken.get(c.path, 0) < per_note:
                taken[c.path] = taken.get(c.path, 0) + 1
                enough += 1
        if enough >= want or len(hits) < fetch or fetch >= max_fetch:
            return shown
        fetch = min(fetch * 4, max_fetch)


def rank(
    store: ChunkStore,
    meaning: Meaning | None,
    query: str,
    keep: Callable[[StoredChunk], bool],
    want: int,
    per_note: int,
    *,
    rerank: bool,
    max_fetch: int = MAX_FETCH,
) -> Ranking:
    """The best ``want`` passages for ``query`` (at most ``per_note`` a note) that ``keep`` lets
    through; BM25 reads at most ``max_fetch`` ranked chunks to fill them."""
    pool_size = max(want, min(reranker.MAX_CANDIDATES, want * 2 + 20)) if rerank else want
    # The question is embedded while BM25 ranks (the model's engine releases the GIL).
    embedding = _embedder.submit(query_vector, meaning.choice, query) if meaning is not None and len(meaning.vectors) else None
    # Fused, each ranking is read at least FUSION_DEPTH deep: a note fair in both rankings rises
    # above one first in a single ranking only if both lists reach it. The rerank's pool already
    # is that deep (for more than four passages asked), and it is not widened.
    depth = max(pool_size, FUSION_DEPTH) if embedding is not None else pool_size
    lexical_depth = pool_size if rerank else depth
    shown = _bm25(store, bm25_words(query), keep, lexical_depth, per_note, max_fetch)
    result = Ranking([])
    lexical = capped([Ranked(c, c.score, bm25=c.score) for c in shown], per_note, lexical_depth)
    if rerank:
        scores, status, note = reranker.rerank(query, [r.chunk.text for r in lexical], [r.chunk.score for r in lexical])
        result.rerank, result.note = status, note
        if scores is not None:
            for r, s in zip(lexical, scores, strict=True):
                r.bm25 = r.score = s
            lexical.sort(key=lambda r: -r.score)
    for n, r in enumerate(lexical, start=1):
        r.bm25_rank = n
    semantic: list[Ranked] = []
    if meaning is not None and embedding is not None:
        vector = embedding.result()
        if vector is not None:
            keys, cosines = meaning.vectors.nearest(vector, MEANING_CANDIDATES)
            near = [c for c in store.by_keys(keys, cosines) if keep(c)]
            semantic = capped([Ranked(c, c.score, cosine=c.score) for c in near], per_note, depth)
            semantic = by_note_size(semantic, store.passage_counts(r.chunk.path for r in semantic))
            result.hybrid = True
        elif not result.note:
            result.note = "the meaning model did not answer for this question; BM25 order"
    if not result.hybrid:
        result.passages = lexical[:pool_size]
        return result
    result.passages = fused(lexical, semantic, per_note, pool_size)
    return result


def by_note_size(semantic: list[Ranked], sizes: dict[str, int]) -> list[Ranked]:
    """The meaning ranking with each passage's cosine lowered by
    ``NOTE_SIZE_WEIGHT * ln(passages in its note)``, best first.

    A note is ranked by its best passage, and the best of many passages is higher than the best
    of a few by chance alone: a long manual or a map of content, with hundreds of passages, came
    near the top for most questions and pushed the note that answers them down. The correction
    is that of the expected maximum, small beside the cosines' spread between an answer and a
    near miss (docs/performance.md). ``cosine`` stays the passage's own.
    """

    def corrected(r: Ranked) -> float:
        return (r.cosine or 0.0) - NOTE_SIZE_WEIGHT * math.log(max(sizes.get(r.chunk.path, 1), 1))

    return sorted(semantic, key=lambda r: (-corrected(r), r.chunk.path, r.chunk.line_start))


def _note_ranks(ranked: list[Ranked]) -> dict[str, int]:
    """Each note's 1-based rank in a passage ranking: the rank of its best passage among notes."""
    out: dict[str, int] = {}
    for r in ranked:
        out.setdefault(r.chunk.path, len(out) + 1)
    return out


def fused(lexical: list[Ranked], semantic: list[Ranked], per_note: int, limit: int) -> list[Ranked]:
    """Two passage rankings fused by reciprocal rank at the level of notes, best first.

    A note scores ``1 / (RRF_K + its rank)`` from each ranking it is in (its rank among notes,
    by its best passage there); each of its passages gets that score scaled by its own fused
    score over the note's best one, so the note's best passage carries the note's score and the
    others follow by their own strength. ``bm25_rank`` and ``meaning_rank`` stay the passage's
    own ranks.
    """
    merged: dict[int, Ranked] = {r.chunk.id: r for r in lexical}
    for n, r in enumerate(lexical, start=1):
        r.bm25_rank = n
    for n, r in enumerate(semantic, start=1):
        found = merged.setdefault(r.chunk.id, r)
        found.meaning_rank, found.cosine = n, r.cosine
    note_ranks = (_note_ranks(lexical), _note_ranks(semantic))
    own: dict[int, float] = {}
    best: dict[str, float] = {}
    for r in merged.values():
        own[r.chunk.id] = value = sum(1.0 / (RRF_K + rank) for rank in (r.bm25_rank, r.meaning_rank) if rank is not None)
        best[r.chunk.path] = max(best.get(r.chunk.path, 0.0), value)
    for r in merged.values():
        note = sum(1.0 / (RRF_K + ranks[r.chunk.path]) for ranks in note_ranks if r.chunk.path in ranks)
        r.fused = r.score = note * own[r.chunk.id] / best[r.chunk.path]
    ordered = sorted(merged.values(), key=lambda r: (-r.score, r.chunk.path, r.chunk.line_start))
    return capped(ordered, per_note, limit)
