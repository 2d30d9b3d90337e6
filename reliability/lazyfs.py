"""A FUSE passthrough filesystem that forgets what was not made durable, as power loss does.

LazyFS is the reference; this is the same idea in a few hundred lines of Python (mfusepy on
libfuse 3). Every call passes through to a backing folder, which is the live state. Beside it the
filesystem keeps the *durable* state, changed only by the calls that make things durable:

- ``fsync``/``fdatasync`` of a file records its bytes and mode at that moment;
- ``fsync`` of a folder records its entries (name -> file identity) at that moment.

Nothing else is durable: data written and not fsynced, and creates, renames and unlinks not
followed by an fsync of their folder, are lost in a crash. Identities are our own (a new one per
create), so a reused inode number cannot make an old name point at new data.

When the filesystem is unmounted it writes the durable state, as a plain folder tree, to
``--durable-out``. A crash is: SIGKILL the daemon, unmount, and mount the durable tree instead of
the live one; a clean stop keeps the live one.

    python -m reliability.lazyfs BACKING MOUNTPOINT --durable-out DIR
"""

from __future__ import annotations

import argparse
import errno
import itertools
import os
import stat
from pathlib import Path
from typing import Any

import mfusepy  # type: ignore[import-untyped]  # mfusepy ships no type information

_STAT_KEYS = ("st_mode", "st_nlink", "st_uid", "st_gid", "st_size", "st_atime", "st_mtime", "st_ctime")


class LossyFS(mfusepy.Operations):  # type: ignore[misc]  # an untyped base class is Any to mypy
    use_ns = True

    def __init__(self, backing: Path) -> None:
        self.root = str(backing)
        self._new_id = itertools.count(1)
        self.ids: dict[int, int] = {}  #: backing inode -> identity
        self.kinds: dict[int, str] = {}  #: identity -> "f", "d" or "l"
        self.files: dict[int, tuple[bytes, int, int]] = {}  #: durable (bytes, mode, mtime_ns)
        self.dirs: dict[int, dict[str, int]] = {}  #: durable entries of a folder
        self.dir_modes: dict[int, int] = {}
        self.links: dict[int, str] = {}
        self.syncs = {"fsync": 0, "fsyncdir": 0}
        self.root_id = self._adopt(self.root)

    # -- the durable model --------------------------------------------------------------------
    def _full(self, path: str) -> str:
        return self.root + path

    def _ident(self, st: os.stat_result, fresh: bool = False) -> int:
        if fresh or st.st_ino not in self.ids:
            self.ids[st.st_ino] = next(self._new_id)
            ident = self.ids[st.st_ino]
            self.kinds[ident] = "d" if stat.S_ISDIR(st.st_mode) else "l" if stat.S_ISLNK(st.st_mode) else "f"
        return self.ids[st.st_ino]

    def _adopt(self, full: str) -> int:
        """Everything present at mount time is durable."""
        st = os.lstat(full)
        ident = self._ident(st, fresh=True)
        if stat.S_ISDIR(st.st_mode):
            self.dir_modes[ident] = stat.S_IMODE(st.st_mode)
            self.dirs[ident] = {name: self._adopt(os.path.join(full, name)) for name in os.listdir(full)}
        elif stat.S_ISLNK(st.st_mode):
            self.links[ident] = os.readlink(full)
        else:
            with open(full, "rb") as fh:
                self.files[ident] = (fh.read(), stat.S_IMODE(st.st_mode), st.st_mtime_ns)
        return ident

    def materialize(self, dest: Path) -> None:
        """Write the durable state as a folder tree at ``dest``."""
        self._build(self.root_id, dest)

    def _build(self, ident: int, dest: Path) -> None:
        dest.mkdir(mode=self.dir_modes.get(ident, 0o755))
        for name, child in self.dirs.get(ident, {}).items():
            target = dest / name
            kind = self.kinds.get(child, "f")
            if kind == "d":
                self._build(child, target)
            elif kind == "l":
                os.symlink(self.links.get(child, ""), target)
            else:
                data, mode, mtime = self.files.get(child, (b"", 0o600, 0))
                target.write_bytes(data)
                os.chmod(target, mode)
                if mtime:
                    os.utime(target, ns=(mtime, mtime))

    # -- durability calls ---------------------------------------------------------------------
    def fsync(self, path: str, datasync: int, fh: int) -> int:
        st = os.fstat(fh)
        fd = os.open(f"/proc/self/fd/{fh}", os.O_RDONLY)
        try:
            data = os.pread(fd, st.st_size, 0)
        finally:
            os.close(fd)
        os.fsync(fh)
        self.files[self._ident(st)] = (data, stat.S_IMODE(st.st_mode), st.st_mtime_ns)
        self.syncs["fsync"] += 1
        return 0

    def fsyncdir(self, path: str, datasync: int, fh: int) -> int:
        full = self._full(path)
        st = os.lstat(full)
        ident = self._ident(st)
        entries = {}
        for name in os.listdir(full):
            cst = os.lstat(os.path.join(full, name))
            child = self._ident(cst)
            entries[name] = child
            if stat.S_ISLNK(cst.st_mode):
                self.links[child] = os.readlink(os.path.join(full, name))
        self.dirs[ident] = entries
        self.dir_modes[ident] = stat.S_IMODE(st.st_mode)
        self.syncs["fsyncdir"] += 1
        return 0

    # -- creating calls give a new identity ---------------------------------------------------
    def create(self, path: str, mode: int, flags: int = os.O_WRONLY) -> int:
        full = self._full(path)
        existed = os.path.lexists(full)
        fd = os.open(full, flags | os.O_CREAT, mode)
        if not existed:
            self._ident(os.fstat(fd), fresh=True)
        return fd

    def mkdir(self, path: str, mode: int) -> int:
        full = self._full(path)
        os.mkdir(full, mode)
        self._ident(os.lstat(full), fresh=True)
        return 0

    def symlink(self, target: str, source: str) -> int:
        full = self._full(target)
        os.symlink(source, full)
        self._ident(os.lstat(full), fresh=True)
        return 0

    # -- plain passthrough --------------------------------------------------------------------
    def getattr(self, path: str, fh: int | None = None) -> dict[str, Any]:
        st = os.fstat(fh) if fh is not None and path is None else os.lstat(self._full(path))
        attrs: dict[str, Any] = {k: getattr(st, k) for k in _STAT_KEYS}
        for k in ("st_atime", "st_mtime", "st_ctime"):
            attrs[k] = getattr(st, k + "_ns")
        return attrs

    def access(self, path: str, amode: int) -> int:
        if not os.access(self._full(path), amode):
            raise mfusepy.FuseOSError(errno.EACCES)
        return 0

    def readdir(self, path: str, fh: int) -> list[str]:
        return [".", "..", *os.listdir(self._full(path))]

    def readlink(self, path: str) -> str:
        return os.readlink(self._full(path))

    def chmod(self, path: str, mode: int) -> int:
        os.chmod(self._full(path), mode)
        return 0

    def chown(self, path: str, uid: int, gid: int) -> int:
        os.lchown(self._full(path), uid, gid)
        return 0

    def utimens(self, path: str, times: tuple[int, int] | None = None) -> int:
        os.utime(self._full(path), ns=times) if times else os.utime(self._full(path))
        return 0

    def rename(self, old: str, new: str) -> int:
        os.rename(self._full(old), self._full(new))
        return 0

    def unlink(self, path: str) -> int:
        os.unlink(self._full(path))
        return 0

    def rmdir(self, path: str) -> int:
        os.rmdir(self._full(path))
        return 0

    def open(self, path: str, flags: int) -> int:
        return os.open(self._full(path), flags)

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        return os.pread(fh, size, offset)

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        return os.pwrite(fh, data, offset)

    def truncate(self, path: str, length: int, fh: int | None = None) -> int:
        if fh is not None:
            os.ftruncate(fh, length)
        else:
            os.truncate(self._full(path), length)
        return 0

    def flush(self, path: str, fh: int) -> int:
        return 0

    def release(self, path: str, fh: int) -> int:
        os.close(fh)
        return 0

    def opendir(self, path: str) -> int:
        return 0

    def releasedir(self, path: str, fh: int) -> int:
        return 0

    def statfs(self, path: str) -> dict[str, int]:
        sv = os.statvfs(self._full(path))
        keys = ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag", "f_frsize", "f_namemax")
        return {k: getattr(sv, k) for k in keys}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m reliability.lazyfs", description=__doc__.split("\n\n")[0])
    ap.add_argument("backing", type=Path)
    ap.add_argument("mountpoint", type=Path)
    ap.add_argument("--durable-out", type=Path, required=True, help="where the durable state is written on unmount")
    args = ap.parse_args(argv)
    fs = LossyFS(args.backing.resolve())
    mfusepy.FUSE(fs, str(args.mountpoint), foreground=True, nothreads=True, hard_remove=True, default_permissions=True, fsname="lazyfs")
    fs.materialize(args.durable_out)
    print(f"durable state written to {args.durable_out} (fsync {fs.syncs['fsync']}, fsyncdir {fs.syncs['fsyncdir']})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
