"""The index's notes, each held as its encoded record and decoded when it is asked for.

A parsed note as Python objects (a struct per link, heading, tag and task, a dict for its
frontmatter) takes about five times the bytes of the same record in msgpack: 47 MB against 9 MB
at 10,000 generated notes, most of a large vault's resident memory. A record is read far less
often than it is kept, and decoding one takes a few microseconds, so the table keeps the bytes
(the same bytes the SQLite cache stores) and decodes on each read. The last few hundred records
read stay decoded, so a request that reads a note's record several times decodes it once.

A record msgpack cannot hold (a path or text with a lone surrogate, an integer past 64 bits in
its frontmatter) is kept as it is, as the SQLite cache leaves it out and parses it again
(:func:`encode_record` is the one place that tells: the table's bytes are the ones the cache
stores, encoded once).

A warm start reads of each cached record only what the index's maps are made of (a
:class:`Sketch`: its stat, title, aliases and link targets), about half the work of decoding
the whole record, and keeps the bytes.

The table is changed only where the index is (the event loop, or a build not yet shared), but it
may be read from worker threads; a decoded record is handed out only while it still belongs to
the bytes the table holds for its path, so a read racing a change never gets a stale record.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, Final, TypeVar

import msgspec

from vaultd.vault.model import LinkKind, NoteIssue, NoteRecord, Tag

RECENT: Final = 512  #: decoded records kept; a few MB at the generated notes' sizes

_decode = msgspec.msgpack.Decoder(NoteRecord).decode
_encode = msgspec.msgpack.encode
_S = TypeVar("_S", bound=msgspec.Struct)
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


_decode_sketch = msgspec.msgpack.Decoder(Sketch).decode


def sketch_of(blob: bytes) -> Sketch | None:
    """The sketch of an encoded record; None when the bytes no longer decode as one."""
    try:
        return _decode_sketch(blob)
    except msgspec.DecodeError:
        return None


class TagsOf(msgspec.Struct):
    """A record's tags alone (for :meth:`NoteTable.fields`)."""

    tags: list[Tag]


class IssuesOf(msgspec.Struct):
    """A record's issues alone."""

    issues: list[NoteIssue]


class TitleOf(msgspec.Struct):
    """A record's title alone."""

    title: str


class StatOf(msgspec.Struct):
    """A record's stat alone: what tells whether the file changed since it was read."""

    size: int
    mtime_ns: int
    ino: int


class NoteTable(Mapping[str, NoteRecord]):
    """Records by vault-relative path, kept encoded: a ``Mapping`` as the index's dict was."""

    __slots__ = ("_blobs", "_recent")

    def __init__(self, blobs: Mapping[str, bytes | NoteRecord] = MappingProxyType({})) -> None:
        self._blobs: dict[str, bytes | NoteRecord] = dict(blobs)
        self._recent: dict[str, tuple[bytes, NoteRecord]] = {}

    def __getitem__(self, path: str) -> NoteRecord:
        blob = self._blobs[path]
        if isinstance(blob, NoteRecord):
            return blob
        kept = self._recent.get(path)
        if kept is not None and kept[0] is blob:
            return kept[1]
        record = _decode(blob)
        self._keep(path, blob, record)
        return record

    def _keep(self, path: str, blob: bytes, record: NoteRecord) -> None:
        if len(self._recent) >= RECENT:
            self._recent.clear()
        self._recent[path] = (blob, record)

    def __contains__(self, path: object) -> bool:
        return path in self._blobs

    def __iter__(self) -> Iterator[str]:
        return iter(self._blobs)

    def __len__(self) -> int:
        return len(self._blobs)

    def put(self, record: NoteRecord) -> bytes | None:
        """Keep ``record`` under its path; answer its encoding (None when it has none, see
        :func:`encode_record`), which the cache stores as it is."""
        blob = encode_record(record)
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
        return kept[0] if kept is not None and kept[1] is record else None

    def put_encoded(self, path: str, blob: bytes) -> None:
        """Keep an encoded record (read back from the cache) under ``path``, undecoded."""
        self._blobs[path] = blob
        self._recent.pop(path, None)

    def pop(self, path: str) -> NoteRecord | None:
        """Drop a path's record and answer it (None when there was none)."""
        blob = self._blobs.pop(path, None)
        kept = self._recent.pop(path, None)
        if blob is None or isinstance(blob, NoteRecord):
            return blob
        return kept[1] if kept is not None and kept[0] is blob else _decode(blob)

    def same(self, other: NoteTable, path: str) -> bool:
        """Whether both tables hold the same encoded record for ``path`` (False when either
        holds none, or holds one it could not encode)."""
        mine, theirs = self._blobs.get(path), other._blobs.get(path)
        return isinstance(mine, bytes) and isinstance(theirs, bytes) and mine == theirs

    def copy(self) -> NoteTable:
        """Another table over the same bytes (each is immutable): a copy costs one dict copy."""
        return NoteTable(self._blobs)

    def fields(self, shape: type[_S]) -> Iterator[tuple[str, _S]]:
        """Each note's ``shape``: a struct naming some of a record's fields, decoded alone.

        A scan of every note that reads a field or two (tags, a stat, issues) decodes a third
        of what the whole record costs and builds none of the rest.
        """
        decoder = _shapes.get(shape)
        if decoder is None:
            decoder = _shapes[shape] = msgspec.msgpack.Decoder(shape)
        names = shape.__struct_fields__
        for path, blob in list(self._blobs.items()):
            if isinstance(blob, NoteRecord):
                yield path, shape(**{name: getattr(blob, name) for name in names})
            else:
                yield path, decoder.decode(blob)

    def only(self, keep: Callable[[str], bool]) -> NoteTable:
        """Another table over the paths ``keep`` accepts, no record decoded."""
        return NoteTable({path: blob for path, blob in self._blobs.items() if keep(path)})

    def encoded_size(self) -> int:
        """Bytes the records take, encoded (what the table holds besides its dicts)."""
        return sum(len(blob) for blob in self._blobs.values() if isinstance(blob, bytes))


def subset(notes: Mapping[str, NoteRecord], keep: Callable[[str], bool]) -> Mapping[str, NoteRecord]:
    """The notes whose paths ``keep`` accepts: a table stays a table, its records undecoded."""
    if isinstance(notes, NoteTable):
        return notes.only(keep)
    return {path: record for path, record in notes.items() if keep(path)}
