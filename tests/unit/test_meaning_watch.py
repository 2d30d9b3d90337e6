"""The meaning worker's watch, on real processes: a job unanswered is ended when its worker is
stuck (no CPU for the timeout) or spinning (more CPU on the job than the timeout), and left alone
while it answers. No timed assertion: each wait is bounded generously and checks an outcome."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from typing import TYPE_CHECKING

import pytest

from vaultd.retrieve.meaning import _watch

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads a process's CPU time from /proc")

TIMEOUT_S = 0.5
SETTLE_S = 120.0  #: how long a kill may take on a busy machine


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        proc.kill()
        proc.wait()


def _child(started: list[subprocess.Popen[bytes]], code: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-c", code])
    started.append(proc)
    return proc


@pytest.mark.parametrize(
    "code",
    ["import time; time.sleep(600)", "while True: pass"],
    ids=["stuck", "spinning"],
)
def test_an_unanswered_job_of_a_stuck_or_spinning_worker_ends_it(started: list[subprocess.Popen[bytes]], code: str) -> None:
    proc = _child(started, code)
    watch = threading.Thread(target=_watch, args=(proc, threading.Event(), TIMEOUT_S), daemon=True)
    watch.start()
    assert proc.wait(SETTLE_S) == -signal.SIGKILL
    watch.join(SETTLE_S)
    assert not watch.is_alive()


def test_a_job_answered_leaves_the_worker_alone(started: list[subprocess.Popen[bytes]]) -> None:
    proc = _child(started, "import time; time.sleep(600)")
    answered = threading.Event()
    watch = threading.Thread(target=_watch, args=(proc, answered, 60.0), daemon=True)
    watch.start()
    answered.set()
    watch.join(SETTLE_S)
    assert not watch.is_alive() and proc.poll() is None
