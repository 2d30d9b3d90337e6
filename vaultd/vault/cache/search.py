"""Full-text search over the cache: FTS5 for words, a bigram table for CJK, filters in SQL.

Ranking is bm25 with column weights title 5, meta 2, body 1, ties broken by path; ``Hit.score``
is ``-bm25`` so higher is better. Snippet marks are ``**``, cuts are ``…``.
"""

from __future__ import annotations

import apsw
import msgspec

from vaultd.vault import fts_query
from vaultd.vault.cache.connections import Reader
from vaultd.vault.cache.records import normalize_folder, normalize_tag

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
    marks: list[tuple[int, int]] = []  #: each match's [start, end) in ``snippet``, its ``**`` outside


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
        where.append("(note.folder = ? OR (note.folder >= ? AND note.folder < ?))")
        params += [f, f + "/", f + "0"]  # "0" sorts right after "/": the subtree's range
    if tag is not None:
        if not (t := normalize_tag(tag)):
            return None
        where.append("note.id IN (SELECT id FROM tag WHERE tag = ?)")
        params.append(t)
    return where, params


def search(reader: Reader, query: str, where: list[str], params: list[object], limit: int) -> list[Hit]:
    """The hits for ``query`` under the filters, on one read transaction; [] for an empty query."""
    compiled = fts_query.compile_query(query, reader.tokenize)
    if compiled.empty:
        return []
    with reader.con:  # one read transaction: the snippets come from the ranked snapshot
        hits = _search(reader.con, compiled, where, params, limit)
    return hits


def _search(con: apsw.Connection, q: fts_query.CompiledQuery, where: list[str], params: list[object], limit: int) -> list[Hit]:
    # Latin terms rank by the main table; CJK-only queries by the bigram table. CROSS JOIN
    # keeps FTS5 the outer loop: one MATCH, then a primary-key lookup per matching row.
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
    hits = []
    # Snippets only for the rows kept: FTS5 builds one per row it is asked for.
    for rowid, path, rank in list(con.execute(sql, [*args, *params, limit])):
        if q.main is not None:
            title, raw = con.execute(_SNIPPET_SQL, (q.main, rowid)).fetchone() or ("", "")
            snippet, marks = fts_query.marked_snippet(raw, q.cjk_terms)
        else:
            title, meta, body = con.execute(_TEXT_SQL, (rowid,)).fetchone() or ("", "", "")
            windows = (fts_query.cjk_window(text, q.cjk_terms) for text in (body, meta, title))
            snippet, marks = next((w for w in windows if w), ("", []))
        hits.append(Hit(path=path, score=-rank, title=title.replace(fts_query.ZWSP, ""), snippet=snippet, marks=marks))
    return hits
