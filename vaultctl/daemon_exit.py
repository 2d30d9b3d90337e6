"""Waiting for a stopped daemon's process to be gone, and making it go when it will not.

A stop is acknowledged before the daemon has exited: it lets requests in flight finish for a few
seconds, then winds down. A handler stuck in its worker thread keeps the process, and with it the
home's lock, past that: no new daemon can start until it exits. So ``vaultctl daemon stop`` waits
for the process itself, then signals it, SIGTERM and then SIGKILL, each only while the process
still holds the home's lock (a pid is a number the system may give to another process once ours
has exited). The journal finishes or undoes a write a kill interrupted when the daemon next starts.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from protocol import lock_holder

STOP_WAIT_S = 20.0  #: before SIGTERM: the daemon's 5 s grace for requests, its shutdown, a loaded machine
TERM_WAIT_S = 5.0  #: after SIGTERM, before SIGKILL
KILL_WAIT_S = 10.0  #: after SIGKILL, before saying it is still there
POLL_S = 0.02


class StillRunning(Exception):
    """The daemon's process outlived the stop and every signal; the message says what was sent."""


def wait_for_exit(pid: int, home_lock: Path) -> list[str]:
    """Wait until ``pid`` has exited, signalling it when it takes too long; the signals sent.

    Raises:
        StillRunning: it is still there after SIGKILL (or would not be signalled).
    """
    sent: list[str] = []
    gone = exits_within(pid, STOP_WAIT_S)
    for sig, wait in ((signal.SIGTERM, TERM_WAIT_S), (signal.SIGKILL, KILL_WAIT_S)):
        if gone:
            break
        if _holds(home_lock, pid):
            os.kill(pid, sig)
            sent.append(sig.name)
        gone = exits_within(pid, wait)
    if not gone:
        after = " and ".join(sent) or "the stop"
        raise StillRunning(f"vaultd (pid {pid}) is still running after {after}; see 'vaultctl daemon logs'")
    return sent


def stopped_text(pid: int, sent: list[str]) -> str:
    """What ``daemon stop`` says: that the process exited, and how it was made to."""
    if not sent:
        return f"vaultd stopped (pid {pid} has exited)"
    return (
        f"vaultd (pid {pid}) did not exit within {STOP_WAIT_S:g} s of the stop (busy in a request); "
        f"sent {', then '.join(sent)}: it has exited. A write it was applying is finished or undone when it next starts"
    )


def exits_within(pid: int, seconds: float) -> bool:
    """Wait up to ``seconds`` for ``pid`` to exit; whether it has."""
    deadline = time.monotonic() + seconds
    while not exited(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_S)
    return True


def exited(pid: int) -> bool:
    """Whether ``pid`` is gone: no such process, another user's, or one whose every thread has
    exited and that waits for its parent to collect it (such a zombie holds nothing, neither the
    home nor the socket). A process whose first thread exited before the others is shown as a
    zombie while those others still run, holding its files: it has not exited."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return True  # PermissionError: another user's process has that pid now
    try:
        tasks = [t.name for t in Path(f"/proc/{pid}/task").iterdir()]
    except OSError:
        return not Path(f"/proc/{pid}").exists()
    return all(_thread_ended(pid, task) for task in tasks)


def _thread_ended(pid: int, task: str) -> bool:
    try:
        stat = Path(f"/proc/{pid}/task/{task}/stat").read_text(errors="replace")
    except OSError:
        return True  # the thread went while we looked
    return stat.rpartition(")")[2].split()[:1] in (["Z"], ["X"])


def _holds(lock: Path, pid: int) -> bool:
    found = lock_holder.holder(lock)
    return found is not None and found[0] == pid
