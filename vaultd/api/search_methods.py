"""``note.search``: the notes holding every word of a query, ranked by the text index, and for a
plain question the notes that share a word or a meaning with it after them.

Its reads of the vault go through the same views as every read (:mod:`vaultd.api.read_methods`):
the caller's visibility, vaultd's own log left out, Obsidian's excluded files left out unless asked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
import msgspec

from protocol.limits import MAX_QUERY_BYTES
from protocol.methods import reads
from protocol.methods.reads import Match, SearchHit, SearchParams, SearchResult
from vaultd.api.answer_bytes import asked, cursor_at, fitted, offset_of
from vaultd.api.handlers import CallContext, handles
from vaultd.api.read_methods import live_view, log_path_of, obsidian_shown
from vaultd.errors import InvalidParams
from vaultd.policy import secret_issues
from vaultd.retrieve import hybrid
from vaultd.retrieve.live import passages_for
from vaultd.sources import references
from vaultd.vault import fts_query

if TYPE_CHECKING:
    from collections.abc import Callable

    from vaultd.policy.visibility import Visibility
    from vaultd.retrieve.store import StoredChunk
    from vaultd.vault.cache import Hit
    from vaultd.vault.watcher import LiveIndex

MAX_SEARCH_FETCH = 1000  #: ranked hits fetched at most to fill a page past private notes


@handles(reads.SEARCH)
async def search(ctx: CallContext, params: SearchParams) -> SearchResult:
    """Ranked hits for a query, cut to ``max_bytes`` with a cursor to the rest; the query's size
    is bounded before the index sees it.

    Raises:
        InvalidParams: INVALID_PARAMS, the query is over ``MAX_QUERY_BYTES``, or the cursor is
            not one of this query's.
    """
    if len(params.query.encode("utf-8")) > MAX_QUERY_BYTES:
        raise InvalidParams(f"the query is over {MAX_QUERY_BYTES} UTF-8 bytes")
    question = asked(
        params.query,
        params.vault,
        params.type,
        params.domain,
        params.tag,
        params.folder,
        params.limit,
        params.meaning,
        params.include_excluded,
    )
    offset = offset_of(params.cursor, question)
    result = await _ranked_hits(ctx, msgspec.structs.replace(params, limit=offset + params.limit, cursor=None))
    page = result.hits[offset : offset + params.limit]
    result.hits = fitted(page, params.max_bytes)
    result.left_out = len(page) - len(result.hits)
    result.cursor = cursor_at(offset + len(result.hits), question) if result.left_out else None
    return result


async def _ranked_hits(ctx: CallContext, params: SearchParams) -> SearchResult:
    """Every hit up to ``params.limit``: the notes holding every word, then, for plain words, by meaning."""
    live, view = await live_view(ctx, params.vault, params.fresh)
    index = live.index
    if index.cache is None:
        return SearchResult(hits=[])
    folder = params.folder.strip("/") if params.folder else None
    log_path = log_path_of(ctx, params.vault)
    shown_here = await obsidian_shown(live.root, params.include_excluded)

    def visible_hits(query: str) -> list[Hit]:
        # Private hits (and vaultd's own log) are dropped after ranking, so ask for more until
        # enough visible ones remain or the ranking runs out (bounded by the cache's own limit).
        limit = params.limit + 1
        while True:
            hits = index.cache.search(  # type: ignore[union-attr]
                query, type=params.type, domain=params.domain, tag=params.tag, folder=folder, limit=limit
            )
            shown = [h for h in hits if h.path in index.notes and h.path != log_path and view.visible(h.path) and shown_here(h.path)]
            if len(shown) >= params.limit or len(hits) < limit or limit >= MAX_SEARCH_FETCH:
                return shown[: params.limit]
            limit = min(limit * 4, MAX_SEARCH_FETCH)

    exact: list[str] = []
    if references.looks_like_identifier(params.query):
        # A DOI, citekey or arXiv id names its reference note exactly: that note comes first. A
        # search never waits for a refresh or a rebuild holding the index: it then uses the table
        # built at the last change it saw (or none yet), as the full-text cache lags by as much.
        table = references.latest(index) if live.busy else None
        if table is None and not live.busy:
            async with live.held_still():
                table = await anyio.to_thread.run_sync(references.table, index)
        if table is not None:
            exact = [
                p
                for p in table.find(params.query)
                if p in index.notes
                and p != log_path
                and view.visible(p)
                and shown_here(p)
                and references.matches_filters(index.notes[p], params.type, params.domain, params.tag, folder)
            ]

    def answer() -> SearchResult:
        hits = visible_hits(params.query)
        suggestion = None
        if not hits and not exact and params.query.strip():
            # Only a correction that finds notes this caller sees is offered.
            # A query is echoed back in it: one that looks like a secret never is.
            corrected = index.cache.suggest(params.query)  # type: ignore[union-attr]
            if corrected is not None and not secret_issues(corrected, "query") and visible_hits(corrected):
                suggestion = corrected
        top = max((h.score for h in hits), default=0.0)
        named = set(exact)
        found = [
            SearchHit(path=p, title=index.title_of(p), score=top + 1.0, snippet=references.IDENTIFIER_SNIPPET)
            for p in exact
            if p in index.notes
        ]
        found += [
            SearchHit(path=h.path, title=h.title, score=h.score, snippet=h.snippet, excerpt=h.excerpt, highlights=list(h.highlights))
            for h in hits
            if h.path not in named
        ]
        return SearchResult(hits=found[: params.limit], did_you_mean=suggestion)

    result = await anyio.to_thread.run_sync(answer)
    if params.meaning and len(result.hits) < params.limit and hybrid.is_plain(params.query):
        result.hits += await _by_meaning(live, view, params, log_path, folder, {h.path for h in result.hits}, shown_here)
    return result


async def _by_meaning(
    live: LiveIndex,
    view: Visibility,
    params: SearchParams,
    log_path: str,
    folder: str | None,
    seen: set[str],
    shown_here: Callable[[str], bool],
) -> list[SearchHit]:
    """A plain-words search's continuation: notes ranked by any word and by meaning (one passage
    each, its lines as the snippet), under the same filters, after the notes holding every word."""
    found = await passages_for(live)
    index = live.index
    query = hybrid.normalized(params.query)

    by_record = references.needs_record(params.type, params.domain, params.tag)

    def keep(chunk: StoredChunk) -> bool:
        path = chunk.path
        if path in seen or path == log_path or path not in index.notes:
            return False
        if not (view.visible(path) and shown_here(path)):
            return False
        if folder is not None and not references.in_folder(path, folder):
            return False
        if not by_record:
            return True
        record = index.notes.get(path)
        return record is not None and references.matches_filters(record, params.type, params.domain, params.tag, folder)

    def more() -> list[SearchHit]:
        ranking = hybrid.rank(
            found.store, found.meaning, query, keep, params.limit - len(seen), 1, rerank=False, max_fetch=hybrid.CONTINUATION_FETCH
        )
        hits = []
        for ranked in ranking.passages[: params.limit - len(seen)]:
            lead = fts_query.lead_snippet(ranked.chunk.text)
            hits.append(
                SearchHit(
                    path=ranked.chunk.path,
                    title=ranked.chunk.title,
                    score=ranked.score,
                    snippet=lead.snippet,
                    excerpt=lead.excerpt,
                    match=Match.MEANING,
                )
            )
        return hits

    return await anyio.to_thread.run_sync(more)
