"""A vault's registered spec sources: which one a call names, where it is, what a caller may see.

A source inside the vault is read through the caller's visibility (an agent never reads a private
note as a spec) and is the only kind vaultd writes; one outside is read-only to vaultd.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from vaultd.errors import InvalidParams, NotFound, PolicyRefused
from vaultd.policy.visibility import Visibility
from vaultd.specs.documents import read_source

if TYPE_CHECKING:
    from protocol.methods.common import Channel
    from protocol.methods.specs import SpecSource
    from protocol.methods.vaults import VaultEntry
    from vaultd.specs.documents import SpecSet


def inside_rel(entry: VaultEntry, source: SpecSource) -> str | None:
    """The source's vault-relative path ('' for the vault's whole folder), or None when it is outside."""
    root = entry.path.rstrip("/")
    if source.path == root:
        return ""
    if source.path.startswith(root + "/"):
        return source.path[len(root) + 1 :]
    return None


def chosen(entry: VaultEntry, source: str | None) -> list[SpecSource]:
    """The sources a call names: one by id, or every source of the vault.

    Raises:
        NotFound: NOT_FOUND, the vault has no such source, or none at all.
    """
    if source is not None:
        for s in entry.specs:
            if s.id == source:
                return [s]
        raise NotFound(f"vault {entry.id!r} has no spec source {source!r}; see 'vaultctl spec list'")
    if not entry.specs:
        raise NotFound(f"vault {entry.id!r} has no spec sources; add one with 'vaultctl spec add'")
    return list(entry.specs)


def writable(entry: VaultEntry, source: str | None) -> tuple[SpecSource, str]:
    """The source a spec write goes to, and its vault-relative folder.

    Raises:
        NotFound: NOT_FOUND, the vault has no such source.
        InvalidParams: INVALID_PARAMS, no source named and the vault has several inside it, or the
            source is one file.
        PolicyRefused: POLICY, the source is outside the vault (or, none named, every source is):
            vaultd only reads it.
    """
    candidates = chosen(entry, source)
    if source is None:
        candidates = [s for s in candidates if inside_rel(entry, s) is not None]
        if not candidates:
            raise PolicyRefused(
                f"vault {entry.id!r} has no spec source inside it; vaultd only reads the others: edit them in their repository"
            )
        if len(candidates) > 1:
            raise InvalidParams("name the spec source to write to: the vault has several inside it")
    target = candidates[0]
    rel = inside_rel(entry, target)
    if rel is None:
        raise PolicyRefused(f"spec source {target.id!r} is outside the vault; vaultd only reads it: edit its specs in their repository")
    if os.path.isfile(target.path):
        raise InvalidParams(f"spec source {target.id!r} is one file; register its folder to add specs beside it")
    return target, rel


def read(entry: VaultEntry, source: SpecSource, channel: Channel) -> SpecSet:
    """The source's specs as ``channel`` may see them.

    Raises:
        NotFound: NOT_FOUND, the source's path is gone.
        ValidationFailed: VALIDATION, the source's path is now a link or neither a folder nor a file.
        LimitExceeded: LIMIT, the source is over the read bounds.
    """
    rel = inside_rel(entry, source)
    view = Visibility.of(entry, channel)
    if rel is None or not view.hides_anything:
        return read_source(source.id, source.path, None)
    prefix = rel + "/" if rel else ""
    if os.path.isfile(source.path) and view.hidden(rel):
        raise NotFound(f"vault {entry.id!r} has no spec source {source.id!r} you may see")
    return read_source(source.id, source.path, lambda p: view.hidden(prefix + p))
