"""The filesystem primitives for the daemon's own files (journal, config, log): temp file, fsync,
rename, folder fsync. Vault targets go through :mod:`vaultd.txn.dirfd` instead, which binds
every step to directory descriptors; both share the temp names and the fault seam
(:mod:`vaultd.faults`). Temp names start with ``.vaultd-`` and end with ``.tmp``, a pattern
the scanner and the watcher skip, so no user file can collide with one and no reader sees one.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from vaultd import faults

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
