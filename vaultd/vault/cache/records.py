"""The record store: each note's stat row, its parsed record, its tags and its text, in and out.

A chunk of upserts is made ready in Python (normalization, bigrams, msgpack), then written with
one statement per table; ids of paths already stored are reused.
"""

from __future__ import annotations

import functools
import posixpath
import unicodedata
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, TypeVar

import msgspec

from vaultd.vault import fts_query
from vaultd.vault.cache.sqlite_file import signed64
from vaultd.vault.note_table import encode_record

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

    import apsw

    from vaultd.vault.model import NoteRecord
    from vaultd.vault.search_doc import SearchDoc

_CHUNK = 256  #: upserts made ready at a time: a cold build's chunk, so its writer holds one parsed chunk, not two
_T = TypeVar("_T")


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


_ALL_RECORDS = "SELECT note.path, record.data FROM note JOIN record USING (id)"


def load_encoded(con: apsw.Connection) -> dict[str, bytes]:
    """Every stored record by path, undecoded."""
    return dict(con.execute(_ALL_RECORDS))


def each_record(con: apsw.Connection) -> Iterator[tuple[str, bytes]]:
    """Every stored record with its path, one row at a time."""
    yield from con.execute(_ALL_RECORDS)


def records_of(con: apsw.Connection, paths: Iterable[str]) -> dict[str, bytes]:
    """The stored records of those of ``paths`` stored, by path, in one statement."""
    # CAST: a row garbled into text is bytes that fail their checksum, not a failed read of all
    sql = "SELECT note.path, CAST(record.data AS BLOB) FROM note JOIN record USING (id) WHERE note.path IN (SELECT value FROM json_each(?))"
    return dict(con.execute(sql, (msgspec.json.encode([p for p in paths if fts_query.is_storable(p)]).decode(),)))


def store(
    con: apsw.Connection,
    upserts: Iterable[tuple[NoteRecord, SearchDoc]],
    deletes: Iterable[str],
    encoded: Mapping[str, bytes | None],
    commit: Callable[[list[str]], None] | None = None,
) -> dict[str, bytes]:
    """Drop ``deletes``, then store ``upserts``, in one transaction (see ``IndexCache.apply``);
    answer the records stored, by path. ``commit``, given every path the transaction drops or
    stores, commits it (the cache hands the rows' old bytes to the tables still reading them
    first); without it the transaction commits here."""
    con.execute("BEGIN IMMEDIATE")
    try:
        gone = [p for p in deletes if fts_query.is_storable(p)]
        for start in range(0, len(gone), _CHUNK):
            _drop(con, list(_ids_of(con, gone[start : start + _CHUNK]).values()))
        next_id = (con.execute("SELECT max(id) FROM note").get or 0) + 1
        written: dict[str, bytes] = {}
        touched = dict.fromkeys(gone)
        for chunk in _chunks(upserts):
            batch = _prepare(chunk, encoded)
            next_id = _store(con, batch, next_id)
            touched.update(dict.fromkeys(n[0] for n in batch.notes))
            written.update((n[0], data) for n, data in zip(batch.notes, batch.records, strict=True) if data is not None)
        if commit is None:
            con.execute("COMMIT")
        else:
            commit(list(touched))
        return written
    except BaseException:
        if con.in_transaction:
            con.execute("ROLLBACK")
        raise


def _ids_of(con: apsw.Connection, paths: Iterable[str]) -> dict[str, int]:
    """The stored ids of ``paths`` (those stored), in one statement."""
    sql = "SELECT path, id FROM note WHERE path IN (SELECT value FROM json_each(?))"
    return dict(con.execute(sql, (msgspec.json.encode(list(paths)).decode(),)))


def _drop(con: apsw.Connection, ids: list[int]) -> None:
    if not ids:
        return
    rows = [(i,) for i in ids]
    for table in ("fts", "cjk"):
        con.executemany(f"DELETE FROM {table} WHERE rowid = ?", rows)
    for table in ("tag", "record", "note"):
        con.executemany(f"DELETE FROM {table} WHERE id = ?", rows)


def _prepare(chunk: list[tuple[NoteRecord, SearchDoc]], encoded: Mapping[str, bytes | None]) -> _Batch:
    """The Python half of storing a chunk (normalization, bigrams, msgpack), apart from the SQL.

    Kept apart so it can run in a helper thread beside SQLite's half; on a busy 2-core machine
    that did not pay (same CPU, more contention), so today both run in the writer's thread.
    """
    batch = _Batch()
    # A path with undecodable bytes (a lone surrogate) cannot be stored: it stays in memory only.
    latest = {record.path: (record, doc) for record, doc in chunk if fts_query.is_storable(record.path)}
    for path, (record, doc) in latest.items():
        folder = posixpath.dirname(path) if doc.folder is None else doc.folder
        type_ = None if doc.type is None else fts_query.storable(doc.type)
        domain = None if doc.domain is None else fts_query.storable(doc.domain)
        # None: a lone surrogate from a YAML escape, an integer past 64 bits; searchable, but
        # re-parsed at each start
        data = encoded[path] if path in encoded else encode_record(record)
        meta = "\n".join([*doc.aliases, doc.description]) if doc.aliases else doc.description
        (title, title_cjk), (meta, meta_cjk), (body, body_cjk) = map(fts_query.prepare, (doc.title, meta, doc.body))
        batch.notes.append(
            (
                path,
                record.size,
                record.mtime_ns,
                signed64(record.ino),
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


def _store(con: apsw.Connection, batch: _Batch, next_id: int) -> int:
    """Write one prepared chunk, reusing the ids of paths already stored; return the next free id."""
    known = _ids_of(con, (n[0] for n in batch.notes))
    _drop(con, list(known.values()))
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
