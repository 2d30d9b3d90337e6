"""Who holds a vault lock, read without taking it: the kernel's table where there is one, else the
pid the holder recorded, if that process lives."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from protocol import lock_holder

HOLD = textwrap.dedent("""
    import fcntl, os, sys
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.ftruncate(fd, 0); os.pwrite(fd, f"{os.getpid()}\\n".encode(), 0)
    print("held", flush=True)
    sys.stdin.read()
""")


def test_a_held_lock_names_its_process_and_a_released_one_nobody(tmp_path: Path) -> None:
    lock = tmp_path / "lock"
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        found = lock_holder.holder(lock)
        assert found is not None and found[0] == proc.pid
        if Path("/proc").is_dir():
            assert found[1] is not None and "python" in found[1]
        assert lock_holder.describe(found).startswith(f"pid {proc.pid}")
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()
    assert lock_holder.holder(lock) is None  # the pid is still recorded, but nobody holds the lock
    assert lock_holder.describe(None) == "another process"


def test_reading_the_holder_never_takes_the_lock(tmp_path: Path) -> None:
    lock = tmp_path / "lock"
    lock.write_text(f"{os.getpid()}\n")
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert lock_holder.holder(lock) == (os.getpid(), lock_holder.command_of(os.getpid()))
    finally:
        os.close(fd)


@pytest.mark.parametrize("content", [b"", b"not a pid\n", b"-5\n", b"0\n", b"9" * 80])
def test_a_lock_file_without_a_usable_pid_names_nobody(tmp_path: Path, content: bytes) -> None:
    lock = tmp_path / "lock"
    lock.write_bytes(content)
    assert lock_holder.recorded_pid(lock) is None


def test_the_kernel_table_is_read_for_this_file_only(tmp_path: Path) -> None:
    lock = tmp_path / "lock"
    lock.write_text("1\n")
    st = lock.stat()
    dev = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}"
    table = tmp_path / "locks"
    table.write_text(
        f"1: FLOCK  ADVISORY  WRITE 4242 {dev}:{st.st_ino} 0 EOF\n"
        f"1: -> FLOCK  ADVISORY  WRITE 5151 {dev}:{st.st_ino} 0 EOF\n"  # a waiter, not a holder
        f"2: POSIX  ADVISORY  WRITE 6161 {dev}:{st.st_ino} 0 EOF\n"
        f"3: FLOCK  ADVISORY  WRITE 7171 {dev}:{st.st_ino + 1} 0 EOF\n"
    )
    assert lock_holder.flock_holders(lock, table) == [4242]
    assert lock_holder.flock_holders(tmp_path / "missing", table) is None
