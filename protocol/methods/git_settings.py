"""A vault's git settings, as its registry entry holds them: how it records history, where it syncs.

A leaf of the protocol: :mod:`protocol.methods.vaults` (the entry) and :mod:`protocol.methods.git`
(the methods) both use these types, and neither may import the other for them.
"""

from __future__ import annotations

import enum
from typing import Annotated

import msgspec


class GitMode(enum.StrEnum):
    """How a vault that lives in a git repository records its history."""

    OFF = "off"  #: vaultd commits nothing (history reads still work when the vault is in a repository)
    CHECKPOINT = "checkpoint"  #: every applied operation becomes one commit
    SNAPSHOT = "snapshot"  #: checkpoints, and hand edits committed after a quiet period


DEFAULT_QUIET_S = 300  #: five minutes without a change before hand edits become a snapshot
MIN_SYNC_INTERVAL_S = 60
MAX_SYNC_INTERVAL_S = 7 * 24 * 3600

RemoteUrl = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=2048,
        pattern=r"^[^\x00-\x20\x7f-]\S*$",
        description="The git remote the vault syncs with (an ssh, https or file URL, or a local path); origin's fetch and "
        "push URLs must equal it.",
    ),
]
QuietSeconds = Annotated[
    int,
    msgspec.Meta(ge=1, le=86400, description="Seconds without a file change before hand edits are committed as a snapshot."),
]
SyncInterval = Annotated[
    int,
    msgspec.Meta(
        ge=MIN_SYNC_INTERVAL_S,
        le=MAX_SYNC_INTERVAL_S,
        description=f"Sync in the background every this many seconds ({MIN_SYNC_INTERVAL_S} to {MAX_SYNC_INTERVAL_S}).",
    ),
]
