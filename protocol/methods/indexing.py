"""Indexing a vault: how far a build has come, and a rebuild on request.

A vault's index is built when the vault is added and when the daemon starts (from the cache,
re-reading only what changed). ``vault.rebuild`` re-reads and re-parses every note whatever the
cache says. While a build runs, ``daemon.status`` shows its progress and subscribers get
``index.progress`` events (see ``subscribe``).
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from protocol.methods.common import OptionalVault, Params, Result
from protocol.methods.spec import Effect, spec


def _doc(text: str) -> msgspec.Meta:
    return msgspec.Meta(description=text)


class BuildProgress(msgspec.Struct, kw_only=True):
    """How far a vault's index build has come."""

    parsed: Annotated[int, _doc("Notes read and parsed so far.")]
    total: Annotated[int | None, _doc("Notes the build has to parse; null while it is still listing the vault's files.")]
    reused: Annotated[int, _doc("Notes taken from the cache unchanged (not counted in total).")] = 0
    elapsed_s: Annotated[float, _doc("Seconds since the build started.")]
    rebuild: Annotated[bool, _doc("A vault.rebuild (every note re-parsed), not a start-up or vault.add build.")] = False


class VaultRebuildParams(Params):
    vault: OptionalVault = None


class VaultRebuildResult(Result):
    vault: Annotated[str, _doc("The vault rebuilt.")]
    notes: Annotated[int, _doc("Notes in the index after the rebuild.")]
    parsed: Annotated[int, _doc("Notes read and parsed.")]
    changed: Annotated[int, _doc("Notes whose indexed state differed from the disk (each reported to subscribers).")]
    seconds: Annotated[float, _doc("How long the rebuild took.")]


VAULT_REBUILD = spec(
    "vault.rebuild",
    VaultRebuildParams,
    VaultRebuildResult,
    "Re-read and re-parse every note of a vault and refresh its search cache; reads are served meanwhile. Never writes a note.",
    Effect.IDEMPOTENT_WRITE,
)
SPECS = (VAULT_REBUILD,)
