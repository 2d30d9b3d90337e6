"""Which files are the raw copies capture keeps, so git commits them only when the user opts in.

A raw copy is the captured bytes themselves (a PDF, a web page, a transcript): large, often not
the user's to publish, and already pinned by the sha-256 its source note records. So checkpoints
and snapshots leave them out unless the vault's ``git_raw`` setting says otherwise: every file
in the vault's raw folder (its ``raw`` role) and, wherever capture put it, every file named as
capture names a raw copy, ``<64 hex digits>`` with an optional extension.
"""

from __future__ import annotations

import re

from protocol.methods.vaults import VaultEntry, in_folder

_CONTENT_NAME = re.compile(r"[0-9a-f]{64}(?:\.[A-Za-z0-9]{1,16})?")


def left_out(rel: str, entry: VaultEntry) -> bool:
    """Whether git leaves the vault-relative ``rel`` out as a raw copy."""
    if entry.git_raw:
        return False
    raw = entry.folder_roles().raw
    if raw is not None and in_folder(rel, raw):
        return True
    return _CONTENT_NAME.fullmatch(rel.rpartition("/")[2]) is not None
