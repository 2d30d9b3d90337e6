"""Who holds a vault's lock, as the daemon and ``vaultctl doctor`` both tell it.

The lock is an flock on ``<vault>/.vaultd/lock``; whoever takes it writes its pid into the file.
Both sides read it the same way, without ever taking the lock themselves (a probe could make a
starting daemon find the vault locked): the recorded pid, whether that process still lives, and
what it runs (from ``/proc`` where there is one). On Linux, ``/proc/locks`` says whether the file
is really locked, and by whom, so a recorded pid that outlived its lock is not blamed.
"""

from __future__ import annotations

import os
from pathlib import Path

MAX_PID_BYTES = 64
MAX_PID = 1 << 31  #: pids are C ints; a larger number is no pid (and os.kill would overflow on it)
MAX_COMMAND_CHARS = 120


def recorded_pid(lock_file: Path) -> int | None:
    """The pid written in the lock file, or None (no file, unreadable, no number)."""
    try:
        fd = os.open(lock_file, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        raw = os.read(fd, MAX_PID_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    text = raw.decode("ascii", "replace").strip()
    return int(text) if text.isdigit() and 0 < int(text) < MAX_PID else None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, as another user's process
    except OSError:
        return False
    return True


def command_of(pid: int) -> str | None:
    """What process ``pid`` runs (its command line, shortened), where ``/proc`` tells it."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    words = [w.decode("utf-8", "replace") for w in raw.split(b"\0") if w]
    text = " ".join(words)
    return text if len(text) <= MAX_COMMAND_CHARS else text[: MAX_COMMAND_CHARS - 1] + "…"


def flock_holders(lock_file: Path, locks: Path = Path("/proc/locks")) -> list[int] | None:
    """The pids holding an flock on ``lock_file`` per ``/proc/locks``; None where there is no such table."""
    try:
        st = os.stat(lock_file, follow_symlinks=False)
        table = locks.read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    wanted = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    pids = []
    for line in table.splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; a blocked waiter's line has "->" after the id
        if "->" in fields or len(fields) < 6 or fields[1] != "FLOCK" or fields[5] != wanted:
            continue
        if fields[4].lstrip("-").isdigit() and int(fields[4]) > 0:
            pids.append(int(fields[4]))
    return pids


def holder(lock_file: Path) -> tuple[int, str | None] | None:
    """(pid, command) of the process holding the vault lock, or None when nobody seems to.

    With ``/proc/locks`` the kernel's answer decides; elsewhere the recorded pid, if it lives.
    """
    held = flock_holders(lock_file)
    pid = recorded_pid(lock_file)
    if held is not None:
        if not held:
            return None
        pid = pid if pid in held else held[0]
    elif pid is None or not alive(pid):
        return None
    return pid, command_of(pid)


def describe(found: tuple[int, str | None] | None) -> str:
    """``pid 1234 (python -m vaultd.main ...)`` or ``another process``."""
    if found is None:
        return "another process"
    pid, command = found
    return f"pid {pid}" + (f" ({command})" if command else "")
