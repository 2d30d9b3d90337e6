"""``daemon stop``'s test of a process being gone, against real processes."""

from __future__ import annotations

import subprocess
import sys

from tests.support.wait import wait_until
from vaultctl.daemon_exit import exited

#: A process whose first thread exits (pthread_exit) while a second one runs on: the kernel then
#: shows the process as a zombie, though it lives and holds its files until the second thread ends.
LEADER_GONE_FIRST = """
import ctypes, sys, threading, time
threading.Thread(target=time.sleep, args=(60,)).start()
print("ready", flush=True)
ctypes.CDLL(None).pthread_exit(None)
"""


def _leader_state(pid: int) -> str:
    with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
        return fh.read().rpartition(")")[2].split()[0]


def test_a_process_whose_first_thread_exited_while_another_runs_has_not_exited() -> None:
    proc = subprocess.Popen([sys.executable, "-c", LEADER_GONE_FIRST], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"ready\n"
        wait_until(lambda: _leader_state(proc.pid) == "Z", 30, "the first thread to exit")
        assert exited(proc.pid) is False
        assert proc.poll() is None  # its parent cannot collect it either: it still runs
    finally:
        proc.kill()
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()


def test_a_collected_or_zombie_process_has_exited() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    wait_until(lambda: _leader_state(proc.pid) == "Z", 30, "the process to end")
    assert exited(proc.pid) is True  # a whole zombie holds nothing
    proc.wait(timeout=30)
    assert exited(proc.pid) is True  # collected: no such process
