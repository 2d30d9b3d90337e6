"""The filesystem primitives for the daemon's own files (journal, config, log): temp file, fsync,
rename, folder fsync, a bounded read that never follows a link, and lock files. Vault targets go
through :mod:`vaultd.txn.dirfd` instead, which binds every step to directory descriptors; both
share the temp names, the bounded read and the fault seam (:mod:`vaultd.faults`). Temp names start
with ``.vaultd-`` and end with ``.tmp``, a pattern the scanner and the watcher skip, so no user
file can collide with one and no reader sees one.
"""

from __future__ import annotations

import enum
import errno
import fcntl
import os
import secrets
import stat
from contextlib import contextmanager
from typing import TYPE_CHECKING

from vaultd import faults

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

TEMP_PREFIX = ".vaultd-"
TEMP_SUFFIX = ".tmp"


def temp_name_for(target: Path) -> Path:
    return target.parent / f"{TEMP_PREFIX}{secrets.token_hex(8)}{TEMP_SUFFIX}"


def is_temp_name(name: str) -> bool:
    return name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX)


def fsync_dir(folder: Path) -> None:
    faults.io("fsync-dir")
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_durable(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Create ``path`` (which must not exist) with ``data``, fsynced; the folder is not synced."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        faults.io("write")
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        faults.io("fsync")
        os.fsync(fd)
    finally:
        os.close(fd)


def replace(src: Path, dst: Path) -> None:
    faults.io("rename")
    os.replace(src, dst)


def write_atomic(target: Path, data: bytes, mode: int = 0o600, *, sync_dir: bool = True) -> None:
    """Replace ``target`` with ``data`` so a crash leaves either the old or the new bytes."""
    tmp = temp_name_for(target)
    try:
        write_durable(tmp, data, mode)
        replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if sync_dir:
        fsync_dir(target.parent)


# -- reading a regular file, bounded, never through a symlink ------------------------------------

_READ_CHUNK = 1 << 16  #: what each further read asks for, once a file is past its status size
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class Refusal(enum.Enum):
    """Why :func:`read_regular` would not read a file; each caller words its own message."""

    LINK = "a symbolic link"
    NOT_REGULAR = "not a regular file"  #: a folder, FIFO, socket or device (O_NONBLOCK: a FIFO never blocks)
    TOO_BIG = "over the limit"


class ReadRefused(Exception):
    def __init__(self, refusal: Refusal, size: int | None = None) -> None:
        super().__init__(refusal.value)
        self.refusal = refusal
        #: for TOO_BIG: the size the file had when opened; None when it grew past the limit while read
        self.size = size


@contextmanager
def opened_regular(
    path: str | Path, *, dir_fd: int | None = None, check: Callable[[os.stat_result], None] | None = None
) -> Iterator[tuple[int, os.stat_result]]:
    """The open descriptor and status of the regular file at ``path``, closed on leaving.

    Opened without following a symlink and without blocking, checked on the open descriptor, so
    what is checked is what is read. ``check`` sees the status before anything is read and may
    raise. For a reader that decides from a file's first bytes how much more to read.

    Raises:
        FileNotFoundError: nothing is there.
        ReadRefused: a symlink or not a regular file.
        OSError: any other reason it cannot be opened.
    """
    try:
        fd = os.open(path, _READ_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ReadRefused(Refusal.LINK) from exc
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ReadRefused(Refusal.NOT_REGULAR)
        if check is not None:
            check(st)
        yield fd, st
    finally:
        os.close(fd)


def read_bounded(fd: int, st: os.stat_result, limit: int) -> bytes:
    """All the bytes of the file open at ``fd`` (from its current offset), at most ``limit``.

    Raises:
        ReadRefused: TOO_BIG, by its status before anything is read or by what it gave while read.
    """
    if st.st_size > limit:
        raise ReadRefused(Refusal.TOO_BIG, st.st_size)
    # Ask for what the status promised and one byte more (a file that grew shows itself),
    # not for the whole limit: a read of ``limit`` bytes allocates that much every time.
    chunks, size, want = [], 0, st.st_size + 1
    while size <= limit:
        chunk = os.read(fd, min(want, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        want = _READ_CHUNK
    if size > limit:
        raise ReadRefused(Refusal.TOO_BIG)
    return b"".join(chunks)


def read_regular(
    path: str | Path, limit: int, *, dir_fd: int | None = None, check: Callable[[os.stat_result], None] | None = None
) -> tuple[bytes, os.stat_result]:
    """The bytes (at most ``limit``) and the status of the regular file at ``path``, read as
    :func:`opened_regular` opens it.

    Raises:
        FileNotFoundError: nothing is there.
        ReadRefused: a symlink, not a regular file, or over ``limit`` bytes (before or while read).
        OSError: any other reason it cannot be opened or read.
    """
    with opened_regular(path, dir_fd=dir_fd, check=check) as (fd, st):
        return read_bounded(fd, st, limit), st


# -- lock files ---------------------------------------------------------------------------------


class LockHeld(Exception):
    """Another process holds the lock; ``holder`` is what it recorded there (its pid), or ''."""

    def __init__(self, holder: str) -> None:
        super().__init__(f"held by {holder or 'another process'}")
        self.holder = holder


def _open_lock(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an flock on ``path`` (created 0600, never through a symlink) for the block, waiting for it.

    An flock dies with its process, so a killed daemon never leaves one behind.
    """
    fd = _open_lock(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def take_lock(path: Path) -> int:
    """Take an flock on ``path`` without waiting; the descriptor holds it until it is closed.

    Raises:
        LockHeld: another process holds it.
        OSError: the file cannot be opened (a symlink, a folder, no permission).
    """
    fd = _open_lock(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
        os.close(fd)
        raise LockHeld(holder) from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def record_holder(fd: int) -> None:
    """Write this process's pid into a lock file it holds, for whoever finds it held."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
