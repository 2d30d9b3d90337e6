"""Journal retention: the committed journals kept for ``op.undo`` and audit, and dropping the oldest.

Pruning is housekeeping that follows every acknowledged write, so it must cost little in a vault
with hundreds of journals: a committed journal never changes, so each one's size and seal are
checked once and remembered here for as long as it is kept.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import structlog

from vaultd.txn import seal
from vaultd.txn.journal import UntrustedJournal, is_committed, journals, open_journal, retire

if TYPE_CHECKING:
    from pathlib import Path

log = structlog.get_logger("vaultd.txn")


def _keep_override() -> int | None:
    """``VAULTD_JOURNAL_KEEP`` lowers how many committed journals are kept (reliability runs and
    tests prune quickly with it); read once, when the daemon loads this module."""
    raw = os.environ.get("VAULTD_JOURNAL_KEEP", "")
    return int(raw) if raw.isdigit() and int(raw) >= 1 else None


KEEP_OVERRIDE = _keep_override()


_sizes: dict[Path, int] = {}  #: committed journals never change, so each is measured once
_sealed: set[Path] = set()  #: committed journals already checked by open_journal


def _size(folder: Path) -> int:
    if folder not in _sizes:
        with os.scandir(folder) as entries:
            _sizes[folder] = sum(e.stat(follow_symlinks=False).st_size for e in entries if e.is_file())
    return _sizes[folder]


def _is_own_committed(folder: Path, key: bytes) -> bool:
    if folder in _sealed:
        return True
    if not is_committed(folder):
        return False
    try:
        open_journal(folder, key)
    except UntrustedJournal:
        return False
    _sealed.add(folder)
    return True


def prune(vault: Path, keep: int, max_bytes: int) -> int:
    """Drop the oldest committed journals beyond ``keep`` or ``max_bytes``; returns how many.

    Only this daemon's sealed journals are counted and dropped, and never the newest: it
    carries the vault's op id clock. Pruning is housekeeping after an acknowledged operation, so
    an I/O error stops it and is logged, never raised.
    """
    key = seal.installed_key()
    keep = max(1, min(keep, KEEP_OVERRIDE or keep))
    committed = [p for p in journals(vault) if _is_own_committed(p, key)]
    total, dropped = sum(_size(p) for p in committed), 0
    while len(committed) > 1 and (len(committed) > keep or total > max_bytes):
        oldest = committed.pop(0)
        total -= _sizes.pop(oldest, 0)
        _sealed.discard(oldest)
        try:
            retire(key, oldest, "during-prune")
        except OSError as exc:
            log.warning("journal pruning stopped", op_id=oldest.name, error=exc.strerror or str(exc))
            break
        dropped += 1
    return dropped
