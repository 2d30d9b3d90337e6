"""The index's notes: each record read from the cache file when it is asked for, and kept in
memory only until the file holds it.

A parsed note as Python objects takes about five times the bytes of the same record in msgpack,
and the msgpack bytes themselves were the largest part of a large vault's index (about 0.9 KB a
note: 104 MB at 100,000 notes). The SQLite cache stores those very bytes, so once a record is
written there the table keeps only its checksum (a CRC-32, an int) and reads the bytes back when
a call asks for the record; the last few hundred records read stay decoded. A record the cache
has not stored yet (a change applied a moment before its cache write, a cold build's chunk in
flight) is kept as its bytes until the write commits; a record msgpack cannot hold (a lone
surrogate, an integer past 64 bits: :func:`encode_record` tells) is kept as it is, always.

Copies for vault-wide readers (:meth:`NoteTable.copy`) share the file: a copy is registered with
it, and before a write commits rows it replaces or deletes, the cache hands their old bytes to
every other table that still reads them from the file (:meth:`NoteTable.hand_over`), so a copy
keeps the state it was taken at however long it lives (a kept graph snapshot, a lint run) and
costs memory only for the records changed after it. Pinning a read
transaction per copy was the other way; it would keep the write-ahead log from being checkpointed
while a snapshot lives, which for a kept graph snapshot is for good.

The file is derived and may be deleted or damaged while the daemon runs. A row is taken only
when its checksum is the one the table holds (a read racing a write reads again); a row missing,
damaged or unreadable is read again from the note itself (``reread``) and kept in memory from
then on, so answers stay whole, and the next start rebuilds the file.

The table is changed by the index (the event loop, or a build not yet shared) and by the cache's
writer thread (hand-overs, and bytes turned into checksums once written), each under the file's
lock; it may be read from worker threads. A decoded record is handed out only while it still
belongs to what the table holds for its path, so a read racing a change never gets a stale record.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable, ItemsView, Iterator, Mapping, ValuesView
from types import MappingProxyType
from typing import Any, Final, Protocol, TypeVar

import msgspec
import structlog

from vaultd.vault.model import LinkKind, NoteIssue, NoteRecord, Tag

RECENT: Final = 512  #: decoded records kept; a few MB at the generated notes' sizes

_decode = msgspec.msgpack.Decoder(NoteRecord).decode
_encode = msgspec.msgpack.encode
_S = TypeVar("_S", bound=msgspec.Struct)
_T = TypeVar("_T")
log = structlog.get_logger("vaultd.index")
_shapes: dict[type[Any], msgspec.msgpack.Decoder[Any]] = {}


def encode_record(record: NoteRecord) -> bytes | None:
    """The record's msgpack bytes; None when msgpack cannot hold it (a lone surrogate in its
    text, an integer past 64 bits in its frontmatter): such a record stays in memory only, and
    is parsed again at each start."""
    try:
        return _encode(record)
    except (OverflowError, UnicodeEncodeError):
        return None


class LinkTarget(msgspec.Struct, array_like=True):
    """The first two fields of a :class:`~vaultd.vault.model.Link` (the rest are not decoded)."""

    kind: LinkKind
    target: str


class Sketch(msgspec.Struct):
    """What the index's maps and a warm start's stat check read of a record, decoded alone."""

    path: str
    size: int
    mtime_ns: int
    ino: int
    title: str
    aliases: list[str]
    links: list[LinkTarget]


def _decoder_of(shape: type[_S]) -> msgspec.msgpack.Decoder[_S]:
    decoder = _shapes.get(shape)
    if decoder is None:
        decoder = _shapes[shape] = msgspec.msgpack.Decoder(shape)
    return decoder


def decoded_as(blob: bytes, shape: type[_S]) -> _S | None:
    """``shape`` of one encoded record, decoded alone (see :meth:`NoteTable.fields`); None when
    the bytes no longer decode as one."""
    try:
        return _decoder_of(shape).decode(blob)
    except msgspec.DecodeError:
        return None


class TagsOf(msgspec.Struct):
    """A record's tags alone (for :meth:`NoteTable.fields`)."""

    tags: list[Tag]


class IssuesOf(msgspec.Struct):
    """A record's issues alone."""

    issues: list[NoteIssue]


class AliasesOf(msgspec.Struct):
    """A record's aliases alone."""

    aliases: list[str]


class TitleOf(msgspec.Struct):
    """A record's title alone."""

    title: str


class StatOf(msgspec.Struct):
    """A record's stat alone: what tells whether the file changed since it was read."""

    size: int
    mtime_ns: int
    ino: int


class RecordFile(Protocol):
    """Where a table reads the records it no longer keeps (the index cache, structurally)."""

    views_lock: threading.RLock  #: held by every change to a table that reads this file (re-entered by a copy)

    def records_of(self, paths: list[str]) -> dict[str, bytes]:
        """The stored bytes of those of ``paths`` the file holds."""
        ...

    def follow(self, table: NoteTable) -> None:
        """Hand ``table`` the old bytes of a row before a write replaces them, from now on."""
        ...


Held = bytes | NoteRecord | int  #: encoded, kept as it is, or in the file with this checksum
BATCH = 256  #: records read from the file in one statement by a scan
checksum = zlib.crc32


class NoteTable(Mapping[str, NoteRecord]):
    """Records by vault-relative path, read from the cache file when asked for: a ``Mapping`` as
    the index's dict was."""

    __slots__ = ("__weakref__", "_blobs", "_file", "_lock", "_recent", "_reread")

    def __init__(
        self,
        blobs: Mapping[str, Held] = MappingProxyType({}),
        file: RecordFile | None = None,
        reread: Callable[[str], NoteRecord | None] | None = None,
    ) -> None:
        self._blobs: dict[str, Held] = dict(blobs)
        self._recent: dict[str, tuple[Held, NoteRecord]] = {}
        self._file = file
        self._reread = reread
        self._lock = file.views_lock if file is not None else threading.RLock()
        if file is not None:
            file.follow(self)

    def __getitem__(self, path: str) -> NoteRecord:
        held = self._blobs[path]
        if isinstance(held, NoteRecord):
            return held
        kept = self._recent.get(path)
        if kept is not None and kept[0] is held:
            return kept[1]
        if isinstance(held, int):
            found = self._filed([path]).get(path)
            if found is None:
                raise KeyError(path)
            held, blob = found
            if isinstance(blob, NoteRecord):
                return blob
        else:
            blob = held
        record = _decode(blob)
        self._keep(path, held, record)
        return record

    def _keep(self, path: str, held: Held, record: NoteRecord) -> None:
        if len(self._recent) >= RECENT:
            self._recent.clear()
        self._recent[path] = (held, record)

    def _filed(self, paths: list[str]) -> dict[str, tuple[Held, bytes | NoteRecord]]:
        """The bytes of ``paths`` held in the file, by path, each with what the table held when
        it was taken (a path no longer in the table is left out).

        A row is taken when its checksum is the table's; when the table's entry changed while the
        row was read (a hand-over, a write), the entry is looked at again; when the file has no
        such row (deleted, damaged, reset), the note is read again from the vault.
        """
        out: dict[str, tuple[Held, bytes | NoteRecord]] = {}
        wanted = paths
        for _ in range(3):
            rows = self._read(wanted)
            again: list[str] = []
            for path in wanted:
                held = self._blobs.get(path)
                if held is None:
                    continue
                if not isinstance(held, int):
                    out[path] = (held, held)
                    continue
                blob = rows.get(path)
                if blob is not None and checksum(blob) == held:
                    out[path] = (held, blob)
                else:
                    again.append(path)
            if not again:
                return out
            wanted = again
        for path in wanted:
            held = self._blobs.get(path)
            if held is not None:
                out[path] = (held, held) if not isinstance(held, int) else self._recover(path, held)
        return out

    def _read(self, paths: list[str]) -> dict[str, bytes]:
        if self._file is None:
            return {}
        try:
            return self._file.records_of(paths)
        except Exception:  # a file we cannot read is read around: the note itself
            log.warning("index cache unreadable; notes are read from the vault", exc_info=True)
            return {}

    def _recover(self, path: str, held: int) -> tuple[Held, NoteRecord]:
        """A record the file lost: parsed again from the note, and kept in memory from now on."""
        record = self._reread(path) if self._reread is not None else None
        if record is None or record.path != path:
            record = _lost(path)
        log.warning("index cache lost a record; the note was read again", path=path)
        with self._lock:
            if self._blobs.get(path) is held:
                self._blobs[path] = record
        return record, record

    def __contains__(self, path: object) -> bool:
        return path in self._blobs

    def __iter__(self) -> Iterator[str]:
        return iter(self._blobs)

    def __len__(self) -> int:
        return len(self._blobs)

    def items(self) -> ItemsView[str, NoteRecord]:
        """Every (path, record), the file read a batch of records at a time."""
        return _Items(self)

    def values(self) -> ValuesView[NoteRecord]:
        """Every record, the file read a batch at a time."""
        return _Values(self)

    def _each(self, decode: Callable[[bytes], _T], whole: Callable[[NoteRecord], _T]) -> Iterator[tuple[str, _T]]:
        """Every path with its record as ``decode`` makes it of the bytes (``whole`` of a record
        kept as it is), reading the file in batches."""
        paths = list(self._blobs)
        for start in range(0, len(paths), BATCH):
            batch = paths[start : start + BATCH]
            filed = [p for p in batch if isinstance(self._blobs.get(p), int)]
            found = self._filed(filed) if filed else {}
            for path in batch:
                held = found[path][1] if path in found else self._blobs.get(path)
                if held is None or isinstance(held, int):
                    continue  # gone meanwhile
                yield path, (whole(held) if isinstance(held, NoteRecord) else decode(held))

    def put(self, record: NoteRecord) -> bytes | None:
        """Keep ``record`` under its path; answer its encoding (None when it has none, see
        :func:`encode_record`), which the cache stores as it is."""
        blob = encode_record(record)
        with self._lock:
            if blob is None:
                self._blobs[record.path] = record
                return None
            self._blobs[record.path] = blob
            self._keep(record.path, blob, record)
        return blob

    def forget_decoded(self) -> None:
        """Let the decoded records go (a cold build's last chunks: 1.3 MB at the generated notes'
        sizes, which no read may ask for again)."""
        self._recent.clear()

    def kept_encoding(self, record: NoteRecord) -> bytes | None:
        """The bytes this very record was kept as, while it is among the recent ones (a refresh's
        cache write follows its change by milliseconds); None when the table cannot tell."""
        kept = self._recent.get(record.path)
        return kept[0] if kept is not None and kept[1] is record and isinstance(kept[0], bytes) else None

    def put_encoded(self, path: str, blob: bytes) -> None:
        """Keep an encoded record under ``path``, undecoded."""
        with self._lock:
            self._blobs[path] = blob
            self._recent.pop(path, None)

    def put_filed(self, path: str, blob: bytes) -> None:
        """Note that the file holds ``blob`` for ``path`` (a warm start): only its checksum is kept."""
        with self._lock:
            self._blobs[path] = checksum(blob)
            self._recent.pop(path, None)

    def pop(self, path: str) -> NoteRecord | None:
        """Drop a path's record and answer it (None when there was none)."""
        held = self._blobs.get(path)
        if held is None:
            return None
        record: NoteRecord | None = None
        try:
            record = self[path]
        except KeyError:
            return None
        finally:
            with self._lock:
                self._blobs.pop(path, None)
                self._recent.pop(path, None)
        return record

    def same(self, other: NoteTable, path: str) -> bool:
        """Whether both tables surely hold the same encoded record for ``path`` (False when either
        holds none, holds one it could not encode, or when telling would take a read)."""
        mine, theirs = self._blobs.get(path), other._blobs.get(path)
        if isinstance(mine, int) and isinstance(theirs, int):
            return mine == theirs and self._file is other._file
        return isinstance(mine, bytes) and isinstance(theirs, bytes) and mine == theirs

    def copy(self) -> NoteTable:
        """Another table of the same records, which later changes to this one leave alone (see
        the module's docstring): one dict copy."""
        with self._lock:
            return NoteTable(self._blobs, self._file, self._reread)

    def fields(self, shape: type[_S]) -> Iterator[tuple[str, _S]]:
        """Each note's ``shape``: a struct naming some of a record's fields, decoded alone.

        A scan of every note that reads a field or two (tags, a stat, issues) decodes a third
        of what the whole record costs and builds none of the rest.
        """
        decoder = _decoder_of(shape)
        names = shape.__struct_fields__
        return self._each(decoder.decode, lambda record: shape(**{name: getattr(record, name) for name in names}))

    def only(self, keep: Callable[[str], bool]) -> NoteTable:
        """Another table over the paths ``keep`` accepts, no record decoded."""
        with self._lock:
            return NoteTable({path: held for path, held in self._blobs.items() if keep(path)}, self._file, self._reread)

    def encoded_size(self) -> int:
        """Bytes the records kept in memory take, encoded (what the table holds besides its dicts)."""
        return sum(len(held) for held in self._blobs.values() if isinstance(held, bytes))

    def in_memory(self) -> int:
        """How many records the table keeps in memory (not read from the file)."""
        return sum(1 for held in self._blobs.values() if not isinstance(held, int))

    # -- the cache's side (its writer thread, under ``views_lock``) -----------------------------

    def reads_from_file(self, path: str) -> bool:
        """Whether the table reads ``path``'s record from the file."""
        return isinstance(self._blobs.get(path), int)

    def hand_over(self, rows: Mapping[str, bytes]) -> None:
        """Keep these rows' bytes, which a write is about to replace in the file, for each path
        whose record the table reads from the file and whose checksum they match."""
        for path, blob in rows.items():
            held = self._blobs.get(path)
            if isinstance(held, int) and checksum(blob) == held:
                self._blobs[path] = blob

    def written(self, rows: Mapping[str, bytes]) -> None:
        """The file now holds these rows: a record kept as the same bytes is read from it from now
        on."""
        for path, blob in rows.items():
            held = self._blobs.get(path)
            if isinstance(held, bytes) and (held is blob or held == blob):
                self._blobs[path] = checksum(blob)


def _lost(path: str) -> NoteRecord:
    """What a note whose record the file lost, and that cannot be read again (gone since), is
    until the watcher's refresh drops it: no content."""
    return NoteRecord(
        path=path,
        size=0,
        mtime_ns=0,
        ino=0,
        sha256="",
        title=path.rpartition("/")[2].removesuffix(".md"),
        frontmatter=None,
        aliases=[],
        tags=[],
        headings=[],
        blocks=[],
        links=[],
        issues=[],
        words=0,
        body_offset=0,
    )


class _Items(ItemsView[str, NoteRecord]):
    _mapping: NoteTable

    def __iter__(self) -> Iterator[tuple[str, NoteRecord]]:
        return self._mapping._each(_decode, _same)


class _Values(ValuesView[NoteRecord]):
    _mapping: NoteTable

    def __iter__(self) -> Iterator[NoteRecord]:
        return (record for _path, record in self._mapping._each(_decode, _same))


def _same(record: NoteRecord) -> NoteRecord:
    return record


def subset(notes: Mapping[str, NoteRecord], keep: Callable[[str], bool]) -> Mapping[str, NoteRecord]:
    """The notes whose paths ``keep`` accepts: a table stays a table, its records undecoded."""
    if isinstance(notes, NoteTable):
        return notes.only(keep)
    return {path: record for path, record in notes.items() if keep(path)}
