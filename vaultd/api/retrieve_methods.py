"""note.retrieve: passages ranked by BM25 over the chunk index, reranked when the local model is
there, fused with the meaning model's ranking over the passages it has covered; bounded in bytes."""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

import anyio

from protocol.limits import MAX_RETRIEVE_QUERY_CHARS
from protocol.methods import retrieve
from protocol.methods.retrieve import MAX_PASSAGE_CHARS, Parts, Passage, Ranking, RerankStatus, RetrieveParams, RetrieveResult
from vaultd.api.answer_bytes import asked, cursor_at, fitted, offset_of
from vaultd.api.handlers import CallContext, handles
from vaultd.api.read_methods import live_view, log_path_of, obsidian_shown
from vaultd.errors import InvalidParams
from vaultd.retrieve import hybrid
from vaultd.retrieve.live import coverage, passages_for
from vaultd.retrieve.meaning import absence as meaning_absence

if TYPE_CHECKING:
    from vaultd.retrieve.store import StoredChunk


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


def _passage(ranked: hybrid.Ranked, explain: bool) -> Passage:
    chunk = ranked.chunk
    text = chunk.text if len(chunk.text) <= MAX_PASSAGE_CHARS else chunk.text[: MAX_PASSAGE_CHARS - 1] + "…"
    parts = None
    if explain:
        parts = Parts(
            bm25_rank=ranked.bm25_rank, bm25=ranked.bm25, meaning_rank=ranked.meaning_rank, cosine=ranked.cosine, fused=ranked.fused
        )
    return Passage(
        path=chunk.path,
        title=chunk.title,
        heading=list(chunk.heading),
        line_start=chunk.line_start,
        line_end=chunk.line_end,
        text=text,
        score=ranked.score,
        citation=f"{chunk.path}#{chunk.heading[-1]}" if chunk.heading else chunk.path,
        parts=parts,
    )


@handles(retrieve.RETRIEVE)
async def retrieve_passages(ctx: CallContext, params: RetrieveParams) -> RetrieveResult:
    query = normalized_query(params.query)
    question = asked(
        query,
        params.vault or "",
        params.folder or "",
        params.per_note,
        params.rerank,
        params.meaning,
        params.limit,
        params.include_excluded,
    )
    offset = offset_of(params.cursor, question)
    live, view = await live_view(ctx, params.vault, params.fresh)
    found = await passages_for(live)
    log_path = log_path_of(ctx, params.vault)
    folder = params.folder.strip("/") + "/" if params.folder and params.folder.strip("/") else None
    notes = live.index.notes
    shown_here = await obsidian_shown(live.root, params.include_excluded)

    def keep(chunk: StoredChunk) -> bool:
        return (
            chunk.path in notes
            and chunk.path != log_path
            and view.visible(chunk.path)
            and shown_here(chunk.path)
            and (folder is None or chunk.path.startswith(folder))
        )

    def answer() -> RetrieveResult:
        ranking = hybrid.rank(
            found.store,
            found.meaning if params.meaning else None,
            query,
            keep,
            offset + params.limit,
            params.per_note,
            rerank=params.rerank,
        )
        page = [_passage(r, params.explain) for r in ranking.passages[offset : offset + params.limit]]
        shown = fitted(page, params.max_bytes)
        left = len(page) - len(shown)
        order = Ranking.HYBRID if ranking.hybrid else Ranking.RERANKED if ranking.rerank is RerankStatus.USED else Ranking.BM25
        note = ranking.note
        if found.meaning is None and params.meaning and not note:
            note = meaning_absence() or ""
        return RetrieveResult(
            passages=shown,
            ranking=order,
            rerank=ranking.rerank,
            note=note,
            meaning=coverage(live),
            left_out=left,
            cursor=cursor_at(offset + len(shown), question) if left else None,
        )

    return await anyio.to_thread.run_sync(answer)
