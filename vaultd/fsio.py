"""The filesystem primitives every daemon write goes through: temp file, fsync, rename, folder fsync.

Keeping them in one module gives the write path one place to be audited and, later, one seam
for fault injection. Temp names start with ``.vaultd-`` and end with ``.tmp``, a pattern the
scanner and the watcher skip, so no user file can collide with one and no reader sees one.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

TEMP_PREFIX = ".vaultd-"
TEMP_SUFFIX = ".tmp"


def temp_name_for(target: Path) -> Path:
    return target.parent / f"{TEMP_PREFIX}{secrets.token_hex(8)}{TEMP_SUFFIX}"


def is_temp_name(name: str) -> bool:
    return name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX)


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(target: Path, data: bytes, mode: int = 0o600) -> None:
    """Replace ``target`` with ``data`` so a crash leaves either the old or the new bytes."""
    tmp = temp_name_for(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(target.parent)
