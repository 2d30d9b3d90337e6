"""Full-text search over the cache: FTS5 for words, a bigram table for CJK, filters in SQL.

Ranking is bm25 with column weights title 5, meta 2, body 1, ties broken by path; ``Hit.score``
is ``-bm25`` so higher is better (0 for a note found only by a filter or a negation, listed after
the ranked ones, by path). Snippet marks are ``**``, cuts are ``…``; how a query becomes the SQL
below is :mod:`vaultd.vault.cache.query_plan`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from vaultd.vault import fts_query
from vaultd.vault.cache.query_plan import FolderIs, Mode, QueryPlan
from vaultd.vault.cache.records import normalize_folder, normalize_tag

if TYPE_CHECKING:
    import apsw

    from vaultd.vault.cache.connections import Reader

_WEIGHTS = "5.0, 2.0, 1.0"
_SNIPPET_TOKENS = 24
MAX_LIMIT = 1000  #: hits one search returns at most
_SNIPPET_SQL = (
    f"SELECT title, snippet(fts, -1, '{fts_query.MARK_OPEN}', '{fts_query.MARK_CLOSE}',"
    f" '{fts_query.ELLIPSIS}', {_SNIPPET_TOKENS}) FROM fts WHERE fts MATCH ? AND rowid = ?"
)
_TEXT_SQL = "SELECT title, meta, body FROM fts WHERE rowid = ?"


class Hit(msgspec.Struct, frozen=True):
    path: str
    score: float  #: ``-bm25``: higher is better; comparable only within one search
    title: str
    snippet: str  #: at most 300 characters, matches in ``**``, cuts as ``…``
    excerpt: str = ""  #: the snippet without its marks
    highlights: tuple[tuple[int, int], ...] = ()  #: the marked spans of ``excerpt``


def _folder_sql(folder: str, params: list[object]) -> str:
    params += [folder, folder + "/", folder + "0"]  # "0" sorts right after "/": the subtree's range
    return "(note.folder = ? OR (note.folder >= ? AND note.folder < ?))"


def filters(*, type: str | None, domain: str | None, tag: str | None, folder: str | None) -> tuple[list[str], list[object]] | None:
    """The SQL conditions and their parameters for the filters; None when none can match."""
    where: list[str] = []
    params: list[object] = []
    if type is not None:
        where.append("note.type = ?")
        params.append(fts_query.storable(type))
    if domain is not None:
        where.append("note.domain = ?")
        params.append(fts_query.storable(domain))
    if folder is not None and (f := normalize_folder(folder)):
        where.append(_folder_sql(f, params))
    if tag is not None:
        if not (t := normalize_tag(tag)):
            return None
        where.append("note.id IN (SELECT id FROM tag WHERE tag = ?)")
        params.append(t)
    return where, params


def search(reader: Reader, query: QueryPlan, where: list[str], params: list[object], limit: int) -> list[Hit]:
    """The hits for a planned query under the filters, on one read transaction."""
    if query.mode is Mode.EMPTY:
        return []
    where, params = list(where), list(params)
    for f in query.filters:
        if isinstance(f, FolderIs):
            where.append(_folder_sql(f.folder, params))
        else:
            where.append("note.id IN (SELECT id FROM tag WHERE tag = ?)")
            params.append(f.tag)
    run = _search_general if query.mode is Mode.GENERAL else _search
    with reader.con:  # one read transaction: the snippets come from the ranked snapshot
        hits = run(reader.con, query, where, params, limit)
    return hits


def _snippet(con: apsw.Connection, q: QueryPlan, rowid: int, ranked: bool) -> tuple[str, fts_query.Shaped]:
    """The title and the snippet of one hit: around its matches, else the start of its text."""
    if ranked and q.main is not None:
        title, raw = con.execute(_SNIPPET_SQL, (q.main, rowid)).fetchone() or ("", "")
        return title, fts_query.shape_snippet(raw, q.cjk_terms)
    title, meta, body = con.execute(_TEXT_SQL, (rowid,)).fetchone() or ("", "", "")
    windows = (fts_query.cjk_window(text, q.cjk_terms) for text in (body, meta, title)) if q.cjk_terms else iter(())
    return title, next((w for w in windows if w), None) or fts_query.lead_snippet(body)


def _hit(con: apsw.Connection, q: QueryPlan, rowid: int, path: str, rank: float | None) -> Hit:
    title, shaped = _snippet(con, q, rowid, rank is not None)
    return Hit(
        path=path,
        score=0.0 if rank is None else -rank,
        title=title.replace(fts_query.ZWSP, ""),
        snippet=shaped.snippet,
        excerpt=shaped.excerpt,
        highlights=shaped.highlights,
    )


def _search(con: apsw.Connection, q: QueryPlan, where: list[str], params: list[object], limit: int) -> list[Hit]:
    # Words rank by the main table; CJK-only queries by the bigram table. CROSS JOIN keeps FTS5
    # the outer loop: one MATCH, then a primary-key lookup per matching row.
    table, match = ("fts", q.main) if q.main is not None else ("cjk", q.cjk)
    sql = (
        f"SELECT {table}.rowid, note.path, bm25({table}, {_WEIGHTS}) AS r FROM {table}"
        f" CROSS JOIN note ON note.id = {table}.rowid WHERE {table} MATCH ?"
    )
    args: list[object] = [match]
    if q.main is not None and q.cjk is not None:
        # "+" keeps the IN from becoming one FTS5 lookup per bigram hit (25x slower).
        sql += " AND +fts.rowid IN (SELECT rowid FROM cjk WHERE cjk MATCH ?)"
        args.append(q.cjk)
    sql += "".join(f" AND {w}" for w in where) + " ORDER BY r, note.path LIMIT ?"
    # Snippets only for the rows kept: FTS5 builds one per row it is asked for.
    return [_hit(con, q, rowid, path, rank) for rowid, path, rank in list(con.execute(sql, [*args, *params, limit]))]


def _search_general(con: apsw.Connection, q: QueryPlan, where: list[str], params: list[object], limit: int) -> list[Hit]:
    # The query's condition selects the notes; their positive words (or CJK terms) rank them:
    # one MATCH computes every bm25 at once (materialized, then joined by rowid), so ranking
    # costs one FTS5 query whatever the number of notes the condition keeps.
    conditions = [c for c in (q.where, *where) if c]
    rank_table, rank_match = ("fts", q.main) if q.main is not None else ("cjk", q.cjk)
    args: list[object] = []
    if rank_match is not None:
        sql = (
            f"WITH ranked(id, r) AS MATERIALIZED (SELECT rowid, bm25({rank_table}, {_WEIGHTS}) FROM {rank_table}"
            f" WHERE {rank_table} MATCH ?) SELECT note.id, note.path, ranked.r FROM note LEFT JOIN ranked ON ranked.id = note.id"
        )
        args.append(rank_match)
        order = " ORDER BY ranked.r IS NULL, ranked.r, note.path LIMIT ?"
    else:
        sql = "SELECT note.id, note.path, NULL FROM note"
        order = " ORDER BY note.path LIMIT ?"
    sql += (" WHERE " + " AND ".join(conditions) if conditions else "") + order
    return [_hit(con, q, rowid, path, rank) for rowid, path, rank in list(con.execute(sql, [*args, *q.params, *params, limit]))]
