"""Passage vectors: a derived cache beside the chunk index, one file per vault and model.

``<digest>-vectors-<model key>-v1.sqlite`` in the daemon's cache folder (never in a vault), mode
0600, holds one row per distinct passage key (:func:`vaultd.retrieve.chunks.passage_key`)::

    vec(key BLOB PRIMARY KEY, scale REAL, data BLOB)   int8 components; a component is data * scale

Keyed by what was embedded, not by note or line: a note that did not change keeps its vectors
across restarts, moves and rebuilds of the chunk index, and identical passages (a template
pasted into 10,000 notes) share one vector. Keys no passage carries any more are dropped when
the filler reconciles. In memory the vectors sit in one int8 matrix (384 bytes a passage for the
shipped model), grown in place as vectors arrive (a batch of eight never copies the whole matrix),
and scored against a question a cache-sized block at a time through one float buffer, so a
query never holds a float copy of it nor allocates one per block.

The daemon's BLAS runs one thread: the scan is a matrix-vector product of a few milliseconds,
and on a busy machine OpenBLAS's pool of threads waiting on one another at every call made it
slower by a hundred times (measured in docs/performance.md, "Meaning at scale"). The setting
is made here, before numpy is first imported in the daemon; an explicit one is kept.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

import apsw

from vaultd import memory
from vaultd.vault.cache.sqlite_file import open_versioned, recreate

# numpy comes with the meaning extra: it is imported where it is used, so a daemon without it starts.
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path

    import numpy as np

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

VERSION = 1
_SCHEMA = f"""
CREATE TABLE vec(key BLOB PRIMARY KEY, scale REAL NOT NULL, data BLOB NOT NULL) WITHOUT ROWID;
PRAGMA user_version = {VERSION};
"""
_WHAT = "vector cache"
BLOCK = 1024  #: rows scored at a time through one float32 buffer (1.5 MB at 384 dimensions: it stays in cache)
GROWTH = 8  #: the matrix grows by an eighth of its rows (at least MIN_GROWTH) when it is full
MIN_GROWTH = 1024
#: The vector file's page cache: it is read whole once, at start, then written a batch at a time.
CACHE_KIB = 1024


def file_name(chunk_name: str, model_key: str) -> str:
    """The vector file's name beside the chunk index named ``chunk_name``."""
    return chunk_name.rsplit("-chunks-v", 1)[0] + f"-vectors-{model_key}-v{VERSION}.sqlite"


def quantized(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit float rows as int8 rows and each row's scale."""
    import numpy as np

    peak = np.abs(vectors).max(axis=1)
    scale = np.where(peak == 0, 1.0, peak / 127.0).astype(np.float32)
    return np.clip(np.rint(vectors / scale[:, None]), -127, 127).astype(np.int8), scale


class VectorStore:
    """One vault's vectors for one model: the file, and its rows in memory.

    The first ``len(self)`` rows of ``_data`` and ``_scale`` hold the vectors; the rows past them
    are room to grow. An add writes only past them and then raises the count, so a question
    scoring its snapshot (the arrays and the count, taken under the lock) never sees a row
    change; a drop or a growth makes new arrays and leaves the old ones to the questions
    holding them.
    """

    def __init__(self, path: Path) -> None:
        import numpy as np

        self.path = path
        self._lock = threading.Lock()
        self._con = open_versioned(path, _SCHEMA, VERSION, _WHAT)
        self._row: dict[bytes, int] = {}
        self._keys: list[bytes] = []
        self._data = np.zeros((0, 0), dtype=np.int8)
        self._scale = np.zeros(0, dtype=np.float32)
        self._load()

    def _load(self) -> None:
        """Read every stored vector straight into the matrix, one row at a time: no list of rows
        and no joined copy of them (at 40,000 vectors those made a peak of 56 MB for 15 MB kept),
        through a page cache of :data:`CACHE_KIB` (the file is read once, written a batch at a
        time); the heap's freed pages are handed back after."""
        import numpy as np

        self._con.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        try:
            count = self._con.execute("SELECT count(*) FROM vec").get or 0
            keys: list[bytes] = []
            data = np.zeros((0, 0), dtype=np.int8)
            scale = np.zeros(count, dtype=np.float32)
            mixed = False
            for key, factor, row in self._con.execute("SELECT key, scale, data FROM vec"):
                at = len(keys)
                if at == 0:
                    data = np.zeros((count, len(row)), dtype=np.int8)
                if at >= count or len(row) != data.shape[1]:  # never two shapes in one file
                    mixed = True
                    break
                data[at] = np.frombuffer(row, dtype=np.int8)
                scale[at] = factor
                keys.append(key)
        except (apsw.CorruptError, apsw.NotADBError):
            self._con.close()
            self._con = recreate(self.path, _SCHEMA, _WHAT)
            self._con.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
            return
        if mixed:  # start it again
            with self._con:
                self._con.execute("DELETE FROM vec")
            return
        if keys:
            self._keys = keys
            self._row = {k: i for i, k in enumerate(keys)}
            self._data, self._scale = data[: len(keys)], scale[: len(keys)]
        memory.give_back()

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._row

    def add(self, keys: Sequence[bytes], vectors: np.ndarray) -> int:
        """Store unit vectors for ``keys`` (rows aligned), durably, then in memory; how many
        were new (a key already held keeps its vector)."""
        import numpy as np

        if not keys:
            return 0
        data, scale = quantized(vectors)
        with self._lock:
            fresh = [(i, k) for i, k in enumerate(keys) if k not in self._row]
            if not fresh:
                return 0
            count = len(self._keys)
            if count and self._data.shape[1] != data.shape[1]:
                raise ValueError(f"the model answered {data.shape[1]} dimensions; this cache holds {self._data.shape[1]}")
            with self._con:
                self._con.executemany(
                    "INSERT OR REPLACE INTO vec VALUES (?, ?, ?)", [(k, float(scale[i]), data[i].tobytes()) for i, k in fresh]
                )
            rows = [i for i, _ in fresh]
            end = count + len(rows)
            if not count or end > len(self._data):
                room = end + max(end // GROWTH, MIN_GROWTH)
                grown = np.zeros((room, data.shape[1]), dtype=np.int8)
                scales = np.zeros(room, dtype=np.float32)
                if count:
                    grown[:count] = self._data[:count]
                    scales[:count] = self._scale[:count]
                self._data, self._scale = grown, scales
            self._data[count:end] = data[rows]
            self._scale[count:end] = scale[rows]
            for offset, (_, k) in enumerate(fresh):
                self._row[k] = count + offset
                self._keys.append(k)
            return len(fresh)

    def keep_only(self, wanted: Iterable[bytes]) -> int:
        """Drop every vector whose key no passage carries any more; how many were dropped."""
        keep = wanted if isinstance(wanted, (set, frozenset)) else set(wanted)
        with self._lock:
            return self._drop_locked([k for k in self._keys if k not in keep])

    def drop(self, keys: Iterable[bytes]) -> int:
        """Drop the vectors of ``keys`` (those no passage carries any more); how many were held."""
        with self._lock:
            return self._drop_locked([k for k in dict.fromkeys(keys) if k in self._row])

    def _drop_locked(self, gone: list[bytes]) -> int:
        if not gone:
            return 0
        with self._con:
            self._con.executemany("DELETE FROM vec WHERE key = ?", [(k,) for k in gone])
        out = set(gone)
        rows = [self._row[k] for k in self._keys if k not in out]
        self._keys = [self._keys[i] for i in rows]
        self._data = self._data[rows]
        self._scale = self._scale[rows]
        self._row = {k: i for i, k in enumerate(self._keys)}
        return len(gone)

    def nearest(self, query: np.ndarray, limit: int) -> tuple[list[bytes], list[float]]:
        """The ``limit`` keys closest to the unit vector ``query`` (cosine), best first.

        Each block of int8 rows is widened into one reused float32 buffer (exactly: int8 fits
        float32) and multiplied by the question there, then scaled: the scores, and so the
        order, are those of widening the whole matrix at once, without its copy.
        """
        import numpy as np

        with self._lock:
            data, scale, keys = self._data, self._scale, self._keys
            count = len(keys)
        if not count or limit <= 0:
            return [], []
        q = np.ascontiguousarray(query, dtype=np.float32)
        scores = np.empty(count, dtype=np.float32)
        buffer = np.empty((min(BLOCK, count), data.shape[1]), dtype=np.float32)
        for start in range(0, count, BLOCK):
            end = min(start + BLOCK, count)
            part = buffer[: end - start]
            np.copyto(part, data[start:end], casting="unsafe")
            np.matmul(part, q, out=scores[start:end])
        scores *= scale[:count]
        take = min(limit, count)
        best = np.argpartition(-scores, take - 1)[:take]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [keys[i] for i in best], [float(scores[i]) for i in best]

    def close(self) -> None:
        with self._lock:
            self._con.close()
