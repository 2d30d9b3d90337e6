"""note.retrieve: passages ranked by BM25 over the chunk index, reranked when the local model is there."""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

import anyio

from protocol.limits import MAX_RETRIEVE_QUERY_CHARS
from protocol.methods import retrieve
from protocol.methods.retrieve import MAX_PASSAGE_CHARS, Passage, Ranking, RerankStatus, RetrieveParams, RetrieveResult
from vaultd.api.handlers import CallContext, handles
from vaultd.api.read_methods import live_view, log_path_of, obsidian_shown
from vaultd.errors import InvalidParams
from vaultd.retrieve import rerank as reranker
from vaultd.retrieve.live import passages_for

if TYPE_CHECKING:
    from vaultd.retrieve.store import StoredChunk

MAX_FETCH = 20000  #: ranked chunks fetched at most to fill a page past private notes and the per-note cap


def normalized_query(raw: str) -> str:
    """The query as bounded: NFC, runs of whitespace as one space.

    Raises:
        InvalidParams: empty, or over the bound once normalized.
    """
    query = " ".join(unicodedata.normalize("NFC", raw).split())
    if not query:
        raise InvalidParams("the query is empty")
    if len(query) > MAX_RETRIEVE_QUERY_CHARS:
        raise InvalidParams(f"the query is {len(query)} characters once normalized; at most {MAX_RETRIEVE_QUERY_CHARS}")
    return query


def _capped(chunks: list[StoredChunk], per_note: int, limit: int) -> list[StoredChunk]:
    taken: dict[str, int] = {}
    out = []
    for chunk in chunks:
        if taken.get(chunk.path, 0) >= per_note:
            continue
        taken[chunk.path] = taken.get(chunk.path, 0) + 1
        out.append(chunk)
        if len(out) >= limit:
            break
    return out


def _passage(chunk: StoredChunk, score: float) -> Passage:
    text = chunk.text if len(chunk.text) <= MAX_PASSAGE_CHARS else chunk.text[: MAX_PASSAGE_CHARS - 1] + "…"
    return Passage(
        path=chunk.path,
        title=chunk.title,
        heading=list(chunk.heading),
        line_start=chunk.line_start,
        line_end=chunk.line_end,
        text=text,
        score=score,
        citation=f"{chunk.path}#{chunk.heading[-1]}" if chunk.heading else chunk.path,
    )


@handles(retrieve.RETRIEVE)
async def retrieve_passages(ctx: CallContext, params: RetrieveParams) -> RetrieveResult:
    query = normalized_query(params.query)
    live, view = await live_view(ctx, params.vault, params.fresh)
    store = (await passages_for(live)).store
    log_path = log_path_of(ctx, params.vault)
    folder = params.folder.strip("/") + "/" if params.folder and params.folder.strip("/") else None
    notes = live.index.notes
    shown_here = await obsidian_shown(live.root, params.include_excluded)
    want = max(params.limit, min(reranker.MAX_CANDIDATES, params.limit * 2 + 20)) if params.rerank else params.limit

    def keep(chunk: StoredChunk) -> bool:
        return (
            chunk.path in notes
            and chunk.path != log_path
            and view.visible(chunk.path)
            and shown_here(chunk.path)
            and (folder is None or chunk.path.startswith(folder))
        )

    def ranked() -> list[StoredChunk]:
        fetch = max(want * 4, 64)
        while True:
            hits = store.search(query, fetch)
            shown = [c for c in hits if keep(c)]
            if len(_capped(shown, params.per_note, want)) >= want or len(hits) < fetch or fetch >= MAX_FETCH:
                return shown
            fetch = min(fetch * 4, MAX_FETCH)

    def answer() -> RetrieveResult:
        shown = ranked()
        if not params.rerank:
            chosen = _capped(shown, params.per_note, params.limit)
            return RetrieveResult(passages=[_passage(c, c.score) for c in chosen], ranking=Ranking.BM25, rerank=RerankStatus.OFF)
        pool = _capped(shown, params.per_note, want)
        scores, status, note = reranker.rerank(query, [c.text for c in pool], [c.score for c in pool])
        if scores is None:
            chosen = _capped(shown, params.per_note, params.limit)
            return RetrieveResult(passages=[_passage(c, c.score) for c in chosen], ranking=Ranking.BM25, rerank=status, note=note)
        order = sorted(range(len(pool)), key=lambda i: (-scores[i], i))[: params.limit]
        return RetrieveResult(passages=[_passage(pool[i], scores[i]) for i in order], ranking=Ranking.RERANKED, rerank=RerankStatus.USED)

    return await anyio.to_thread.run_sync(answer)
