"""Vault-wide work in a process of its own, so it never holds the daemon's GIL.

Leiden's C++ and lint's rules are CPU work the daemon's threads would run with the GIL held: on a
20,000-note vault, seconds in which the event loop (every other client's requests) gets the
interpreter only between switches. :func:`run_elsewhere` hands the work's input to
``python -m <a worker module>`` over a pipe (msgpack through msgspec, typed both ways, decoded by
the caller) and waits on the pipe, which releases the GIL; the worker reads nothing but its input
and the files it names, and exits with its answer. It runs niced (:func:`serve`), so on a busy
machine the cores go to the daemon's requests first.

A worker that dies, answers nothing, or runs past its time is a :class:`WorkerFailed` (a
:class:`WorkerOverran` when killed at its time), never a hung request: the daemon goes on.

Fault points reached in a worker are counted by the daemon (:func:`vaultd.faults.for_worker`):
``pause=lint-rules@2`` holds the second lint the daemon runs, wherever it runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

from vaultd import faults

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

WORKER_NICE = 10  #: a worker yields the cores to the daemon's own requests (and to everything else)


class WorkerFailed(Exception):
    """The worker could not be started, ended without an answer, or ran past its time."""


class WorkerOverran(WorkerFailed):
    """The worker was still running at its time and was killed."""


def run_elsewhere(args: Sequence[str], payload: bytes, *, timeout: float, what: str, point: str) -> bytes:
    """Run ``python ARGS`` with ``payload`` on its stdin and return its stdout; blocks (without
    the GIL) until it exits. ``point`` is the fault point the worker reaches once.

    Raises:
        WorkerOverran: it was still running after ``timeout`` seconds (it is killed and reaped).
        WorkerFailed: it could not start, or ended with a status other than 0.
    """
    env = dict(os.environ)
    env.pop("VAULTD_FAULTS", None)
    spec = faults.for_worker(point)
    if spec:
        env["VAULTD_FAULTS"] = spec
    try:
        done = subprocess.run(
            [sys.executable, *args], input=payload, capture_output=True, timeout=timeout, check=False, close_fds=True, env=env
        )
    except subprocess.TimeoutExpired as exc:
        raise WorkerOverran(f"the {what} worker ran past {timeout:g} s and was stopped") from exc
    except (OSError, subprocess.SubprocessError) as exc:
        raise WorkerFailed(f"the {what} worker could not run: {exc}") from exc
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
        raise WorkerFailed(f"the {what} worker ended with status {done.returncode}: {tail[0][:300]}")
    return done.stdout


def serve(answer: Callable[[bytes], bytes]) -> None:
    """A worker's main: niced, with the faults the daemon passed, its input on stdin and its
    answer on stdout (``answer`` reaches the worker's fault point)."""
    try:
        os.nice(WORKER_NICE)
    except OSError:  # not permitted here: the worker still runs, at the daemon's priority
        pass
    faults.configure(os.environ.get("VAULTD_FAULTS"))
    sys.stdout.buffer.write(answer(sys.stdin.buffer.read()))
    sys.stdout.buffer.flush()
