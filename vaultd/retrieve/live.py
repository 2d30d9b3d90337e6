"""Keeping a vault's chunk index fresh: opened on the first retrieval, then told of every change.

The first ``note.retrieve`` of a vault opens its chunk index (or builds it), compares it with the
in-memory index by stat and re-chunks only what differs, with the index held still; from then
on it follows the live index, which hands it every batch of changes the watcher and the writer
apply. A vault nobody retrieves from pays nothing.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import anyio
import structlog

from protocol.methods.indexing import MeaningCoverage
from vaultd.retrieve import meaning
from vaultd.retrieve.chunks import Chunk, chunk_note
from vaultd.retrieve.meaning import Meaning, meaning_for
from vaultd.retrieve.store import ChunkStore, DocStat, file_name
from vaultd.vault.note_table import StatOf
from vaultd.vault.reading import Updates, read_note
from vaultd.vault.walk import FileStat

if TYPE_CHECKING:
    from pathlib import Path

    from vaultd.vault.cache import SearchDoc
    from vaultd.vault.model import NoteRecord
    from vaultd.vault.watcher import LiveIndex

log = structlog.get_logger("vaultd.retrieve")

BUILD_CHUNK = 256  #: notes chunked per transaction while building


def _entry(record: NoteRecord, doc: SearchDoc) -> tuple[str, DocStat, str, list[Chunk]]:
    chunks = chunk_note(doc.body, doc.body_line, record.headings)
    return record.path, DocStat(record.size, record.mtime_ns, record.ino), record.title, chunks


class Passages:
    """One vault's chunk index, bound to the live index it follows."""

    def __init__(self, path: Path) -> None:
        self.store = ChunkStore(path)
        self.live: LiveIndex | None = None
        self.meaning: Meaning | None = None

    def follow(self, updates: Updates) -> None:
        """Apply one batch of the live index's changes (worker thread)."""
        upserts = [_entry(record, doc) for record, doc in updates.notes]
        gone = [*updates.gone, *(s.path for s in updates.skipped), *(a.path for a in updates.attachments)]
        if upserts or gone:
            self.store.apply(upserts, gone)
            if self.meaning is not None:
                self.meaning.changed([path for path, *_ in upserts])

    def reconcile(self, live: LiveIndex) -> int:
        """Bring the chunk index to the live index's notes by stat (worker thread, index held still)."""
        stored = self.store.stats()
        notes = live.index.notes
        gone = [p for p in stored if p not in notes]
        stale = [notes[p] for p, r in notes.fields(StatOf) if stored.get(p) != DocStat(r.size, r.mtime_ns, r.ino)]
        if gone:
            self.store.apply([], gone)
        for start in range(0, len(stale), BUILD_CHUNK):
            batch = []
            for record in stale[start : start + BUILD_CHUNK]:
                parsed = read_note(live.root, FileStat(record.path, record.size, record.mtime_ns, record.ino, True))
                if isinstance(parsed, tuple):
                    batch.append(_entry(*parsed))
            self.store.apply(batch)
        return len(stale)


_open: dict[Path, Passages] = {}
_lock = threading.Lock()


async def passages_for(live: LiveIndex) -> Passages:
    """The chunk index following ``live``, opened and reconciled on first use."""
    path = live.cache_path.with_name(file_name(live.cache_path.name))
    with _lock:
        found = _open.get(path)
        if found is None:
            found = _open[path] = Passages(path)
    if found.live is live and found.follow in live.followers:
        return found
    async with live.held_still():
        if found.live is not live or found.follow not in live.followers:
            if found.live is not None and found.follow in found.live.followers:
                found.live.followers.remove(found.follow)
            started = anyio.current_time()
            changed = await anyio.to_thread.run_sync(found.reconcile, live)
            live.followers.append(found.follow)
            found.live = live
            # Off the event loop: loading 40,000 vectors takes a tenth of a second or more.
            found.meaning = await anyio.to_thread.run_sync(meaning_for, found.store)
            log.info("chunk index ready", vault=str(live.root), rechunked=changed, seconds=round(anyio.current_time() - started, 3))
    return found


def coverage(live: LiveIndex) -> MeaningCoverage | None:
    """How much of ``live``'s vault the meaning model covers, once its filler runs."""
    path = live.cache_path.with_name(file_name(live.cache_path.name))
    with _lock:
        found = _open.get(path)
    if found is None or found.meaning is None:
        return None
    now = found.meaning.coverage()
    left = now.total - now.covered
    eta = round(left / now.per_second, 1) if now.per_second and left > 0 else None
    return MeaningCoverage(
        model=now.model,
        covered=now.covered,
        total=now.total,
        embedded=now.embedded,
        per_second=round(now.per_second, 2) if now.per_second else None,
        eta_s=eta,
        note=now.note,
    )


def stop_meaning(live: LiveIndex) -> None:
    """Stop the meaning filler of ``live``'s vault (its worker process with it): the vault is
    no longer served. Its vectors stay on disk for the next time."""
    path = live.cache_path.with_name(file_name(live.cache_path.name))
    with _lock:
        found = _open.get(path)
    if found is not None and found.meaning is not None:
        stopping = found.meaning
        found.meaning = None
        meaning.forget(stopping)


def close_all() -> None:
    meaning.close_all()
    with _lock:
        for passages in _open.values():
            passages.store.close()
        _open.clear()
