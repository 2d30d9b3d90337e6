"""Hashing raw copies for drift, through the vault's descriptors (no symlink followed, bounded)."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from protocol.limits import MAX_CAPTURE_BYTES
from vaultd.errors import Conflict, LimitExceeded
from vaultd.txn.dirfd import VaultRoot

if TYPE_CHECKING:
    from pathlib import Path

    from vaultd.sources.evidence import Hasher


def raw_hasher(root: Path) -> Hasher:
    """sha256 of a vault file at a vault-relative path; None when it is missing, a symlink, not a
    regular file, over the capture bound or unreadable."""

    def digest(rel: str) -> str | None:
        try:
            with VaultRoot(root) as vroot:
                current = vroot.read_file(rel, MAX_CAPTURE_BYTES)
        except (Conflict, LimitExceeded, OSError):
            return None
        return None if current is None else hashlib.sha256(current.data).hexdigest()

    return digest
