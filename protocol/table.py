"""The method table: every method the daemon answers, collected from ``protocol.methods.*``.

Each :class:`~protocol.methods.spec.MethodSpec` is declared beside its Structs; this module only
gathers them in a fixed order (session and daemon, vaults, reads, writes). The daemon dispatches
from the table, the MCP shim lists its tools from it, and ``vaultctl schema`` and the reference
docs are generated from it.
"""

from __future__ import annotations

from typing import Any

from protocol.methods import (
    bases,
    checkouts,
    console,
    daily,
    editions,
    files,
    git,
    graph,
    guard,
    indexing,
    lint,
    memory,
    names,
    properties,
    proposals,
    reads,
    reports,
    retrieve,
    service,
    sessions,
    sources,
    specs,
    subscriptions,
    tasks,
    templates,
    tidy,
    vaults,
    views,
    wikify,
    work,
    writes,
)
from protocol.methods.spec import Effect, MethodSpec, Trait

SPECS: tuple[MethodSpec[Any, Any], ...] = (
    *service.SPECS,
    *vaults.SPECS,
    *reads.SPECS,
    *writes.SPECS,
    *properties.SPECS,
    *tasks.SPECS,
    *proposals.SPECS,
    *indexing.SPECS,
    *subscriptions.SPECS,
    *guard.SPECS,
    *sources.SPECS,
    *retrieve.SPECS,
    *names.SPECS,
    *git.SPECS,
    *lint.SPECS,
    *graph.SPECS,
    *bases.SPECS,
    *console.SPECS,
    *files.SPECS,
    *daily.SPECS,
    *templates.SPECS,
    *tidy.SPECS,
    *specs.SPECS,
    *memory.SPECS,
    *sessions.SPECS,
    *work.SPECS,
    *views.SPECS,
    *checkouts.SPECS,
    *wikify.SPECS,
    *editions.SPECS,
    *reports.SPECS,
)
METHODS: dict[str, MethodSpec[Any, Any]] = {spec.name: spec for spec in SPECS}

__all__ = ["METHODS", "SPECS", "Effect", "MethodSpec", "Trait"]
