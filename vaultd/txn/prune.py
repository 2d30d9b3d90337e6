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
from vaultd.txn.journal import UntrustedJournal, is_committed, journal_names, journal_root, open_journal, retire

if TYPE_CHECKING:
    from pathlib import Path

log = structlog.get_logger("vaultd.txn")


def _keep_override() -> int | None:
    """``VAULTD_JOURNAL_KEEP`` lowers how many committed journals are kept (reliability runs and
    tests prune quickly with it); read once, when the daemon loads this module."""
    raw = os.environ.get("VAULTD_JOURNAL_KEEP", "")
    return int(raw) if raw.isdigit() and int(raw) >= 1 else None


KEEP_OVERRIDE = _keep_override()


#: Keyed by (journal folder, op id). Committed journals never change, so each is measured and
#: checked once; the keys are strings because prune runs after every write over every kept journal.
_sizes: dict[tuple[str, str], int] = {}
_sealed: set[tuple[str, str]] = set()  #: committed journals already checked by open_journal


def _size(root: Path, name: str) -> int:
    key = (str(root), name)
    if key not in _sizes:
        with os.scandir(root / name) as entries:
            _sizes[key] = sum(e.stat(follow_symlinks=False).st_size for e in entries if e.is_file())
    return _sizes[key]


def _is_own_committed(root: Path, name: str, seal_key: bytes) -> bool:
    if (str(root), name) in _sealed:
        return True
    folder = root / name
    if not is_committed(folder):
        return False
    try:
        open_journal(folder, seal_key)
    except UntrustedJournal:
        return False
    _sealed.add((str(root), name))
    return True


def prune(vault: Path, keep: int, max_bytes: int) -> int:
    """Drop the oldest committed journals beyond ``keep`` or ``max_bytes``; returns how many.

    Only this daemon's sealed journals are counted and dropped, and never the newest: it
    carries the vault's op id clock. Pruning is housekeeping after an acknowledged operation, so
    an I/O error stops it and is logged, never raised.
    """
    seal_key = seal.installed_key()
    keep = max(1, min(keep, KEEP_OVERRIDE or keep))
    root = journal_root(vault)
    committed = [n for n in journal_names(vault) if _is_own_committed(root, n, seal_key)]
    total, dropped = sum(_size(root, n) for n in committed), 0
    while len(committed) > 1 and (len(committed) > keep or total > max_bytes):
        oldest = committed.pop(0)
        total -= _sizes.pop((str(root), oldest), 0)
        _sealed.discard((str(root), oldest))
        try:
            retire(seal_key, root / oldest, "during-prune")
        except OSError as exc:
            log.warning("journal pruning stopped", op_id=oldest, error=exc.strerror or str(exc))
            break
        dropped += 1
    return dropped
