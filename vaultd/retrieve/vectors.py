"""Passage vectors: a derived cache beside the chunk index, one file per vault and model.

``<digest>-vectors-<model key>-v1.sqlite`` in the daemon's cache folder (never in a vault), mode
0600, holds one row per distinct passage key (:func:`vaultd.retrieve.chunks.passage_key`)::

    vec(key BLOB PRIMARY KEY, scale REAL, data BLOB)   int8 components; a component is data * scale

Keyed by what was embedded, not by note or line: a note that did not change keeps its vectors
across restarts, moves and rebuilds of the chunk index, and identical passages (a template
pasted into 10,000 notes) share one vector. Keys no passage carries any more are dropped when
the filler reconciles. In memory the vectors sit in one int8 matrix (384 bytes a passage for the
shipped model), scored against a question in blocks so a query never holds a float copy of it.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import apsw

from vaultd.vault.cache.sqlite_file import open_versioned, recreate

# numpy comes with the meaning extra: it is imported where it is used, so a daemon without it starts.
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path

    import numpy as np

VERSION = 1
_SCHEMA = f"""
CREATE TABLE vec(key BLOB PRIMARY KEY, scale REAL NOT NULL, data BLOB NOT NULL) WITHOUT ROWID;
PRAGMA user_version = {VERSION};
"""
_WHAT = "vector cache"
BLOCK = 8192  #: rows scored at a time (a float32 copy of one block: 12 MB at 384 dimensions)


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
    """One vault's vectors for one model: the file, and its rows in memory."""

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
        import numpy as np

        try:
            rows = list(self._con.execute("SELECT key, scale, data FROM vec"))
        except (apsw.CorruptError, apsw.NotADBError):
            self._con.close()
            self._con = recreate(self.path, _SCHEMA, _WHAT)
            rows = []
        dims = {len(d) for _, _, d in rows}
        if len(dims) > 1:  # never two shapes in one file: start it again
            with self._con:
                self._con.execute("DELETE FROM vec")
            rows = []
        if not rows:
            return
        self._keys = [k for k, _, _ in rows]
        self._row = {k: i for i, k in enumerate(self._keys)}
        self._data = np.frombuffer(b"".join(d for _, _, d in rows), dtype=np.int8).reshape(len(rows), -1).copy()
        self._scale = np.array([s for _, s, _ in rows], dtype=np.float32)

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._row

    def add(self, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        """Store unit vectors for ``keys`` (rows aligned), durably, then in memory."""
        import numpy as np

        if not keys:
            return
        data, scale = quantized(vectors)
        with self._lock:
            fresh = [(i, k) for i, k in enumerate(keys) if k not in self._row]
            if not fresh:
                return
            if len(self._keys) and self._data.shape[1] != data.shape[1]:
                raise ValueError(f"the model answered {data.shape[1]} dimensions; this cache holds {self._data.shape[1]}")
            with self._con:
                self._con.executemany(
                    "INSERT OR REPLACE INTO vec VALUES (?, ?, ?)", [(k, float(scale[i]), data[i].tobytes()) for i, k in fresh]
                )
            rows = [i for i, _ in fresh]
            start = len(self._keys)
            self._data = np.concatenate([self._data, data[rows]]) if start else data[rows].copy()
            self._scale = np.concatenate([self._scale, scale[rows]])
            for offset, (_, k) in enumerate(fresh):
                self._row[k] = start + offset
                self._keys.append(k)

    def keep_only(self, wanted: Iterable[bytes]) -> int:
        """Drop every vector whose key no passage carries any more; how many were dropped."""
        keep = set(wanted)
        with self._lock:
            gone = [k for k in self._keys if k not in keep]
            if not gone:
                return 0
            with self._con:
                self._con.executemany("DELETE FROM vec WHERE key = ?", [(k,) for k in gone])
            rows = [self._row[k] for k in self._keys if k in keep]
            self._keys = [self._keys[i] for i in rows]
            self._data = self._data[rows]
            self._scale = self._scale[rows]
            self._row = {k: i for i, k in enumerate(self._keys)}
            return len(gone)

    def nearest(self, query: np.ndarray, limit: int) -> tuple[list[bytes], list[float]]:
        """The ``limit`` keys closest to the unit vector ``query`` (cosine), best first."""
        import numpy as np

        with self._lock:
            data, scale, keys = self._data, self._scale, self._keys
        if not keys or limit <= 0:
            return [], []
        q = np.asarray(query, dtype=np.float32)
        scores = np.empty(len(keys), dtype=np.float32)
        for start in range(0, len(keys), BLOCK):
            block = data[start : start + BLOCK]
            scores[start : start + len(block)] = (block.astype(np.float32) @ q) * scale[start : start + len(block)]
        take = min(limit, len(keys))
        best = np.argpartition(-scores, take - 1)[:take]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [keys[i] for i in best], [float(scores[i]) for i in best]

    def close(self) -> None:
        with self._lock:
            self._con.close()
