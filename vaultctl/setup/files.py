"""Reading a host's config file defensively and replacing it atomically.

A host file is someone else's file: we read it only if it is a plain regular file of sane size,
and we replace it the way a crash cannot half-write it (temp file in the same folder, fsync,
rename, fsync the folder), keeping its mode. Before the rename we look again: if the host (or the
user) wrote the file meanwhile, we stop instead of clobbering their write.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vaultctl.setup.errors import DiskError, FileChanged, FileTooLarge, UnsafeFile

if TYPE_CHECKING:
    from pathlib import Path

MAX_FILE_BYTES = 4 * 1024 * 1024
"""Host configs are small; anything larger is not one we should be rewriting."""

NEW_FILE_MODE = 0o600
"""Host files may hold tokens, so a file setup creates is private."""

_TEMP_SUFFIX = ".vaultd-tmp"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The bytes of a host file and the identity they were read under."""

    data: bytes
    mode: int
    uid: int
    gid: int
    identity: tuple[int, int, int, int]  #: (dev, ino, size, mtime_ns): did it change since?


def read(path: Path) -> Snapshot | None:
    """Read a host file, or None when there is none.

    Raises:
        UnsafeFile: POLICY, a symbolic link, a non-regular file, hard links, or no permission.
        FileTooLarge: LIMIT, over MAX_FILE_BYTES.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _os_error(exc, path, "read") from exc
    _check(st, path)
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _os_error(exc, path, "read") from exc
    try:
        st = os.fstat(fd)  # the file we opened, not the one we looked at
        _check(st, path)
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            total += len(chunk)
            if total > MAX_FILE_BYTES:
                raise _too_large(path)
    except OSError as exc:
        raise _os_error(exc, path, "read") from exc
    finally:
        os.close(fd)
    return Snapshot(b"".join(chunks), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, _identity(st))


def write(path: Path, data: bytes, *, before: Snapshot | None) -> None:
    """Replace (or create) ``path`` with ``data`` atomically, keeping the old file's mode.

    Raises:
        FileChanged: CONFLICT, the file is no longer what ``before`` describes.
        UnsafeFile: POLICY, no permission to write there.
    """
    folder = path.parent
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=_TEMP_SUFFIX, dir=folder)
    except OSError as exc:
        raise _os_error(exc, path, "write") from exc
    try:
        try:
            os.fchmod(fd, before.mode if before else NEW_FILE_MODE)
            if before and (before.uid, before.gid) != (os.geteuid(), os.getegid()):
                _keep_owner(fd, before)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        _expect_unchanged(path, before)
        if before is None:
            _create(tmp, path)
        else:
            os.replace(tmp, path)
    except BaseException as exc:
        _unlink_quietly(tmp)
        if isinstance(exc, OSError):
            raise _os_error(exc, path, "write") from exc
        raise
    _fsync_folder(folder)


def remove(path: Path, *, before: Snapshot) -> None:
    """Delete a file setup created, if it is still exactly what ``before`` describes."""
    _expect_unchanged(path, before)
    try:
        os.unlink(path)
    except OSError as exc:
        raise _os_error(exc, path, "remove") from exc
    _fsync_folder(path.parent)


def make_folder(folder: Path) -> None:
    """Create ``folder`` and any missing parents, each private (0700) like the host would."""
    missing: list[Path] = []
    probe = folder
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for each in reversed(missing):
        try:
            os.mkdir(each, 0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise _os_error(exc, each, "create") from exc


def _check(st: os.stat_result, path: Path) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeFile(
            f"{path} is a symbolic link; setup does not edit through links. "
            "Add the vaultd entry to the file it points at by hand, or replace the symlink with a file.",
            path=path,
        )
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeFile(
            f"{path} is not a regular file (a folder, FIFO, socket or device); move it aside and run setup again.",
            path=path,
        )
    if st.st_nlink > 1:
        raise UnsafeFile(
            f"{path} has {st.st_nlink} hard links; replacing it would split them. Add the vaultd entry by hand.",
            path=path,
        )
    if st.st_size > MAX_FILE_BYTES:
        raise _too_large(path)


def _too_large(path: Path) -> FileTooLarge:
    return FileTooLarge(
        f"{path} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; setup will not rewrite it. Add the vaultd entry by hand.",
        path=path,
    )


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _expect_unchanged(path: Path, before: Snapshot | None) -> None:
    try:
        now: tuple[int, int, int, int] | None = _identity(os.lstat(path))
    except FileNotFoundError:
        now = None
    if now != (before.identity if before else None):
        raise FileChanged(
            f"{path} changed while setup was editing it (perhaps the host wrote it); nothing was written. Run the command again.",
            path=path,
        )


def _create(tmp: str, path: Path) -> None:
    """Put a new file in place without clobbering one that appeared since we looked."""
    try:
        os.link(tmp, path)
    except FileExistsError as exc:
        raise FileChanged(
            f"{path} appeared while setup was creating it (perhaps the host wrote it); nothing was written. Run the command again.",
            path=path,
        ) from exc
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
            raise
        os.replace(tmp, path)  # a file system without hard links: the check above must do
        return
    os.unlink(tmp)


def _keep_owner(fd: int, before: Snapshot) -> None:
    # Only root can give a file away; for anyone else the new file is simply theirs.
    try:
        os.fchown(fd, before.uid, before.gid)
    except PermissionError:
        pass


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _os_error(exc: OSError, path: Path, verb: str) -> UnsafeFile | DiskError:
    reason = exc.strerror or type(exc).__name__
    if exc.errno == errno.ELOOP:
        return UnsafeFile(f"{path} is a symbolic link; setup does not edit through links.", path=path)
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return UnsafeFile(f"setup may not {verb} {path} ({reason}); check its permissions.", path=path)
    if exc.errno in (errno.ENOTDIR, errno.EISDIR, errno.ENXIO):
        return UnsafeFile(f"setup cannot {verb} {path} ({reason}); is a folder in the way?", path=path)
    return DiskError(f"could not {verb} {path}: {reason}", path=path)
