"""Vault files read and written through directory descriptors, never through later path lookups.

A path is looked up again by every system call that takes one, so a folder replaced by a
symbolic link between a check and a write would send the write, rename or unlink outside the
vault. Here the vault root is opened once per operation (:class:`VaultRoot`), every folder below
it is opened one component at a time relative to its parent with ``O_NOFOLLOW | O_DIRECTORY``
(:class:`Folder`), and every read, temp file, rename, unlink, mkdir and folder fsync names one
final component relative to an open descriptor. A component that is a symlink, not a folder, or
that vanished refuses the write with CONFLICT; nothing is written outside the vault.

The fault seam (:mod:`vaultd.faults`) sees the same primitives as :mod:`vaultd.fsio`, in the
same order: ``write``, ``fsync``, ``rename``, ``unlink``, ``fsync-dir``.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vaultd import content_mode, faults
from vaultd.errors import Conflict, InvalidParams, LimitExceeded
from vaultd.fsio import TEMP_PREFIX, TEMP_SUFFIX, ReadRefused, Refusal, read_regular

if TYPE_CHECKING:
    from pathlib import Path
    from types import TracebackType

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True, slots=True)
class Current:
    """A target's bytes and permission bits as they are now."""

    data: bytes
    mode: int


class NotInVault(InvalidParams):
    """A path that names something other than one entry below the vault root."""


def split(rel: str) -> tuple[list[str], str]:
    """The folder components and the file name of a vault-relative path, refusing any that
    could name something other than one entry below the root.

    Raises:
        InvalidParams: INVALID_PARAMS, the path holds a NUL byte.
        NotInVault: INVALID_PARAMS, it is absolute or has an empty, '.' or '..' part.
    """
    if "\x00" in rel:
        raise InvalidParams("a path may not contain a NUL byte")
    parts = rel.split("/")
    if rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise NotInVault(f"{rel!r} is not a vault-relative path")
    return parts[:-1], parts[-1]


class NotAFolder(Conflict):
    """A file stands where the path needs a folder."""


def _refusal(parent_fd: int, name: str, rel: str, exc: OSError) -> Conflict:
    """Why ``name`` could not be opened as a folder. Linux answers ENOTDIR, not ELOOP, for a
    link opened with ``O_NOFOLLOW | O_DIRECTORY``, so the entry itself is asked what it is."""
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        try:
            is_link = stat.S_ISLNK(os.stat(name, dir_fd=parent_fd, follow_symlinks=False).st_mode)
        except OSError:
            is_link = False
        if is_link or exc.errno == errno.ELOOP:
            return Conflict(f"{rel} is a symbolic link; vaultd never writes through symlinks")
        return NotAFolder(f"{rel} is not a folder; vaultd writes only inside the vault's own folders")
    return Conflict(f"{rel} could not be opened as a folder ({exc.strerror}); read again, then retry")


class Folder:
    """One open folder of the vault; every method names an entry relative to it."""

    def __init__(self, fd: int, rel: str) -> None:
        self.fd = fd
        self.rel = rel  #: vault-relative ('' for the root), for messages

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Folder:
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def _name(self, name: str) -> str:
        return f"{self.rel}/{name}" if self.rel else name

    def read(self, name: str, limit: int) -> Current | None:
        """The entry's bytes and mode (None when absent), never through a symlink, bounded.

        Raises:
            Conflict: CONFLICT, the entry is a symbolic link or not a regular file.
            LimitExceeded: LIMIT, it is over ``limit`` bytes.
        """
        try:
            data, st = read_regular(name, limit, dir_fd=self.fd)
        except FileNotFoundError:
            return None
        except ReadRefused as exc:
            if exc.refusal is Refusal.LINK:
                raise Conflict(f"{self._name(name)} is a symbolic link; vaultd never writes through symlinks") from exc
            if exc.refusal is Refusal.NOT_REGULAR:
                raise Conflict(f"{self._name(name)} is not a regular file") from exc
            size = "more than" if exc.size is None else f"{exc.size} bytes,"
            raise LimitExceeded(f"{self._name(name)} is {size} over the {limit}-byte limit") from exc
        return Current(data, stat.S_IMODE(st.st_mode))

    def write_temp(self, data: bytes, mode: int) -> TempFile:
        """A new temp file in this folder holding ``data`` with ``mode``, fsynced and still open,
        so its mode can be corrected up to the rename without another lookup."""
        name = f"{TEMP_PREFIX}{secrets.token_hex(8)}{TEMP_SUFFIX}"
        fd = os.open(name, _TEMP_FLAGS, 0o600, dir_fd=self.fd)
        temp = TempFile(self, name, fd)
        try:
            os.fchmod(fd, mode)  # explicit: the daemon's own umask is 077, the vault's is not
            faults.io("write")
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            faults.io("fsync")
            os.fsync(fd)
        except BaseException:
            temp.discard()
            raise
        return temp

    def rename(self, src: str, dst: str) -> None:
        faults.io("rename")
        os.rename(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def unlink(self, name: str) -> None:
        faults.io("unlink")
        os.unlink(name, dir_fd=self.fd)

    def sync(self) -> None:
        fsync_folder(self.fd)

    def names(self) -> list[str]:
        return os.listdir(self.fd)

    def child(self, name: str, *, create: bool) -> Folder:
        """The sub-folder ``name``, made (with the user's folder mode, its name made durable)
        when absent and ``create`` is set.

        Raises:
            FileNotFoundError: absent and ``create`` is off.
            Conflict: (CONFLICT) a link, or a file where a folder should be (:class:`NotAFolder`).
        """
        rel = self._name(name)
        try:
            return Folder(os.open(name, _DIR_FLAGS, dir_fd=self.fd), rel)
        except FileNotFoundError:
            if not create:
                raise
        except OSError as exc:
            raise _refusal(self.fd, name, rel, exc) from exc
        try:
            os.mkdir(name, 0o700, dir_fd=self.fd)
        except FileExistsError:
            made = False  # made meanwhile by someone else: opened below like any other, never followed
        else:
            made = True
            self.sync()
        try:
            sub = Folder(os.open(name, _DIR_FLAGS, dir_fd=self.fd), rel)
        except OSError as exc:
            raise _refusal(self.fd, name, rel, exc) from exc
        if made:
            os.fchmod(sub.fd, content_mode.new_folder_mode())  # the process umask (077) masked mkdir's
        return sub


class TempFile:
    """A temp file this operation wrote, open until it is renamed into place or discarded."""

    def __init__(self, folder: Folder, name: str, fd: int) -> None:
        self.folder, self.name, self.fd = folder, name, fd

    def set_mode(self, mode: int) -> None:
        os.fchmod(self.fd, mode)

    def rename_over(self, target: str) -> None:
        self.folder.rename(self.name, target)
        self._close()

    def discard(self) -> None:
        self._close()
        try:
            os.unlink(self.name, dir_fd=self.folder.fd)
        except FileNotFoundError:
            pass

    def _close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class VaultRoot(Folder):
    """The vault's root folder, opened once per operation; the anchor of every lookup below it."""

    def __init__(self, root: Path) -> None:
        super().__init__(os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC), "")

    def __enter__(self) -> VaultRoot:
        return self

    def parent(self, rel: str, *, create: bool = False) -> tuple[Folder, str]:
        """The open folder holding ``rel`` and its file name. Raises FileNotFoundError when a
        folder is missing and ``create`` is off; CONFLICT when one is a symlink or not a folder."""
        folders, name = split(rel)
        current: Folder = Folder(os.dup(self.fd), "")
        try:
            for part in folders:
                nxt = current.child(part, create=create)
                current.close()
                current = nxt
        except BaseException:
            current.close()
            raise
        return current, name

    def read_file(self, rel: str, limit: int) -> Current | None:
        """``rel`` now, or None when it or a folder on its way is absent (or a file stands
        where a folder would be: then nothing can be at ``rel``). A link on the way is refused.
        A path that leaves the vault reads as absent, so the planner goes on to the path rules,
        which refuse it by name (V04); no write can reach it."""
        try:
            folder, name = self.parent(rel)
        except (FileNotFoundError, NotAFolder, NotInVault):
            return None
        with folder:
            return folder.read(name, limit)


def fsync_folder(fd: int) -> None:
    """Make a folder's entries durable; the seam the lost-writes negative control removes."""
    faults.io("fsync-dir")
    os.fsync(fd)
