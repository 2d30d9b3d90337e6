"""The meaning model's worker: a process of its own that embeds passages at low priority.

A transformer on a laptop CPU embeds a few passages a second; run in the daemon it would hold
cores (and, through numpy, the GIL) that requests need. ``python -m vaultd.retrieve.embed_worker``
loads the configured backend once, then answers jobs read from stdin: each a length-prefixed
msgpack :class:`EmbedJob`, each answer an :class:`EmbedAnswer`. It runs niced, with one OpenMP
thread that sleeps when idle (``OMP_WAIT_POLICY=PASSIVE``: libgomp's default spin-wait starves a
low-priority process on a busy machine), imports nothing of the daemon but this package's
backend, and exits when its stdin closes.
"""

from __future__ import annotations

import os
import struct
import sys
from typing import BinaryIO

import msgspec

WORKER_NICE = 10
HEADER = struct.Struct(">I")
MAX_FRAME = 64 * 1024 * 1024
#: The worker's environment on top of the daemon's: one thread, sleeping when idle, no model hub.
WORKER_ENV = {
    "OMP_WAIT_POLICY": "PASSIVE",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
}


class EmbedJob(msgspec.Struct, array_like=True):
    texts: list[str]


class EmbedAnswer(msgspec.Struct, array_like=True):
    rows: int
    dims: int
    data: bytes  #: float32, row-major, unit rows
    error: str = ""


def write_frame(out: BinaryIO, payload: bytes) -> None:
    out.write(HEADER.pack(len(payload)) + payload)
    out.flush()


def read_frame(source: BinaryIO) -> bytes | None:
    """One frame, or None at the end of the stream.

    Raises:
        ValueError: a frame over :data:`MAX_FRAME` or cut short.
    """
    head = source.read(HEADER.size)
    if not head:
        return None
    if len(head) < HEADER.size:
        raise ValueError("a frame header was cut short")
    (size,) = HEADER.unpack(head)
    if size > MAX_FRAME:
        raise ValueError(f"a frame of {size} bytes is over {MAX_FRAME}")
    body = source.read(size)
    if len(body) < size:
        raise ValueError("a frame was cut short")
    return body


def main() -> int:
    import numpy as np

    from vaultd import faults
    from vaultd.retrieve.backend import configured, load

    faults.configure(os.environ.get("VAULTD_FAULTS"))

    try:
        os.nice(WORKER_NICE)
    except OSError:
        pass
    source, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # anything a library prints goes to the log, never into the frames
    try:
        backend = load(configured())
    except Exception as exc:  # noqa: BLE001 - the daemon is told why, once, and stops asking
        write_frame(out, msgspec.msgpack.encode(EmbedAnswer(0, 0, b"", f"the model did not load ({type(exc).__name__}: {exc})"[:500])))
        return 1
    write_frame(out, msgspec.msgpack.encode(EmbedAnswer(0, 0, b"")))  # loaded: ready for jobs
    decoder = msgspec.msgpack.Decoder(EmbedJob)
    while True:
        frame = read_frame(source)
        if frame is None:
            return 0
        job = decoder.decode(frame)
        faults.point("meaning-batch")
        try:
            vectors = np.ascontiguousarray(backend.passages(job.texts), dtype=np.float32)
            answer = EmbedAnswer(vectors.shape[0], vectors.shape[1], vectors.tobytes())
        except Exception as exc:  # noqa: BLE001 - one failed job is reported; the worker goes on
            answer = EmbedAnswer(0, 0, b"", f"{type(exc).__name__}: {exc}"[:500])
        write_frame(out, msgspec.msgpack.encode(answer))


if __name__ == "__main__":
    sys.exit(main())
