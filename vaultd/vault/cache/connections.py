"""The cache's connections: one writer, a bounded pool of readers, reset and close.

Threads: one writer at a time (writes take ``write_lock`` and own the writer connection); every
read borrows a connection from a pool, one thread per connection at a time, so reads run beside
a write and see the last committed state (WAL). When SQLite reports corruption, the file is
deleted and recreated and ``generation`` goes up; readers of the old file close as they finish.
"""

from __future__ import annotations

import queue
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, cast

import apsw

from vaultd.errors import Unavailable
from vaultd.vault.cache.sqlite_file import OpenOutcome, connect, recreate

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

#: Read connections kept at most; more concurrent searches queue for one.
MAX_READERS = 4


class Reader:
    """A pooled read connection, the cache generation it belongs to, and its query tokenizer."""

    def __init__(self, con: apsw.Connection, generation: int) -> None:
        self.con = con
        self.generation = generation
        self._tokenizer = con.fts5_tokenizer("unicode61", ["remove_diacritics", "2"])
        self._vocab = False

    def vocab(self) -> str:
        """The name of a view of the word table's terms (``term``, ``doc``: notes holding it),
        made on first use. It is a TEMP table of this connection: the cache file never changes
        for it, so the read-only guard is lifted only while it is made."""
        if not self._vocab:
            self.con.execute("PRAGMA query_only = 0")
            try:
                self.con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, fts, row)")
            finally:
                self.con.execute("PRAGMA query_only = 1")
            self._vocab = True
        return "temp.vocab"

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


class CacheConnections:
    """The writer, the reader pool and the file's life: what every use of the cache goes through."""

    def __init__(self, path: Path, writer: apsw.Connection, outcome: OpenOutcome, detail: str | None):
        self.path = path
        self.outcome = outcome
        self.detail = detail  #: why it was rebuilt (the SQLite message), for the log
        self.generation = 0  #: bumped by every reset; a change means the cache is empty again
        self._writer = writer
        self._write_lock = threading.Lock()
        self._idle: queue.SimpleQueue[Reader] = queue.SimpleQueue()
        self._reader_slots = threading.BoundedSemaphore(MAX_READERS)
        self._closed = False

    @property
    def rebuilt(self) -> bool:
        return self.outcome in (OpenOutcome.REBUILT_VERSION, OpenOutcome.REBUILT_CORRUPT)

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
            self._writer = recreate(self.path)
            self.outcome, self.detail = OpenOutcome.REBUILT_CORRUPT, reason

    @contextmanager
    def _reader(self) -> Iterator[Reader]:
        """A read connection of the index cache, never one of a closed cache.

        Raises:
            Unavailable: UNAVAILABLE, the cache is closed.
        """
        if self._closed:
            raise Unavailable(f"index cache {self.path} is closed")
        # At most MAX_READERS connections (each may hold a 16 MiB page cache): a burst of
        # concurrent searches waits for a free one instead of growing memory for good.
        with self._reader_slots:
            try:
                reader = self._idle.get_nowait()
            except queue.Empty:
                con = connect(self.path)
                con.execute("PRAGMA query_only = 1")
                reader = Reader(con, self.generation)
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

    def release_memory(self) -> None:
        """Hand back the page caches of the writer and the idle readers (SQLite's
        ``shrink_memory``): a build leaves them full (up to 16 MiB each) of pages the next reads
        seldom want, and a search fills them again as far as it needs."""
        with self._write_lock:
            if self._closed:
                return
            self._writer.execute("PRAGMA shrink_memory")
            idle: list[Reader] = []
            while True:
                try:
                    idle.append(self._idle.get_nowait())
                except queue.Empty:
                    break
            for reader in idle:
                reader.con.execute("PRAGMA shrink_memory")
                self._idle.put(reader)

    @contextmanager
    def _damage_guard(self) -> Iterator[None]:
        """Turn corruption found by SQLite into a reset and an ``Unavailable``.

        Raises:
            Unavailable: UNAVAILABLE, SQLite found the cache damaged; it has been reset and is
                rebuilt.
        """
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
