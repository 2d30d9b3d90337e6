"""Which registered vault a command means when it names none, and which vault holds a path.

The commands, shell completion and ``neighbors --canvas`` all answer these the same way: an
explicit ``--vault``, else ``$VAULTD_VAULT``, else the vault whose folder holds the working folder,
else none (the daemon's default vault). Registered vault folders are canonical and never nested
(the registry refuses both), so the first folder that holds a path is the only one.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from protocol.methods.vaults import VaultInfo

ENV = "VAULTD_VAULT"


def holding(listed: Iterable[VaultInfo], path: str) -> tuple[str, str] | None:
    """(vault id, vault-relative path, "" for the root) of the vault whose folder holds ``path``
    (a canonical absolute path), else None."""
    for info in listed:
        root = info.entry.path.rstrip("/")
        if path == root:
            return str(info.entry.id), ""
        if path.startswith(root + "/"):
            return str(info.entry.id), path[len(root) + 1 :]
    return None


def chosen(explicit: str | None, listing: Callable[[], Iterable[VaultInfo]]) -> str | None:
    """The vault a command means; ``listing`` is asked for the registered vaults only when neither
    --vault nor the environment names one."""
    if explicit or os.environ.get(ENV):
        return explicit or os.environ[ENV]
    try:
        here = os.path.realpath(os.getcwd())
    except OSError:
        return None
    found = holding(listing(), here)
    return found[0] if found else None
