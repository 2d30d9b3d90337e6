"""The per-vault derived SQLite cache: parsed records for a fast restart, and full-text search.

The in-memory index owns the truth; this file only saves work. Deleting it costs a rebuild, and
any file we cannot trust is deleted and recreated on open, never fatal. The file and its schema
are :mod:`~vaultd.vault.cache.sqlite_file`; the writer, the reader pool, reset and close are
:mod:`~vaultd.vault.cache.connections`; the rows are :mod:`~vaultd.vault.cache.records`; the
queries are :mod:`~vaultd.vault.cache.search`.
"""

from __future__ import annotations

import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

import apsw
import msgspec

from vaultd.errors import Unavailable
from vaultd.vault.cache import query_plan, records, spelling
from vaultd.vault.cache import search as fts_search
from vaultd.vault.cache.connections import CacheConnections
from vaultd.vault.cache.query_plan import Mode, QueryPlan
from vaultd.vault.cache.search import MAX_LIMIT, Hit
from vaultd.vault.cache.sqlite_file import CACHE_KIB, OpenOutcome, open_checked

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

    from vaultd.vault.model import NoteRecord
    from vaultd.vault.note_table import NoteTable
    from vaultd.vault.search_doc import SearchDoc


LOAD_CACHE_KIB = 256  #: the page cache a warm start reads the records through


class CacheStats(msgspec.Struct, frozen=True):
    rows: int  #: notes stored
    cjk_rows: int  #: notes with CJK text (rows of the bigram table)
    bytes: int  #: size of the database file
    wal_bytes: int  #: size of its write-ahead log


class IndexCache(CacheConnections):
    """One vault's cache file. Build with :meth:`open`; see :mod:`~vaultd.vault.cache.connections`
    for threads.

    When SQLite reports corruption after open, the cache resets itself (the file is deleted and
    recreated, ``generation`` goes up): ``load_encoded`` then returns ``{}``, ``search`` and
    ``apply`` raise ``Unavailable``, and the owner re-applies every note.
    """

    def __init__(self, path: Path, writer: apsw.Connection, outcome: OpenOutcome, detail: str | None) -> None:
        super().__init__(path, writer, outcome, detail)
        #: held by every change to a note table reading this file, and by a write from the moment
        #: it hands the rows it replaces to those tables until it commits
        self.views_lock = threading.RLock()
        #: the tables reading this file, by id (a table is a Mapping: equal tables, no hash)
        self._views: weakref.WeakValueDictionary[int, NoteTable] = weakref.WeakValueDictionary()

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
        con, outcome, detail = open_checked(path, verify=verify)
        return cls(path, con, outcome, detail)

    # -- records -------------------------------------------------------------------------------

    def load_encoded(self) -> dict[str, bytes]:
        """Every stored record by path, as stored (msgpack): the index keeps records encoded, so
        a restart need not decode one it does not read. ``{}`` if the cache had to be reset; a
        record that does not decode is the reader's to find.

        Read through a page cache of 256 KiB instead of the usual 16 MiB: the records kept and
        the pages read are allocated in turn, and a full page cache freed afterwards leaves holes
        between the records that the heap cannot hand back (10 MB of the resident size at
        10,000 notes).
        """
        try:
            with self._reader() as reader:
                reader.con.execute(f"PRAGMA cache_size = -{LOAD_CACHE_KIB}")
                try:
                    return records.load_encoded(reader.con)
                finally:
                    reader.con.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        except (apsw.CorruptError, apsw.NotADBError) as exc:
            self.reset(f"{type(exc).__name__}: {exc}")
            return {}

    def each_record(self) -> Iterator[tuple[str, bytes]]:
        """Every stored record with its path, one row at a time, through the small page cache of
        :meth:`load_encoded` (a warm start keeps none of the bytes). Ends early, having reset
        the cache, when SQLite finds it damaged: the rows not read are the reader's to parse."""
        try:
            with self._reader() as reader:
                reader.con.execute(f"PRAGMA cache_size = -{LOAD_CACHE_KIB}")
                try:
                    yield from records.each_record(reader.con)
                finally:
                    reader.con.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        except (apsw.CorruptError, apsw.NotADBError) as exc:
            self.reset(f"{type(exc).__name__}: {exc}")

    def records_of(self, paths: list[str]) -> dict[str, bytes]:
        """The stored records of those of ``paths`` stored, by path (a note table's read).

        Raises:
            Unavailable: (UNAVAILABLE) the cache is closed, or was found damaged and reset.
        """
        with self._damage_guard(), self._reader() as reader:
            return records.records_of(reader.con, paths)

    def follow(self, table: NoteTable) -> None:
        """Hand ``table`` the old bytes of each row it reads before a write replaces them, as
        long as it lives (see :mod:`~vaultd.vault.note_table`)."""
        with self.views_lock:
            self._views[id(table)] = table

    def _commit_handing_over(self, touched: list[str], owner: NoteTable | None) -> None:
        """Commit the writer's transaction, first handing the rows it replaces or drops to every
        table (but the one writing) that still reads them from the file. A pooled reader reads
        them: it sees the last committed state, the rows as they were.

        The commit itself runs outside ``views_lock`` (a build's next chunk goes into its table
        meanwhile): a table copied between the hand-over and the commit is copied from the
        writing table, which holds its touched records in memory (the records it writes, and
        none it drops), or from one that was handed them.
        """
        with self.views_lock:
            views = [v for v in self._views.values() if v is not owner]
            wanted = [p for p in touched if any(v.reads_from_file(p) for v in views)]
            if wanted:
                with self._reader() as reader:
                    old = records.records_of(reader.con, wanted)
                for view in views:
                    view.hand_over(old)
        self._writer.execute("COMMIT")

    def apply(
        self,
        upserts: Iterable[tuple[NoteRecord, SearchDoc]],
        deletes: Iterable[str] = (),
        encoded: Mapping[str, bytes | None] | None = None,
        owner: NoteTable | None = None,
    ) -> None:
        """Store and index ``upserts`` and drop ``deletes``, all in one transaction.

        Deletes run first, so a path in both ends up stored. A path upserted twice keeps the
        last. Nothing is visible to readers until the whole call commits. Text SQLite cannot
        hold never fails the call: lone surrogates in text become U+FFFD, a record that cannot be
        encoded (:func:`~vaultd.vault.note_table.encode_record`: a lone surrogate, an integer
        past 64 bits) is not stored (the note stays searchable and is re-parsed at the next
        start), and a path with undecodable bytes is left out of the cache. ``encoded`` holds
        records' encodings already made, by path (the index's own bytes; None where it has
        none); a record not in it is encoded here. ``owner`` is the note table whose records
        these are: every table reading the file (see :mod:`~vaultd.vault.note_table`) keeps the
        rows replaced as they were, and reads each record stored from the file once it commits.

        Raises:
            Unavailable: (UNAVAILABLE) the cache is closed, or was found damaged and reset.
        """
        with self._damage_guard(), self._write_lock:
            if self._closed:
                raise Unavailable(f"index cache {self.path} is closed")
            written = records.store(
                self._writer, upserts, deletes, encoded or {}, lambda touched: self._commit_handing_over(touched, owner)
            )
        if written:
            with self.views_lock:
                for view in list(self._views.values()):
                    view.written(written)

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
        """The notes ``query`` finds (:mod:`~vaultd.vault.search_syntax`), best first; [] when
        it holds nothing searchable and no filter is given.

        ``type`` and ``domain`` match exactly; ``tag`` matches the tag or any tag nested under
        it, case-insensitively; ``folder`` matches the folder and everything below it. Filters
        run in SQL before the limit, so ``limit`` hits come back whenever that many match. With
        filters and no searchable words, every note the filters keep is a hit, by path.

        Raises:
            Unavailable: (UNAVAILABLE) the cache is closed, or was found damaged and reset.
        """
        limit = min(limit, MAX_LIMIT)
        if limit <= 0:
            return []
        conditions = fts_search.filters(type=type, domain=domain, tag=tag, folder=folder)
        if conditions is None:
            return []
        with self._damage_guard(), self._reader() as reader:
            planned = query_plan.plan(query, reader.tokenize)
            if planned.mode is Mode.EMPTY and conditions[0]:
                planned = QueryPlan(Mode.GENERAL)
            return fts_search.search(reader, planned, *conditions, limit)

    def suggest(self, query: str) -> str | None:
        """``query`` with its unknown words and tags replaced by the nearest the vault has, or
        None (see :mod:`~vaultd.vault.cache.spelling`); whether it finds anything is the caller's
        to check."""
        with self._damage_guard(), self._reader() as reader:
            return spelling.suggest(reader, query)

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
