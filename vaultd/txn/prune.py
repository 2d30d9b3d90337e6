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


#: Per journal folder, the journals found to be this daemon's, sealed and committed, with their
#: size in bytes. A committed journal never changes, so each is checked and measured once; names
#: no longer listed (pruned, undone, rolled back) leave at the next prune.
_checked: dict[str, dict[str, int]] = {}


def _own_committed_size(root: Path, name: str, seal_key: bytes) -> int | None:
    """The journal's size when it is this daemon's sealed, committed journal; else None."""
    folder = root / name
    if not is_committed(folder):
        return None
    try:
        open_journal(folder, seal_key)
    except UntrustedJournal:
        return None
    with os.scandir(folder) as entries:
        return sum(e.stat(follow_symlinks=False).st_size for e in entries if e.is_file())


def prune(vault: Path, keep: int, max_bytes: int) -> int:
    """Drop the oldest committed journals beyond ``keep`` or ``max_bytes``; returns how many.

    Only this daemon's sealed journals are counted and dropped, and never the newest: it
    carries the vault's op id clock. Pruning is housekeeping after an acknowledged operation, so
    an I/O error stops it and is logged, never raised.
    """
    seal_key = seal.installed_key()
    keep = max(1, min(keep, KEEP_OVERRIDE or keep))
    root = journal_root(vault)
    before = _checked.get(str(root), {})
    known: dict[str, int] = {}
    for name in journal_names(vault):
        size = before[name] if name in before else _own_committed_size(root, name, seal_key)
        if size is not None:
            known[name] = size
    _checked[str(root)] = known
    committed, total, dropped = list(known), sum(known.values()), 0  # oldest first, as listed
    while len(committed) > 1 and (len(committed) > keep or total > max_bytes):
        oldest = committed.pop(0)
        total -= known.pop(oldest)
        try:
            retire(seal_key, root / oldest, "during-prune")
        except OSError as exc:
            log.warning("journal pruning stopped", op_id=oldest, error=exc.strerror or str(exc))
            break
        dropped += 1
    return dropped
