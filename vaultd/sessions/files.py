"""Small JSON records vaultd keeps for itself: written whole by rename, read bounded, never
through a link. A record is a convenience for people and agents, not a journal: a crash may lose
its last change, never leave half of one."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, TypeVar

import msgspec

from vaultd.fsio import ReadRefused, is_temp_name, read_regular, write_atomic

R = TypeVar("R")

STALE_TEMP_S = 600.0
"""A temp file older than this in a record folder is a write that died before its rename (a
record is written and renamed in milliseconds): it is removed when the folder is read."""

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


def ensure_folder(folder: Path) -> None:
    """Make ``folder`` (0700) when absent; refuse one that is a link or not a folder.

    Raises:
        OSError: it cannot be made, or what is there is not a plain folder.
    """
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        return
    import stat

    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(f"{folder} is not a folder of vaultd's own")


def write_record(path: Path, data: bytes) -> None:
    """Replace the record at ``path`` whole (0600): the new bytes are written to a temp file and
    fsynced before the rename, so a crash at any point leaves the old record or the new one, never
    an empty or torn file (a rename that reaches the disk before its file's data would).

    The folder is not synced: a crash may lose the rename, which is the record's last change,
    as the module allows; a sync per record would cost every agent call that updates one.

    Raises:
        OSError: the record cannot be written; the old one is left as it was, with no temp file.
    """
    write_atomic(path, data, 0o600, sync_dir=False)


def read_records(
    folder: Path, suffix: str, limit: int, decode: Callable[[bytes], R], id_of: Callable[[R], str]
) -> tuple[dict[str, R], list[str]]:
    """Every record in ``folder`` by id, and the names of files that did not decode. A file
    counts only under its own record's name (``<id><suffix>``), so a copy or a renamed file is
    never read as the record it holds; one over ``limit`` or a link is passed over. A temp file a
    crashed write left (older than :data:`STALE_TEMP_S`) is removed: the folder's only writer is
    this daemon, and nothing else would."""
    found: dict[str, R] = {}
    unreadable: list[str] = []
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        names = []
    for name in names:
        if is_temp_name(name):
            _remove_if_stale(folder / name)
            continue
        if not name.endswith(suffix):
            continue
        data = read_record(folder / name, limit)
        if data is None:
            continue
        try:
            record = decode(data)
        except msgspec.DecodeError:
            unreadable.append(name)
            continue
        if f"{id_of(record)}{suffix}" == name:
            found[id_of(record)] = record
    return found, unreadable


def _remove_if_stale(path: Path) -> None:
    """Remove a temp file a crashed write left; a young one may be a write under way."""
    try:
        st = os.lstat(path)
        if time.time() - st.st_mtime > STALE_TEMP_S:
            os.unlink(path)
    except OSError:
        pass


def read_record(path: Path, limit: int) -> bytes | None:
    """The file's bytes, or None when it is absent, a link, or over ``limit``."""
    try:
        data, _ = read_regular(path, limit)
    except (FileNotFoundError, ReadRefused):
        return None
    return data


def remove_record(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
