"""The shared filesystem helpers: the bounded no-follow read and the lock files, at their edges."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from vaultd.fsio import LockHeld, ReadRefused, Refusal, locked, read_regular, record_holder, take_lock

if TYPE_CHECKING:
    from pathlib import Path


def test_a_file_of_exactly_the_limit_is_read_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x" * 10)
    data, st = read_regular(tmp_path / "f", 10)
    assert data == b"x" * 10 and st.st_size == 10
    (tmp_path / "f").write_bytes(b"x" * 11)
    with pytest.raises(ReadRefused) as refused:
        read_regular(tmp_path / "f", 10)
    assert refused.value.refusal is Refusal.TOO_BIG and refused.value.size == 11


def test_a_link_a_fifo_a_folder_and_nothing_are_told_apart(tmp_path: Path) -> None:
    (tmp_path / "real").write_bytes(b"secret")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    os.mkfifo(tmp_path / "fifo")  # opened without blocking, then refused
    (tmp_path / "dir").mkdir()
    for name, refusal in (("link", Refusal.LINK), ("fifo", Refusal.NOT_REGULAR), ("dir", Refusal.NOT_REGULAR)):
        with pytest.raises(ReadRefused) as refused:
            read_regular(tmp_path / name, 100)
        assert refused.value.refusal is refusal, name
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "absent", 100)


def test_relative_to_a_folder_descriptor_and_a_check_that_refuses_before_reading(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"abc")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert read_regular("f", 3, dir_fd=fd)[0] == b"abc"
        seen: list[int] = []

        def refuse(st: os.stat_result) -> None:
            seen.append(st.st_size)
            raise PermissionError("not ours")

        with pytest.raises(PermissionError):
            read_regular("f", 1, dir_fd=fd, check=refuse)  # the check runs before the size bound
        assert seen == [3]
    finally:
        os.close(fd)


def test_a_lock_taken_is_refused_to_a_second_taker_with_the_holder_named(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    fd = take_lock(path)
    try:
        record_holder(fd)
        with pytest.raises(LockHeld) as held:
            take_lock(path)  # flock conflicts across open files, even in one process
        assert held.value.holder == str(os.getpid())
        assert oct(os.stat(path).st_mode & 0o777) == oct(0o600)
    finally:
        os.close(fd)
    os.close(take_lock(path))  # free once the holder closes it
    with locked(path):
        with pytest.raises(LockHeld):
            take_lock(path)
    os.close(take_lock(path))


def test_a_lock_file_that_is_a_link_is_never_opened(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").write_bytes(b"")
    (tmp_path / "lock").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OSError):
        take_lock(tmp_path / "lock")
    with pytest.raises(OSError), locked(tmp_path / "lock"):
        pass
