"""The chunk index: one SQLite file per vault beside the FTS cache, ``<digest>-chunks-v1.sqlite``.

Derived like the FTS cache: deleting it costs a rebuild, and a file that is not this version,
or that SQLite finds damaged, is deleted and made again. Mode 0600, never followed through a
link. Schema::

    doc(path PRIMARY KEY, size, mtime_ns, ino)      the stat each note was chunked at
    chunk(id PRIMARY KEY, path, heading, line_start, line_end, title, text, key)
                                                    key: the passage key (chunks.passage_key), the
                                                    meaning vectors' key
    fts   fts5(title, heading, body, grams; contentless)  rowid = chunk.id; grams: CJK bigrams

BM25 weights: heading 3, title 1.5, body 1, grams 1. One writer at a time; readers borrow a
pooled connection and see the last committed state (WAL).
"""

from __future__ import annotations

import queue
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import apsw

from vaultd.errors import Unavailable
from vaultd.retrieve.chunks import embed_text, passage_key
from vaultd.vault import fts_query
from vaultd.vault.cache.sqlite_file import connect, open_versioned, recreate, signed64

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from pathlib import Path

    from vaultd.retrieve.chunks import Chunk

VERSION = 2
HEADING_SEP = "\x1f"
MAX_READERS = 4
MAX_RECENT = 1000  #: changed paths remembered for the meaning filler
#: Passage keys that appeared or vanished, remembered between two of the filler's takes; past
#: this the record is dropped and the filler lists the whole index once instead.
MAX_KEY_CHANGES = 50_000
MAX_CHUNKS_PER_KEY = 8  #: chunks of one passage key a meaning ranking reads at most
_SCHEMA = f"""
CREATE TABLE doc(path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, ino INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE chunk(
    id INTEGER PRIMARY KEY, path TEXT NOT NULL, heading TEXT NOT NULL,
    line_start INTEGER NOT NULL, line_end INTEGER NOT NULL, title TEXT NOT NULL, text TEXT NOT NULL, key BLOB NOT NULL
);
CREATE INDEX chunk_path ON chunk(path);
CREATE INDEX chunk_key ON chunk(key);
CREATE VIRTUAL TABLE fts USING fts5(title, heading, body, grams, content='', contentless_delete=1,
    tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE vocab USING fts5vocab(fts, 'row');
PRAGMA user_version = {VERSION};
"""
_WEIGHTS = "1.5, 3.0, 1.0, 1.0"
_WHAT = "chunk index"  #: how messages name the file


def file_name(cache_name: str) -> str:
    """The chunk index's name beside the FTS cache named ``cache_name``."""
    return cache_name.rsplit("-v", 1)[0] + f"-chunks-v{VERSION}.sqlite"


@dataclass(frozen=True, slots=True)
class DocStat:
    size: int
    mtime_ns: int
    ino: int


@dataclass(frozen=True, slots=True)
class StoredChunk:
    id: int
    path: str
    heading: tuple[str, ...]
    line_start: int
    line_end: int
    title: str
    text: str
    score: float  #: -bm25: higher is better


@dataclass(frozen=True, slots=True)
class KeyChanges:
    """What the applies since the last take did to the set of passage keys: the meaning filler
    follows it instead of listing 40,000 passages again at every write."""

    paths: list[str]  #: the paths written, oldest first (at most MAX_RECENT)
    appeared: list[bytes]  #: keys no passage carried before
    vanished: list[bytes]  #: keys no passage carries any more
    overflowed: bool  #: more changed than was remembered: list the whole index


class ChunkStore:
    """One vault's chunk index: stat rows, chunk rows and their full-text index."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._writer = open_versioned(path, _SCHEMA, VERSION, _WHAT)
        self._write_lock = threading.Lock()
        self._idle: queue.SimpleQueue[tuple[apsw.Connection, int]] = queue.SimpleQueue()
        self._slots = threading.BoundedSemaphore(MAX_READERS)
        self._generation = 0
        self._closed = False
        self._writes = 0  #: bumped by every apply, so a reader knows its cached row count is stale
        self._counted: tuple[int, int] | None = None
        #: Paths changed by the latest applies, oldest first (bounded): the meaning filler embeds
        #: their passages before the rest, so a changed note is covered again within seconds.
        self.recent: list[str] = []
        self._appeared: dict[bytes, None] = {}
        self._vanished: set[bytes] = set()
        self._overflowed = False

    # -- writing ---------------------------------------------------------------------------

    def stats(self) -> dict[str, DocStat]:
        with self._reader() as con:
            return {p: DocStat(s, m, i) for p, s, m, i in con.execute("SELECT path, size, mtime_ns, ino FROM doc")}

    def apply(self, upserts: Iterable[tuple[str, DocStat, str, list[Chunk]]], deletes: Iterable[str] = ()) -> None:
        """Replace the chunks of ``upserts`` (path, stat, title, chunks) and drop ``deletes``, in one transaction.

        Raises:
            Unavailable: UNAVAILABLE, the chunk index is closed.
        """
        with self._guard(), self._write_lock:
            if self._closed:
                raise Unavailable(f"chunk index {self.path} is closed")
            con = self._writer
            dropped: set[bytes] = set()  #: keys of the rows this apply removed
            appeared: dict[bytes, None] = {}
            with con:
                for path in deletes:
                    dropped.update(self._drop(con, path))
                for path, st, title, chunks in upserts:
                    if not fts_query.is_storable(path):
                        continue
                    self.recent.append(path)
                    dropped.update(self._drop(con, path))
                    con.execute("INSERT INTO doc VALUES (?, ?, ?, ?)", (path, st.size, st.mtime_ns, signed64(st.ino)))
                    safe_title = fts_query.storable(title)
                    for chunk in chunks:
                        text = fts_query.storable(chunk.text)
                        heading = fts_query.storable(HEADING_SEP.join(chunk.heading))
                        key = passage_key(embed_text(safe_title, chunk.heading, text))
                        if key not in appeared and key not in dropped and not _carried(con, key):
                            appeared[key] = None
                        con.execute(
                            "INSERT INTO chunk(path, heading, line_start, line_end, title, text, key) VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (path, heading, chunk.line_start, chunk.line_end, safe_title, text, key),
                        )
                        rowid = con.last_insert_rowid()
                        (t, tg), (h, hg), (b, bg) = map(fts_query.prepare, (safe_title, heading.replace(HEADING_SEP, " "), text))
                        grams = " ".join(g for g in (tg, hg, bg) if g)
                        con.execute("INSERT INTO fts(rowid, title, heading, body, grams) VALUES (?, ?, ?, ?, ?)", (rowid, t, h, b, grams))
                vanished = [k for k in dropped if not _carried(con, k)]
            self._writes += 1
            del self.recent[:-MAX_RECENT]
            self._note_keys(appeared, vanished)

    def _note_keys(self, appeared: dict[bytes, None], vanished: list[bytes]) -> None:
        """Remember what one apply did to the keys (the caller holds the write lock): a key that
        vanished and then appeared again, or the reverse, is neither."""
        if self._overflowed:
            return
        for key in vanished:
            if self._appeared.pop(key, 0) is None:
                continue
            self._vanished.add(key)
        for key in appeared:
            if key in self._vanished:
                self._vanished.discard(key)
            else:
                self._appeared[key] = None
        if len(self._appeared) + len(self._vanished) > MAX_KEY_CHANGES:
            self._overflowed = True
            self._appeared, self._vanished = {}, set()

    def take_changes(self) -> KeyChanges:
        """What the applies since the last take (or listing) did to the passage keys, once."""
        with self._write_lock:
            taken = KeyChanges(self.recent, list(self._appeared), list(self._vanished), self._overflowed)
            self.recent, self._appeared, self._vanished, self._overflowed = [], {}, set(), False
        return taken

    def listing(self) -> list[bytes]:
        """Every distinct passage key in fill order (:meth:`keys_in_fill_order`, the paths written
        since the last take first), and the record of changes started again from this listing:
        no apply commits between the two, so a change is neither lost nor counted twice."""
        with self._guard(), self._write_lock:
            recent = self.recent
            self.recent, self._appeared, self._vanished, self._overflowed = [], {}, set(), False
            with self._reader() as con:
                rows = _whole_listing(con)
        return _fill_order(rows, recent)

    @property
    def writes(self) -> int:
        """How many applies this store has taken: a reader's cue that its lists are stale."""
        return self._writes

    @staticmethod
    def _drop(con: apsw.Connection, path: str) -> set[bytes]:
        """Remove ``path``'s rows; the passage keys they carried."""
        rows = list(con.execute("SELECT id, key FROM chunk WHERE path = ?", (path,)))
        if rows:
            ids = [(i,) for i, _ in rows]
            con.executemany("DELETE FROM fts WHERE rowid = ?", ids)
            con.executemany("DELETE FROM chunk WHERE id = ?", ids)
        con.execute("DELETE FROM doc WHERE path = ?", (path,))
        return {k for _, k in rows}

    # -- reading ---------------------------------------------------------------------------

    @contextmanager
    def _reader(self) -> Iterator[apsw.Connection]:
        """A read connection of the chunk index, never one of a closed index.

        Raises:
            Unavailable: UNAVAILABLE, the chunk index is closed.
        """
        if self._closed:
            raise Unavailable(f"chunk index {self.path} is closed")
        with self._slots:
            try:
                con, generation = self._idle.get_nowait()
            except queue.Empty:
                con, generation = connect(self.path), self._generation
                con.execute("PRAGMA query_only = 1")
            try:
                yield con
            finally:
                if self._closed or generation != self._generation:
                    con.close()
                else:
                    self._idle.put((con, generation))

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """A damaged chunk index is recreated at once: it holds nothing the vault cannot give again.

        Raises:
            Unavailable: UNAVAILABLE, SQLite found it damaged; it has been recreated, retry.
        """
        try:
            yield
        except (apsw.CorruptError, apsw.NotADBError) as exc:
            self.reset()
            raise Unavailable(f"the chunk index {self.path} was damaged and has been recreated; retry") from exc

    def reset(self) -> None:
        with self._write_lock:
            self._generation += 1
            self._close_connections()
            self._writer = recreate(self.path, _SCHEMA, _WHAT)
            self._overflowed = True  # every key vanished: whoever follows lists again
            self._appeared, self._vanished = {}, set()

    def _rows(self, con: apsw.Connection) -> int:
        """How many chunks there are, counted once per write (the count reads the whole table)."""
        generation = self._writes
        if self._counted is None or self._counted[0] != generation:
            self._counted = (generation, con.execute("SELECT count(*) FROM chunk").get or 1)
        return self._counted[1]

    def tokenize(self, con: apsw.Connection, text: str) -> list[str]:
        tokenizer = con.fts5_tokenizer("unicode61", ["remove_diacritics", "2"])
        return cast(
            "list[str]", tokenizer(text.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None, include_offsets=False, include_colocated=False)
        )

    def search(self, terms_text: str, limit: int, max_terms: int = 64) -> list[StoredChunk]:
        """Chunks matching any word of ``terms_text``, best BM25 first.

        Words found in more than a quarter of the chunks add little to BM25 and make the match
        touch most rows; they are left out unless nothing rarer is asked for. CJK text is asked
        as its telling bigrams (:func:`vaultd.vault.fts_query.question_grams`).
        """
        with self._guard(), self._reader() as con:
            with con:  # one read transaction: ranks and rows from one snapshot
                latin, _ = fts_query.prepare(terms_text)
                tokens = list(dict.fromkeys(self.tokenize(con, latin)))[:max_terms]
                grams = list(dict.fromkeys(fts_query.question_grams(terms_text)))[:max_terms]
                if not tokens and not grams:
                    return []
                total = self._rows(con)
                if tokens:
                    marks = ",".join("?" * len(tokens))
                    df = dict(con.execute(f"SELECT term, doc FROM vocab WHERE term IN ({marks})", tokens))
                    known = sorted((t for t in tokens if t in df), key=lambda t: df[t])
                    rare = [t for t in known if df[t] <= total / 4]
                    tokens = rare or known[:3]
                parts = [_quote(t) for t in tokens] + [f"grams:{_quote(g)}" for g in grams]
                if not parts:
                    return []
                # Rank on the full-text table alone, then read only the chunk rows kept: joining
                # every matching row before the sort cost several times the ranking itself.
                ranked = list(
                    con.execute(
                        f"SELECT rowid, bm25(fts, {_WEIGHTS}) AS r FROM fts WHERE fts MATCH ? ORDER BY r LIMIT ?",
                        (" OR ".join(parts), limit),
                    )
                )
                if not ranked:
                    return []
                marks = ",".join("?" * len(ranked))
                rows = {
                    r[0]: r
                    for r in con.execute(
                        f"SELECT id, path, heading, line_start, line_end, title, text FROM chunk WHERE id IN ({marks})",
                        [i for i, _ in ranked],
                    )
                }
        found = []
        for rowid, rank in ranked:
            row = rows.get(rowid)
            if row is None:
                continue
            i, path, heading, start, end, title, text = row
            found.append(StoredChunk(i, path, tuple(heading.split(HEADING_SEP)) if heading else (), start, end, title, text, -float(rank)))
        found.sort(key=lambda c: (-c.score, c.path, c.line_start))
        return found

    def keys_in_fill_order(self, first: Iterable[str] = ()) -> list[bytes]:
        """Every distinct passage key, in the order a slow model should embed them: the passages
        of the paths in ``first`` (the recently changed), then every note's first passage, then
        every note's second, and so on; so a model stopped part way covers every note's head."""
        with self._guard(), self._reader() as con:
            rows = _whole_listing(con)
        return _fill_order(rows, first)

    def keys_of_paths(self, paths: Sequence[str]) -> list[bytes]:
        """The distinct passage keys of ``paths``, path by path in the order given, each note's
        passages in line order: what a write changed, head first."""
        if not paths:
            return []
        marks = ",".join("?" * len(paths))
        with self._guard(), self._reader() as con:
            rows = list(con.execute(f"SELECT path, key FROM chunk WHERE path IN ({marks}) ORDER BY line_start", list(paths)))
        place = {p: n for n, p in enumerate(paths)}
        rows.sort(key=lambda r: place[r[0]])  # stable: line order within a path
        return list(dict.fromkeys(k for _, k in rows))

    def texts_of(self, keys: Sequence[bytes]) -> dict[bytes, str]:
        """What the meaning model embeds for each of ``keys`` still in the index."""
        if not keys:
            return {}
        marks = ",".join("?" * len(keys))
        with self._guard(), self._reader() as con:
            rows = list(con.execute(f"SELECT key, title, heading, text FROM chunk WHERE key IN ({marks})", list(keys)))
        return {k: embed_text(t, tuple(h.split(HEADING_SEP)) if h else (), x) for k, t, h, x in rows}

    def by_keys(self, keys: Sequence[bytes], scores: Sequence[float]) -> list[StoredChunk]:
        """The chunks carrying ``keys`` (identical passages share one: at most
        :data:`MAX_CHUNKS_PER_KEY` of each, so a passage pasted into 10,000 notes costs a query
        no more than a few), each scored with its key's score, best first."""
        if not keys:
            return []
        score_of = dict(zip(keys, scores, strict=True))
        marks = ",".join("?" * len(keys))
        with self._guard(), self._reader() as con:
            rows = list(
                con.execute(
                    "SELECT id, path, heading, line_start, line_end, title, text, key FROM ("
                    "SELECT *, row_number() OVER (PARTITION BY key ORDER BY path, line_start) AS n "
                    f"FROM chunk WHERE key IN ({marks})) WHERE n <= ?",
                    [*keys, MAX_CHUNKS_PER_KEY],
                )
            )
        found = [
            StoredChunk(i, path, tuple(heading.split(HEADING_SEP)) if heading else (), start, end, title, text, score_of[key])
            for i, path, heading, start, end, title, text, key in rows
        ]
        found.sort(key=lambda c: (-c.score, c.path, c.line_start))
        return found

    def passage_counts(self, paths: Iterable[str]) -> dict[str, int]:
        """How many passages each of ``paths`` has in the index (a path with none is left out)."""
        wanted = list(dict.fromkeys(paths))
        if not wanted:
            return {}
        marks = ",".join("?" * len(wanted))
        with self._guard(), self._reader() as con:
            return dict(con.execute(f"SELECT path, count(*) FROM chunk WHERE path IN ({marks}) GROUP BY path", wanted))

    def key_of(self, ids: Sequence[int]) -> dict[int, bytes]:
        """The passage key of each chunk id still in the index."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        with self._guard(), self._reader() as con:
            return dict(con.execute(f"SELECT id, key FROM chunk WHERE id IN ({marks})", list(ids)))

    def close(self) -> None:
        with self._write_lock:
            if self._closed:
                return
            self._closed = True
            self._close_connections()

    def _close_connections(self) -> None:
        """Close the idle readers and the writer (the caller holds the write lock); a reader
        still out is closed when it comes back."""
        while True:
            try:
                self._idle.get_nowait()[0].close()
            except queue.Empty:
                break
        self._writer.close()


def _whole_listing(con: apsw.Connection) -> list[tuple[bytes, str]]:
    """Every chunk's key and path in fill order. The scan reads the whole chunk table through
    the connection's page cache; the pages it cached are let go after, so a listing does not
    leave a reader holding 16 MB of rows nobody asks for."""
    rows = list(con.execute("SELECT key, path FROM chunk ORDER BY path, line_start"))
    con.execute("PRAGMA shrink_memory")
    return rows


def _fill_order(rows: list[tuple[bytes, str]], first: Iterable[str]) -> list[bytes]:
    early = set(first)
    ordinal: dict[str, int] = {}
    keyed: list[tuple[int, int, bytes]] = []
    for n, (key, path) in enumerate(rows):
        ordinal[path] = ordinal.get(path, -1) + 1
        keyed.append((-1 if path in early else ordinal[path], n, key))
    keyed.sort()
    return list(dict.fromkeys(k for _, _, k in keyed))


def _carried(con: apsw.Connection, key: bytes) -> bool:
    """Whether a passage carries ``key`` (through the key's index: a few microseconds)."""
    return con.execute("SELECT 1 FROM chunk WHERE key = ? LIMIT 1", (key,)).get is not None


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'
