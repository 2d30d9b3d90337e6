"""The per-vault derived SQLite cache: parsed records for a fast restart, and full-text search.

The in-memory index owns the truth; this file only saves work. Deleting it costs a rebuild, and
any file we cannot trust (another schema version, corruption, not a database) is deleted and
recreated on open, never fatal.

Schema (``PRAGMA user_version`` = ``SCHEMA_VERSION * 1000 + RECORD_VERSION``)::

    note(id INTEGER PRIMARY KEY, path TEXT UNIQUE, size, mtime_ns, ino, type, domain, folder)
        one small row per note: the stat triple, and the filter fields search joins on
    record(id INTEGER PRIMARY KEY, data BLOB)
        the NoteRecord as msgpack, kept apart so the filter join never reads it
    tag(tag, id) PRIMARY KEY (tag, id) WITHOUT ROWID
        lowercased tags with every parent: ``a/b`` is stored as ``a`` and ``a/b``
    fts  fts5(title, meta, body; unicode61 remove_diacritics 2)   rowid = note.id
        the text (see fts_query.prepare); meta = aliases + description. Content is stored,
        since snippets need it.
    cjk  fts5(title, meta, body; ascii; contentless, contentless_delete)   rowid = note.id
        CJK bigrams of the same columns, only for notes that have CJK text.

Ranking is bm25 with column weights title 5, meta 2, body 1, ties broken by path; ``Hit.score``
is ``-bm25`` so higher is better. Snippet marks are ``**``, cuts are ``…``.

Threads: one writer at a time (``apply`` takes a lock and owns the writer connection); every
read borrows a connection from a pool, one thread per connection at a time, so reads run beside
a write and see the last committed state (WAL).
"""

from __future__ import annotations

import enum
import functools
import gc
import hashlib
import os
import posixpath
import queue
import stat
import threading
import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import TypeVar, cast

import apsw
import msgspec

from vaultd.errors import Unavailable
from vaultd.vault import fts_query
from vaultd.vault.model import RECORD_VERSION, NoteRecord

SCHEMA_VERSION = 1
_USER_VERSION = SCHEMA_VERSION * 1000 + RECORD_VERSION
_WEIGHTS = "5.0, 2.0, 1.0"
_SNIPPET_TOKENS = 24
_MAX_LIMIT = 1000
_CHUNK = 512
_SIDECARS = ("-wal", "-shm", "-journal")
#: How long a connection waits for a lock; only another process (or a checkpoint) holds one long.
_BUSY_TIMEOUT_MS = 5000
#: FTS5 buffers this many bytes of new postings before writing a segment (default 1 MiB). A
#: larger buffer makes a cold build about a third faster and leaves fewer segments to merge;
#: the memory is held only while a write transaction runs.
_FTS_HASH_BYTES = 32 << 20
#: After a checkpoint the log is truncated to this, so a cold build does not leave it huge.
_WAL_LIMIT_BYTES = 16 << 20
#: Read connections kept at most; more concurrent searches queue for one.
MAX_READERS = 4

_SCHEMA = f"""
CREATE TABLE note(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ino INTEGER NOT NULL,
    type TEXT,
    domain TEXT,
    folder TEXT NOT NULL
);
CREATE TABLE record(id INTEGER PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE tag(tag TEXT NOT NULL, id INTEGER NOT NULL, PRIMARY KEY (tag, id)) WITHOUT ROWID;
CREATE INDEX tag_by_id ON tag(id);
CREATE VIRTUAL TABLE fts USING fts5(title, meta, body, tokenize='unicode61 remove_diacritics 2');
INSERT INTO fts(fts, rank) VALUES ('hashsize', {_FTS_HASH_BYTES});
CREATE VIRTUAL TABLE cjk USING fts5(title, meta, body, tokenize='ascii', content='', contentless_delete=1);
PRAGMA user_version = {_USER_VERSION};
"""
_TABLES = {"note", "record", "tag", "fts", "cjk"}
_T = TypeVar("_T")
_SNIPPET_SQL = (
    f"SELECT title, snippet(fts, -1, '{fts_query.MARK_OPEN}', '{fts_query.MARK_CLOSE}',"
    f" '{fts_query.ELLIPSIS}', {_SNIPPET_TOKENS}) FROM fts WHERE fts MATCH ? AND rowid = ?"
)
_TEXT_SQL = "SELECT title, meta, body FROM fts WHERE rowid = ?"


class OpenOutcome(enum.StrEnum):
    """What ``IndexCache.open`` found."""

    CREATED = "created"  #: no usable file was there (absent or empty): a new, empty cache
    REUSED = "reused"  #: the file matched this schema and passed its check
    REBUILT_VERSION = "rebuilt-version"  #: another schema or record version: deleted, recreated
    REBUILT_CORRUPT = "rebuilt-corrupt"  #: unreadable or corrupt: deleted, recreated


class SearchDoc(msgspec.Struct, kw_only=True):
    """What search needs of a note beyond its record: its text and its filter fields."""

    title: str
    aliases: list[str] = []
    description: str = ""
    body: str = ""
    type: str | None = None
    domain: str | None = None
    folder: str | None = None  #: vault-relative folder; None derives it from the record's path
    tags: list[str] = []  #: tag names as written (``#`` optional); matched lowercased, with parents

    @classmethod
    def from_note(cls, record: NoteRecord, text: str) -> SearchDoc:
        """Build the usual document: frontmatter ``type``/``domain``/``description`` when strings."""
        fm = record.frontmatter or {}

        def scalar(key: str) -> str | None:
            value = fm.get(key)
            return value if isinstance(value, str) else None

        return cls(
            title=record.title,
            aliases=list(record.aliases),
            description=scalar("description") or "",
            body=text[record.body_offset :],
            type=scalar("type"),
            domain=scalar("domain"),
            tags=[t.name for t in record.tags],
        )


class Hit(msgspec.Struct, frozen=True):
    path: str
    score: float  #: ``-bm25``: higher is better; comparable only within one search
    title: str
    snippet: str  #: at most 300 characters, matches in ``**``, cuts as ``…``


class CacheStats(msgspec.Struct, frozen=True):
    rows: int  #: notes stored
    cjk_rows: int  #: notes with CJK text (rows of the bigram table)
    bytes: int  #: size of the database file
    wal_bytes: int  #: size of its write-ahead log


def cache_file_name(vault_path: str) -> str:
    """The cache's file name for a vault: stable per path, new per schema version."""
    digest = hashlib.sha256(os.fsencode(vault_path)).hexdigest()[:16]
    return f"{digest}-v{SCHEMA_VERSION}.sqlite"


def normalize_tag(tag: str) -> str:
    """Tags match case-insensitively, NFC, without ``#`` or surrounding slashes."""
    if not tag.isascii():
        tag = unicodedata.normalize("NFC", fts_query.storable(tag))
    return tag.strip().lstrip("#").strip("/").lower()


def normalize_folder(folder: str) -> str:
    """Folders match NFC, without surrounding slashes, case kept (paths are case-sensitive)."""
    if not folder.isascii():
        folder = unicodedata.normalize("NFC", fts_query.storable(folder))
    return folder.strip("/")


def _tag_keys(tags: Iterable[str]) -> set[str]:
    """The ``tag`` rows of a note: each tag, lowercased, with its parents."""
    keys: set[str] = set()
    for tag in tags:
        keys.update(_one_tag_keys(tag))
    return keys


@functools.lru_cache(maxsize=4096)
def _one_tag_keys(tag: str) -> tuple[str, ...]:
    # Cached: a vault reuses a few hundred tags across thousands of notes.
    parts = [p for p in normalize_tag(tag).split("/") if p]
    return tuple("/".join(parts[: i + 1]) for i in range(len(parts)))


def _signed64(value: int) -> int:
    """Inode numbers are unsigned 64-bit; SQLite integers are signed."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _remove_sidecars(path: Path) -> None:
    for suffix in _SIDECARS:
        Path(str(path) + suffix).unlink(missing_ok=True)


def _connect(path: Path) -> apsw.Connection:
    flags = apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_NOFOLLOW
    con = apsw.Connection(str(path), flags=flags)
    con.set_busy_timeout(_BUSY_TIMEOUT_MS)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA synchronous = NORMAL")
    con.execute(f"PRAGMA journal_size_limit = {_WAL_LIMIT_BYTES}")
    con.execute("PRAGMA cache_size = -16384")  # KiB, allocated only as pages are used
    return con


def _create(con: apsw.Connection) -> None:
    with con:
        con.execute(_SCHEMA)


def _recreate(path: Path) -> apsw.Connection:
    """Delete whatever is at ``path`` and start an empty cache there."""
    path.unlink(missing_ok=True)
    _remove_sidecars(path)
    _prepare_file(path)
    con = _connect(path)
    _create(con)
    return con


def _prepare_file(path: Path) -> bool:
    """Create ``path`` 0600 if absent, without following links; return whether it has content.

    Raises:
        Unavailable: the path or a sidecar is a symlink, or not a regular file we own.
    """
    for suffix in _SIDECARS:
        if Path(str(path) + suffix).is_symlink():
            raise Unavailable(f"index cache {path}{suffix} is a symlink; remove it and retry")
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        raise Unavailable(f"cannot open index cache {path}: {exc.strerror}; remove it and retry") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            raise Unavailable(f"index cache {path} is not a regular file of this user; remove it")
        if st.st_mode & 0o077:
            os.fchmod(fd, 0o600)
        return st.st_size > 0
    finally:
        os.close(fd)


@dataclass
class _Batch:
    """One chunk of upserts made ready for SQLite, one entry per path, ids not yet known."""

    notes: list[tuple[str, int, int, int, str | None, str | None, str]] = field(default_factory=list)
    records: list[bytes | None] = field(default_factory=list)
    texts: list[tuple[str, str, str]] = field(default_factory=list)
    bigrams: list[tuple[str, str, str] | None] = field(default_factory=list)
    tags: list[set[str]] = field(default_factory=list)


def _chunks(items: Iterable[_T]) -> Iterator[list[_T]]:
    it = iter(items)
    while chunk := list(islice(it, _CHUNK)):
        yield chunk


class _Reader:
    """A pooled read connection, the cache generation it belongs to, and its query tokenizer."""

    def __init__(self, con: apsw.Connection, generation: int) -> None:
        self.con = con
        self.generation = generation
        self._tokenizer = con.fts5_tokenizer("unicode61", ["remove_diacritics", "2"])

    def tokenize(self, text: str) -> list[str]:
        """The ``fts`` table's query tokens of ``text``, as FTS5 will see a quoted string."""
        tokens = self._tokenizer(
            text.encode("utf-8"),
            apsw.FTS5_TOKENIZE_QUERY,
            None,
            include_offsets=False,
            include_colocated=False,
        )
        return cast("list[str]", tokens)  # without offsets or colocated forms: plain strings


class IndexCache:
    """One vault's cache file. Build with :meth:`open`; see the module docstring for threads.

    When SQLite reports corruption after open, the cache resets itself (the file is deleted and
    recreated, ``generation`` goes up): ``load_records`` then returns ``{}``, ``search`` and
    ``apply`` raise ``Unavailable``, and the owner re-applies every note.
    """

    def __init__(self, path: Path, writer: apsw.Connection, outcome: OpenOutcome, detail: str | None):
        self.path = path
        self.outcome = outcome
        self.detail = detail  #: why it was rebuilt (the SQLite message), for the log
        self.generation = 0  #: bumped by every reset; a change means the cache is empty again
        self._writer = writer
        self._write_lock = threading.Lock()
        self._idle: queue.SimpleQueue[_Reader] = queue.SimpleQueue()
        self._reader_slots = threading.BoundedSemaphore(MAX_READERS)
        self._closed = False
        self._encoder = msgspec.msgpack.Encoder()
        self._decoder = msgspec.msgpack.Decoder(NoteRecord)

    @property
    def rebuilt(self) -> bool:
        return self.outcome in (OpenOutcome.REBUILT_VERSION, OpenOutcome.REBUILT_CORRUPT)

    # -- opening -------------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path, *, verify: bool = False) -> IndexCache:
        """Open or create the cache at ``path`` (its folder must exist).

        The header, version and tables are always checked. ``verify`` adds ``PRAGMA
        quick_check``, which reads the whole file (about half a second per 10,000 notes); without it,
        damage found later resets the cache (see the class docstring).

        Raises:
            Unavailable: (UNAVAILABLE) the path or a sidecar is a symlink, or is not a regular
                file of this user, or another process holds the database locked.
        """
        path = Path(path)
        had_content = _prepare_file(path)
        if not had_content:
            _remove_sidecars(path)  # a log left beside an empty file must not be replayed into it
        outcome = OpenOutcome.REUSED if had_content else OpenOutcome.CREATED
        detail: str | None = None
        con: apsw.Connection | None = None
        try:
            con = _connect(path)
            version = con.execute("PRAGMA user_version").get
            names = {row[0] for row in con.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
            if version == 0 and not names:
                _create(con)
            elif version != _USER_VERSION:
                outcome, detail = OpenOutcome.REBUILT_VERSION, f"user_version {version}"
            elif not _TABLES <= names:
                outcome, detail = OpenOutcome.REBUILT_CORRUPT, "tables missing"
            elif verify and (check := con.execute("PRAGMA quick_check").get) != "ok":
                outcome, detail = OpenOutcome.REBUILT_CORRUPT, str(check)
        except (apsw.BusyError, apsw.LockedError) as exc:
            if con is not None:
                con.close()
            raise Unavailable(f"index cache {path} is in use by another process; is a second vaultd running?") from exc
        except apsw.Error as exc:
            outcome, detail = OpenOutcome.REBUILT_CORRUPT, f"{type(exc).__name__}: {exc}"
        if con is None or outcome in (OpenOutcome.REBUILT_VERSION, OpenOutcome.REBUILT_CORRUPT):
            if con is not None:
                con.close()
            con = _recreate(path)
        return cls(path, con, outcome, detail)

    def reset(self, reason: str) -> None:
        """Delete and recreate the file now: the cache is empty afterwards.

        Readers in flight finish on the old, unlinked file and are then closed.
        """
        with self._write_lock:
            if self._closed:
                return
            self.generation += 1
            self._drain_idle()
            self._writer.close()
            self._writer = _recreate(self.path)
            self.outcome, self.detail = OpenOutcome.REBUILT_CORRUPT, reason

    # -- connections ---------------------------------------------------------------------------

    @contextmanager
    def _reader(self) -> Iterator[_Reader]:
        if self._closed:
            raise Unavailable(f"index cache {self.path} is closed")
        # At most MAX_READERS connections (each may hold a 16 MiB page cache): a burst of
        # concurrent searches waits for a free one instead of growing memory for good.
        with self._reader_slots:
            try:
                reader = self._idle.get_nowait()
            except queue.Empty:
                con = _connect(self.path)
                con.execute("PRAGMA query_only = 1")
                reader = _Reader(con, self.generation)
            try:
                yield reader
            finally:
                if self._closed or reader.generation != self.generation:
                    reader.con.close()
                else:
                    self._idle.put(reader)

    def _drain_idle(self) -> None:
        while True:
            try:
                self._idle.get_nowait().con.close()
            except queue.Empty:
                return

    @contextmanager
    def _damage_guard(self) -> Iterator[None]:
        """Turn corruption found by SQLite into a reset and an ``Unavailable``."""
        try:
            yield
        except (apsw.CorruptError, apsw.NotADBError) as exc:
            self.reset(f"{type(exc).__name__}: {exc}")
            raise Unavailable(f"the index cache {self.path} was damaged and has been recreated; vaultd rebuilds it") from exc

    def close(self) -> None:
        """Close the writer and idle readers; readers still in flight close when they finish."""
        with self._write_lock:
            if self._closed:
                return
            self._closed = True
            self._drain_idle()
            self._writer.close()  # the last connection out checkpoints the WAL

    # -- records -------------------------------------------------------------------------------

    def load_records(self) -> dict[str, NoteRecord]:
        """Every stored record by path; ``{}`` if the cache had to be reset.

        A record that no longer decodes is left out, so the owner re-parses that note.
        """
        decode = self._decoder.decode
        records: dict[str, NoteRecord] = {}
        # Decoding allocates a few objects per link and heading; with the collector on, its
        # full passes over the growing heap cost ten times the decode itself.
        collecting = gc.isenabled()
        gc.disable()
        try:
            with self._reader() as reader:
                rows = reader.con.execute("SELECT note.path, record.data FROM note JOIN record USING (id)")
                for path, data in rows:
                    try:
                        records[path] = decode(data)
                    except msgspec.DecodeError:
                        continue
        except (apsw.CorruptError, apsw.NotADBError) as exc:
            self.reset(f"{type(exc).__name__}: {exc}")
            return {}
        finally:
            if collecting:
                gc.enable()
        return records

    def apply(self, upserts: Iterable[tuple[NoteRecord, SearchDoc]], deletes: Iterable[str] = ()) -> None:
        """Store and index ``upserts`` and drop ``deletes``, all in one transaction.

        Deletes run first, so a path in both ends up stored. A path upserted twice keeps the
        last. Nothing is visible to readers until the whole call commits. Text SQLite cannot
        hold never fails the call: lone surrogates in text become U+FFFD, a record that cannot be
        encoded is not stored (the note stays searchable and is re-parsed at the next start),
        and a path with undecodable bytes is left out of the cache.

        Raises:
            Unavailable: (UNAVAILABLE) the cache is closed, or was found damaged and reset.
        """
        with self._damage_guard(), self._write_lock:
            if self._closed:
                raise Unavailable(f"index cache {self.path} is closed")
            con = self._writer
            con.execute("BEGIN IMMEDIATE")
            try:
                gone = [p for p in deletes if fts_query.is_storable(p)]
                for start in range(0, len(gone), _CHUNK):
                    self._drop(con, list(self._ids_of(con, gone[start : start + _CHUNK]).values()))
                next_id = (con.execute("SELECT max(id) FROM note").get or 0) + 1
                for chunk in _chunks(upserts):
                    next_id = self._store(con, self._prepare(chunk), next_id)
                con.execute("COMMIT")
            except BaseException:
                if con.in_transaction:
                    con.execute("ROLLBACK")
                raise

    @staticmethod
    def _ids_of(con: apsw.Connection, paths: Iterable[str]) -> dict[str, int]:
        """The stored ids of ``paths`` (those stored), in one statement."""
        sql = "SELECT path, id FROM note WHERE path IN (SELECT value FROM json_each(?))"
        return dict(con.execute(sql, (msgspec.json.encode(list(paths)).decode(),)))

    @staticmethod
    def _drop(con: apsw.Connection, ids: list[int]) -> None:
        if not ids:
            return
        rows = [(i,) for i in ids]
        for table in ("fts", "cjk"):
            con.executemany(f"DELETE FROM {table} WHERE rowid = ?", rows)
        for table in ("tag", "record", "note"):
            con.executemany(f"DELETE FROM {table} WHERE id = ?", rows)

    def _prepare(self, chunk: list[tuple[NoteRecord, SearchDoc]]) -> _Batch:
        """The Python half of storing a chunk (normalization, bigrams, msgpack), apart from the SQL.

        Kept apart so it can run in a helper thread beside SQLite's half; on a busy 2-core machine
        that did not pay (same CPU, more contention), so today both run in the writer's thread.
        """
        encode = self._encoder.encode
        batch = _Batch()
        # A path with undecodable bytes (a lone surrogate) cannot be stored: it stays in memory only.
        latest = {record.path: (record, doc) for record, doc in chunk if fts_query.is_storable(record.path)}
        for path, (record, doc) in latest.items():
            folder = posixpath.dirname(path) if doc.folder is None else doc.folder
            type_ = None if doc.type is None else fts_query.storable(doc.type)
            domain = None if doc.domain is None else fts_query.storable(doc.domain)
            try:
                data: bytes | None = encode(record)
            except UnicodeEncodeError:
                data = None  # a lone surrogate from a YAML escape: searchable, but re-parsed at each start
            meta = "\n".join([*doc.aliases, doc.description]) if doc.aliases else doc.description
            (title, title_cjk), (meta, meta_cjk), (body, body_cjk) = map(fts_query.prepare, (doc.title, meta, doc.body))
            batch.notes.append(
                (
                    path,
                    record.size,
                    record.mtime_ns,
                    _signed64(record.ino),
                    type_,
                    domain,
                    normalize_folder(folder),
                )
            )
            batch.records.append(data)
            batch.texts.append((title, meta, body))
            batch.bigrams.append((title_cjk, meta_cjk, body_cjk) if title_cjk or meta_cjk or body_cjk else None)
            batch.tags.append(_tag_keys(doc.tags))
        return batch

    def _store(self, con: apsw.Connection, batch: _Batch, next_id: int) -> int:
        """Write one prepared chunk, reusing the ids of paths already stored; return the next free id."""
        known = self._ids_of(con, (n[0] for n in batch.notes))
        self._drop(con, list(known.values()))
        ids: list[int] = []
        for note in batch.notes:
            if (i := known.get(note[0])) is None:
                i, next_id = next_id, next_id + 1
            ids.append(i)
        con.executemany("INSERT INTO note VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [(i, *n) for i, n in zip(ids, batch.notes, strict=True)])
        con.executemany(
            "INSERT INTO record VALUES (?, ?)",
            [(i, d) for i, d in zip(ids, batch.records, strict=True) if d is not None],
        )
        con.executemany(
            "INSERT INTO fts(rowid, title, meta, body) VALUES (?, ?, ?, ?)",
            [(i, *t) for i, t in zip(ids, batch.texts, strict=True)],
        )
        con.executemany(
            "INSERT INTO cjk(rowid, title, meta, body) VALUES (?, ?, ?, ?)",
            [(i, *b) for i, b in zip(ids, batch.bigrams, strict=True) if b is not None],
        )
        con.executemany("INSERT INTO tag VALUES (?, ?)", [(t, i) for i, keys in zip(ids, batch.tags, strict=True) for t in keys])
        return next_id

    # -- search --------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        type: str | None = None,
        domain: str | None = None,
        tag: str | None = None,
        folder: str | None = None,
        limit: int = 20,
    ) -> list[Hit]:
        """Notes containing every term of ``query``, best first; [] when nothing is searchable.

        ``type`` and ``domain`` match exactly; ``tag`` matches the tag or any tag nested under
        it, case-insensitively; ``folder`` matches the folder and everything below it. Filters
        run in SQL before the limit, so ``limit`` hits come back whenever that many match.

        Raises:
            Unavailable: (UNAVAILABLE) the cache is closed, or was found damaged and reset.
        """
        limit = min(limit, _MAX_LIMIT)
        if limit <= 0:
            return []
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
                return []
            where.append("note.id IN (SELECT id FROM tag WHERE tag = ?)")
            params.append(t)
        with self._damage_guard(), self._reader() as reader:
            compiled = fts_query.compile_query(query, reader.tokenize)
            if compiled.empty:
                return []
            with reader.con:  # one read transaction: the snippets come from the ranked snapshot
                hits = self._search(reader.con, compiled, where, params, limit)
        return hits

    @staticmethod
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
                snippet = fts_query.shape_snippet(raw, q.cjk_terms)
            else:
                title, meta, body = con.execute(_TEXT_SQL, (rowid,)).fetchone() or ("", "", "")
                windows = (fts_query.cjk_window(text, q.cjk_terms) for text in (body, meta, title))
                snippet = next((w for w in windows if w), "")
            hits.append(Hit(path=path, score=-rank, title=title.replace(fts_query.ZWSP, ""), snippet=snippet))
        return hits

    # -- housekeeping --------------------------------------------------------------------------

    def stats(self) -> CacheStats:
        with self._damage_guard(), self._reader() as reader:
            rows = reader.con.execute("SELECT count(*) FROM note").get
            cjk_rows = reader.con.execute("SELECT count(*) FROM cjk").get
        wal = Path(str(self.path) + "-wal")
        return CacheStats(
            rows=rows,
            cjk_rows=cjk_rows,
            bytes=self.path.stat().st_size,
            wal_bytes=wal.stat().st_size if wal.exists() else 0,
        )
