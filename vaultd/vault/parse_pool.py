"""A cold build's notes parsed on several processes, the results handed back in order.

Parsing is Python (frontmatter, Markdown, hashing) and holds the GIL: on one process a build
is bound by it, while the SQLite writer thread waits. With a worker process per core the
parsing spreads over the machine and the daemon's process is left to read the records back and
feed the full-text index.

The workers are plain child processes running ``python -m vaultd.vault.parse_worker``, fed
chunks over a pipe, not a ``multiprocessing`` pool: its spawn re-imports the parent's main
module in every child (the whole daemon, or whatever script embeds the index), and fork would
copy a process that has threads. A worker imports only the parser.

A pool costs a few hundred milliseconds to start, so it is used only for builds big enough to
repay it. If a worker cannot start or dies, the chunks not yet delivered are parsed in this
process: a pool is a speed-up, never a way for a build to fail.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from typing import IO, TYPE_CHECKING

import msgspec
import structlog

from vaultd.vault.parse_worker import decode_parsed, encode_chunk, read_frame, write_frame
from vaultd.vault.reading import Updates, compute_updates

if TYPE_CHECKING:
    from collections.abc import Generator, Sequence
    from pathlib import Path

    from vaultd.vault.walk import FileStat

log = structlog.get_logger("vaultd.index")

PARALLEL_MIN_NOTES = 2000  #: fewer notes than this parse in the daemon's own process
MAX_WORKERS = 8


class WorkerLost(Exception):
    """A parsing process ended or answered something unreadable."""


def worker_count(notes: int) -> int:
    """Processes to parse ``notes`` with: one per usable core, none for a small build or one core."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    if cores < 2 or notes < PARALLEL_MIN_NOTES:
        return 0
    return min(cores, MAX_WORKERS)


#: How a worker is started, after the interpreter (the root follows); a test starts others.
WORKER_ARGS = ("-m", "vaultd.vault.parse_worker")


def _start(root: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, *WORKER_ARGS, os.fspath(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        close_fds=True,
    )


def _feed(workers: list[subprocess.Popen[bytes]], chunks: Sequence[list[FileStat]]) -> None:
    """Chunk ``i`` to worker ``i % n``, on a thread of its own: a worker blocked writing a result
    the reader has not reached yet must never stop the others from getting their next chunk."""
    try:
        for i, chunk in enumerate(chunks):
            stdin = workers[i % len(workers)].stdin
            assert stdin is not None
            write_frame(stdin, encode_chunk(chunk))
    except (OSError, ValueError):
        return  # a worker is gone: the reader finds out and parses the rest here
    finally:
        for worker in workers:
            if worker.stdin is not None:
                try:
                    worker.stdin.close()  # end of input: each worker exits once it has answered
                except OSError:
                    pass


def _result(stdout: IO[bytes] | None) -> Updates:
    try:
        data = read_frame(stdout) if stdout is not None else None
        if data is None:
            raise WorkerLost("a parsing process ended early")
        return decode_parsed(data).updates()
    except (OSError, ValueError, msgspec.DecodeError) as exc:
        raise WorkerLost(f"a parsing process answered badly: {exc}") from exc


def parsed_chunks(root: Path, chunks: Sequence[list[FileStat]], workers: int) -> Generator[Updates, None, None]:
    """Each chunk's :class:`Updates`, in the order of ``chunks``: parsed by ``workers`` child
    processes (0: here), and here from the first chunk that a lost worker did not deliver."""
    done = 0
    if workers and chunks:
        started: list[subprocess.Popen[bytes]] = []
        try:
            for _ in range(min(workers, len(chunks))):
                started.append(_start(root))
        except OSError as exc:
            log.warning("cannot start a parsing process; parsing here", error=str(exc))
        if len(started) == min(workers, len(chunks)):
            feeder = threading.Thread(target=_feed, args=(started, chunks), name="vaultd-parse-feed", daemon=True)
            feeder.start()
            try:
                for i in range(len(chunks)):
                    updates = _result(started[i % len(started)].stdout)
                    done += 1
                    yield updates
            except WorkerLost as exc:
                log.warning("a parsing process failed; parsing the rest here", error=str(exc))
            finally:
                _stop(started)
                feeder.join(timeout=5)
        else:
            _stop(started)
    for chunk in chunks[done:]:
        yield compute_updates(root, chunk, {})


def _stop(workers: list[subprocess.Popen[bytes]]) -> None:
    """End the workers (every result read, or the build given up): the feeder closes their input."""
    for worker in workers:
        if worker.poll() is None:
            worker.kill()
        if worker.stdout is not None:
            worker.stdout.close()
        worker.wait()
