"""Listing a vault's files: what the index holds, what it skips, and why.

Never follows a symlink (a link can point outside the vault or into a loop), never opens a
FIFO or socket (opening a FIFO blocks), and skips the folders that are not notes: the daemon's
own ``.vaultd``, ``.git``, ``.obsidian`` and ``.trash``, at any depth. The daemon's temp files
are skipped by name so a write in progress is never indexed.

A name that is not valid UTF-8 (Linux allows any bytes) is skipped and reported as S07, with its
folder's contents: its ``str`` holds lone surrogates that no reply, log line or SQLite row can
carry. Such a path stays the index's key (it is exact and unique) and is shown as
:func:`shown_path`, the bytes escaped as ``\\xff``.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING

from protocol.issue_codes import IssueCode
from vaultd.fsio import is_temp_name
from vaultd.vault.layout import SKIPPED_DIRS

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@dataclass(frozen=True, slots=True)
class FileStat:
    path: str  #: vault-relative, POSIX separators
    size: int
    mtime_ns: int
    ino: int
    is_note: bool


@dataclass(frozen=True, slots=True)
class SkippedFile:
    path: str
    code: str
    reason: str


def is_valid_name(rel: str) -> bool:
    """False for a path whose bytes were not UTF-8 (``os`` decoded them with surrogateescape)."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_path(rel: str) -> str:
    """``rel`` as replies and logs can carry it: undecodable bytes escaped as ``\\xNN``."""
    return rel if is_valid_name(rel) else os.fsencode(rel).decode("utf-8", "backslashreplace")


def _bad_name(rel: str, is_dir: bool) -> SkippedFile:
    what = "folder name" if is_dir else "file name"
    tail = "; nothing in it is indexed" if is_dir else ""
    return SkippedFile(rel, IssueCode.S07, f"the {what} is not valid UTF-8 ({shown_path(rel)}){tail}; rename it to index it")


def is_note_path(rel: str) -> bool:
    return rel[-3:].lower() == ".md"


def is_ignored(rel: str) -> bool:
    """True for paths the index never looks at (skipped folders, temp files)."""
    parts = rel.split("/")
    return any(p in SKIPPED_DIRS for p in parts[:-1]) or parts[-1] in SKIPPED_DIRS or is_temp_name(parts[-1])


LINK_REASON = "a symbolic link; links are never followed"
NOT_REGULAR_REASON = "not a regular file (FIFO, socket or device)"


def classify(root: Path, rel: str) -> FileStat | SkippedFile | None:
    """Stat one vault-relative path without following symlinks; None when it is gone or a folder."""
    try:
        st = os.lstat(os.path.join(root, rel))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return SkippedFile(rel, IssueCode.S05, f"cannot stat: {exc.strerror}")
    return _from_stat(rel, st)


def _from_stat(rel: str, st: os.stat_result) -> FileStat | SkippedFile | None:
    mode = st.st_mode
    if not is_valid_name(rel):
        return _bad_name(rel, stat.S_ISDIR(mode))
    if stat.S_ISDIR(mode):
        return None
    if stat.S_ISLNK(mode):
        return SkippedFile(rel, IssueCode.S04, LINK_REASON)
    if not stat.S_ISREG(mode):
        return SkippedFile(rel, IssueCode.S06, NOT_REGULAR_REASON)
    return FileStat(rel, st.st_size, st.st_mtime_ns, st.st_ino, is_note_path(rel))


def walk(root: Path, prefix: str = "") -> Iterator[FileStat | SkippedFile]:
    """Every file below ``root/prefix`` (or the vault), depth first, in no particular order."""
    stack = [prefix]
    while stack:
        rel_dir = stack.pop()
        try:
            entries = os.scandir(root / rel_dir if rel_dir else root)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            yield SkippedFile(rel_dir or ".", IssueCode.S05, f"cannot list folder: {exc.strerror}")
            continue
        with entries:
            for entry in entries:
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                if entry.name in SKIPPED_DIRS or is_temp_name(entry.name):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue  # vanished between listing and stat: the watcher will tell us
                if stat.S_ISDIR(st.st_mode) and is_valid_name(entry.name):
                    stack.append(rel)
                    continue
                found = _from_stat(rel, st)
                if found is not None:
                    yield found
