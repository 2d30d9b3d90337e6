"""One parsing process of a cold build (see ``parse_pool``): chunks of file stats in, parses out.

Run as ``python -m vaultd.vault.parse_worker ROOT``. Each frame on stdin is a chunk of
:class:`~vaultd.vault.walk.FileStat`; each frame on stdout is that chunk's :class:`Parsed`, in
the same order; it exits when its input ends. Frames are msgpack through msgspec, typed both
ways: decoding a chunk's records costs the daemon about half what unpickling them did, and
encoding them a fifth. The worker imports the parser and nothing of the daemon, and never
writes: it reads the notes it is told of, as the daemon would. It runs niced: a rebuild's parsing
takes the cores only when the daemon's own requests leave them.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path
from typing import IO

import msgspec

from vaultd.vault.model import NoteRecord
from vaultd.vault.reading import Updates, compute_updates
from vaultd.vault.search_doc import SearchDoc
from vaultd.vault.walk import FileStat, SkippedFile

HEADER = struct.Struct(">I")  #: a frame's length, before its bytes


class Parsed(msgspec.Struct, array_like=True):
    """A chunk's :class:`Updates` on the wire (a build's chunks have nothing gone)."""

    notes: list[tuple[NoteRecord, SearchDoc]]
    attachments: list[FileStat]
    skipped: list[SkippedFile]

    def updates(self) -> Updates:
        return Updates(notes=self.notes, attachments=self.attachments, skipped=self.skipped)


_encode = msgspec.msgpack.Encoder().encode
decode_chunk = msgspec.msgpack.Decoder(list[FileStat]).decode
decode_parsed = msgspec.msgpack.Decoder(Parsed).decode


def encode_chunk(chunk: list[FileStat]) -> bytes:
    return _encode(chunk)


def encode_parsed(updates: Updates) -> bytes:
    return _encode(Parsed(updates.notes, updates.attachments, updates.skipped))


def write_frame(stream: IO[bytes], data: bytes) -> None:
    stream.write(HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def read_frame(stream: IO[bytes]) -> bytes | None:
    """The next frame's bytes; None at the end of the stream (or a frame cut short)."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (size,) = HEADER.unpack(header)
    data = stream.read(size)
    return data if len(data) == size else None


WORKER_NICE = 10  #: a build's parsing yields the cores to the daemon's requests (searches, writes)


def main(argv: list[str]) -> int:
    try:
        os.nice(WORKER_NICE)
    except OSError:  # not permitted here: parse at the daemon's priority
        pass
    root = Path(argv[0])
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while (frame := read_frame(stdin)) is not None:
        write_frame(stdout, encode_parsed(compute_updates(root, decode_chunk(frame), {})))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
