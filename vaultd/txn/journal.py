"""The transaction journal: ``<vault>/.vaultd/journal/<op-id>/``.

A journal is built in ``<op-id>.tmp/`` (originals, then the manifest, each fsynced) and renamed
into place, so it appears whole or not at all; only then is a target touched. The ``committed``
marker is written after the last target. A kept committed journal is what ``op.undo`` reverses.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import msgspec

from vaultd.fsio import fsync_dir, replace, write_durable
from vaultd.txn.plan import Plan

JOURNAL = ".vaultd/journal"
MANIFEST = "manifest.json"
COMMITTED = "committed"


class Entry(msgspec.Struct, kw_only=True):
    path: str
    before_sha: str | None
    after_sha: str | None
    original: str | None  #: the journal file holding the bytes before, when the file existed
    mode: int | None = None  #: its permission bits then, so a rollback restores them too


class Manifest(msgspec.Struct, kw_only=True):
    op_id: str
    op: str
    created: float  #: Unix time
    channel: str
    summary: str
    entries: list[Entry]
    undoes: str | None = None  #: the op id this operation reversed


_decoder = msgspec.json.Decoder(Manifest)


def journal_root(vault: Path) -> Path:
    return vault / JOURNAL


def write_journal(vault: Path, op_id: str, plan: Plan, channel: str, undoes: str | None = None) -> Path:
    """Make the journal durable before any target is touched; returns its folder."""
    root = journal_root(vault)
    if not root.is_dir():
        # A journal folder that a power loss can take away protects nothing: make its name
        # durable in .vaultd/, and .vaultd/ in the vault, before the first journal is written.
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        fsync_dir(root.parent)
        fsync_dir(vault)
    building = root / f"{op_id}.tmp"
    building.mkdir(mode=0o700)
    try:
        return _fill(vault, root, building, op_id, plan, channel, undoes)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        shutil.rmtree(root / op_id, ignore_errors=True)  # renamed, but its folder fsync failed
        raise


def _fill(vault: Path, root: Path, building: Path, op_id: str, plan: Plan, channel: str,
          undoes: str | None) -> Path:
    entries = []
    for i, change in enumerate(plan.effective()):
        original = None
        if change.before is not None:
            original = f"orig-{i}"
            write_durable(building / original, change.before)
        entries.append(Entry(path=change.path, before_sha=change.before_sha, after_sha=change.after_sha,
                             original=original, mode=change.before_mode))
    manifest = Manifest(op_id=op_id, op=plan.op, created=time.time(), channel=channel, summary=plan.summary,
                        entries=entries, undoes=undoes)
    write_durable(building / MANIFEST, msgspec.json.encode(manifest))
    fsync_dir(building)
    final = root / op_id
    replace(building, final)
    fsync_dir(root)
    return final


def mark_committed(folder: Path) -> None:
    """An empty marker: its existence is the commit, so only its folder entry needs syncing."""
    os.close(os.open(folder / COMMITTED, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    fsync_dir(folder)


def is_committed(folder: Path) -> bool:
    return (folder / COMMITTED).exists()


def read_manifest(folder: Path) -> Manifest:
    return _decoder.decode((folder / MANIFEST).read_bytes())


def original_bytes(folder: Path, entry: Entry) -> bytes | None:
    return None if entry.original is None else (folder / entry.original).read_bytes()


def remove_journal(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    fsync_dir(folder.parent)


def journals(vault: Path) -> list[Path]:
    """Every journal folder, oldest first (op ids sort by time)."""
    root = journal_root(vault)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir())


_sizes: dict[Path, int] = {}  #: committed journals never change, so each is measured once


def _size(folder: Path) -> int:
    if folder not in _sizes:
        with os.scandir(folder) as entries:
            _sizes[folder] = sum(e.stat(follow_symlinks=False).st_size for e in entries if e.is_file())
    return _sizes[folder]


def prune(vault: Path, keep: int, max_bytes: int) -> int:
    """Drop the oldest committed journals beyond ``keep`` or ``max_bytes``; returns how many."""
    committed = [p for p in journals(vault) if not p.name.endswith(".tmp") and is_committed(p)]
    total, dropped = sum(_size(p) for p in committed), 0
    while committed and (len(committed) > keep or total > max_bytes):
        oldest = committed.pop(0)
        total -= _sizes.pop(oldest, 0)
        shutil.rmtree(oldest, ignore_errors=True)
        dropped += 1
    return dropped
