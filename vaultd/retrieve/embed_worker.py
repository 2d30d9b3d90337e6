"""The meaning model's worker: a process of its own that embeds passages on the cores nobody uses.

A transformer on a laptop CPU embeds a few passages a second; run in the daemon it would hold
cores (and, through numpy, the GIL) that requests need. ``python -m vaultd.retrieve.embed_worker``
loads the configured backend once, then answers jobs read from stdin: each a length-prefixed
msgpack :class:`EmbedJob`, each answer an :class:`EmbedAnswer`. It imports nothing of the daemon
but this package's backend, and exits when its stdin closes.

It takes what the machine leaves over and gives it back at once: every thread runs niced 19 under
``SCHED_IDLE`` (where the kernel has it), so a request of the daemon's, or anything the person
runs, preempts it as soon as it wakes. Each thread runs one OpenMP thread that sleeps when idle
(``OMP_WAIT_POLICY=PASSIVE``: libgomp's default spin-wait starves a low-priority process on a
busy machine). A batch is shared over :func:`threads_wanted` threads, one passage at a time,
longest first: a thread that loses its core holds up at most the passage it has, never the
batch (a model's own threads split every matrix product and wait for one another at each). In
``auto`` mode a second thread works only while the cores were idle enough between batches
(:class:`IdleCores`).
"""

from __future__ import annotations

import os
import queue
import struct
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO

import msgspec

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import numpy as np

WORKER_NICE = 19
HEADER = struct.Struct(">I")
MAX_FRAME = 64 * 1024 * 1024
#: The worker's threads: ``auto`` (the default: a second one while a second core is idle) or a
#: number from 1 to :data:`MAX_THREADS`, fixed.
THREADS_ENV = "VAULTD_MEANING_THREADS"
AUTO = "auto"
MAX_THREADS = 2
#: ``auto`` adds a thread when this much of one more core was free between two batches, and
#: drops one when less than the threads it runs minus this was (the gap keeps it from flapping).
RAISE_AT = 0.75
LOWER_AT = 0.5
#: The worker's environment on top of the daemon's: one OpenMP thread a calling thread, sleeping
#: when idle, no model hub.
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
    threads: int = 1  #: the threads that shared the batch


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


def lower_priority() -> str:
    """Nice :data:`WORKER_NICE` and ``SCHED_IDLE`` for the calling thread; threads it starts
    afterwards inherit both. The scheduling policy in force (``idle`` or ``other``)."""
    try:
        os.nice(WORKER_NICE)
    except OSError:
        pass
    idle = getattr(os, "SCHED_IDLE", None)
    if idle is None:
        return "other"
    try:
        os.sched_setscheduler(0, idle, os.sched_param(0))
    except OSError:
        return "other"
    return "idle"


def configured_threads(value: str | None) -> int | None:
    """The fixed thread count ``value`` names (1 to :data:`MAX_THREADS`), or None for ``auto``
    (unset, ``auto``, or anything else: a bad value never stops the filler)."""
    if value is None or not value.strip().isdigit():
        return None
    return min(max(int(value), 1), MAX_THREADS)


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def threads_wanted(free: float | None, current: int, limit: int) -> int:
    """How many threads the next batch gets, given ``free``: the cores this process had or
    nobody used since the last batch (None when unknown). One more when a further core was free
    :data:`RAISE_AT` of the time, one fewer when the cores free fell under the threads running
    less :data:`LOWER_AT`; within 1 and ``limit``."""
    current = min(max(current, 1), max(limit, 1))
    if free is None:
        return current
    if current < limit and free >= current + RAISE_AT:
        return current + 1
    if current > 1 and free < current - LOWER_AT:
        return current - 1
    return current


@dataclass
class IdleCores:
    """The cores free to this process between two samples: every core's idle time in
    ``/proc/stat`` plus this process's own CPU time (its threads take what would be idle), over
    the wall time between. None where ``/proc/stat`` cannot be read."""

    _last: tuple[float, float, float] | None = field(default=None)

    def __post_init__(self) -> None:
        self._last = _sample()

    def take(self) -> float | None:
        now = _sample()
        last, self._last = self._last, now
        if now is None or last is None or now[0] - last[0] <= 0:
            return None
        return max(0.0, (now[1] - last[1]) + (now[2] - last[2])) / (now[0] - last[0])


def _sample() -> tuple[float, float, float] | None:
    """(wall seconds, seconds idle summed over every core, this process's CPU seconds)."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if len(fields) < 6 or fields[0] != b"cpu":
        return None
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    idle = (int(fields[4]) + int(fields[5])) / tick  # idle and iowait
    return time.monotonic(), idle, time.process_time()


class Sharer:
    """A batch's passages shared over threads, one passage at a time, longest first: the
    calling thread works too, and helpers (started on first need, kept) take what is left. One
    passage a call costs the model no more CPU than a batch of them (0.473 against 0.474 s a
    passage measured here), so one thread embeds passage by passage too."""

    def __init__(self, embed: Callable[[Sequence[str]], np.ndarray], fixed: int | None) -> None:
        self._embed = embed
        self._fixed = fixed
        self._limit = fixed or min(MAX_THREADS, usable_cores())
        self.threads = fixed or 1
        self._idle = IdleCores()
        self._helpers: list[queue.SimpleQueue[_Batch | None]] = []

    def passages(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        if self._fixed is None:
            self.threads = threads_wanted(self._idle.take(), self.threads, self._limit)
        if not texts:
            return np.ascontiguousarray(self._embed(texts), dtype=np.float32)
        share = min(self.threads, len(texts))
        batch = _Batch(texts, self._embed)
        while len(self._helpers) < share - 1:
            inbox: queue.SimpleQueue[_Batch | None] = queue.SimpleQueue()
            threading.Thread(target=_helper, args=(inbox,), name="vaultd-embed", daemon=True).start()
            self._helpers.append(inbox)
        for inbox in self._helpers[: share - 1]:
            inbox.put(batch)
        batch.work()
        return batch.result(share - 1)

    def close(self) -> None:
        for inbox in self._helpers:
            inbox.put(None)


class _Batch:
    def __init__(self, texts: list[str], embed: Callable[[Sequence[str]], np.ndarray]) -> None:
        self.texts = texts
        self._embed = embed
        self._order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        self._next = 0
        self._lock = threading.Lock()
        self.rows: list[np.ndarray | None] = [None] * len(texts)
        self.error: BaseException | None = None
        self._done = threading.Semaphore(0)

    def work(self) -> None:
        from vaultd import faults

        while True:
            with self._lock:
                if self._next >= len(self._order) or self.error is not None:
                    return
                index = self._order[self._next]
                self._next += 1
            try:
                faults.point("meaning-passage")
                self.rows[index] = self._embed([self.texts[index]])[0]
            except Exception as exc:  # noqa: BLE001 - the batch answers it; the other threads stop taking
                with self._lock:
                    self.error = exc
                return

    def helped(self) -> None:
        self._done.release()

    def result(self, helpers: int) -> np.ndarray:
        import numpy as np

        for _ in range(helpers):
            self._done.acquire()
        if self.error is not None:
            raise self.error
        return np.ascontiguousarray(np.stack(self.rows), dtype=np.float32)  # type: ignore[arg-type]


def _helper(inbox: queue.SimpleQueue[_Batch | None]) -> None:
    while True:
        batch = inbox.get()
        if batch is None:
            return
        try:
            batch.work()
        finally:
            batch.helped()


def main() -> int:
    from vaultd import faults
    from vaultd.retrieve.backend import configured, load

    faults.configure(os.environ.get("VAULTD_FAULTS"))

    lower_priority()  # before the helpers start: they inherit it
    source, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # anything a library prints goes to the log, never into the frames
    try:
        backend = load(configured())
    except Exception as exc:  # noqa: BLE001 - the daemon is told why, once, and stops asking
        write_frame(out, msgspec.msgpack.encode(EmbedAnswer(0, 0, b"", f"the model did not load ({type(exc).__name__}: {exc})"[:500])))
        return 1
    sharer = Sharer(backend.passages, configured_threads(os.environ.get(THREADS_ENV)))
    write_frame(out, msgspec.msgpack.encode(EmbedAnswer(0, 0, b"")))  # loaded: ready for jobs
    decoder = msgspec.msgpack.Decoder(EmbedJob)
    try:
        while True:
            frame = read_frame(source)
            if frame is None:
                return 0
            job = decoder.decode(frame)
            faults.point("meaning-batch")
            try:
                vectors = sharer.passages(job.texts)
                answer = EmbedAnswer(vectors.shape[0], vectors.shape[1], vectors.tobytes(), threads=sharer.threads)
            except Exception as exc:  # noqa: BLE001 - one failed job is reported; the worker goes on
                answer = EmbedAnswer(0, 0, b"", f"{type(exc).__name__}: {exc}"[:500])
            write_frame(out, msgspec.msgpack.encode(answer))
    finally:
        sharer.close()


if __name__ == "__main__":
    sys.exit(main())
