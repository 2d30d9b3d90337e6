"""Topic-map rules: parent cycles (L16) and parent values that name no note (L17)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.methods.lint import LintCode
from vaultd.graph.topics import cycles, reaches
from vaultd.lint.model import Finding, LintInput

if TYPE_CHECKING:
    from collections.abc import Iterator


def cycle_findings(inp: LintInput) -> Iterator[Finding]:
    parents = inp.snap.parents
    for component in cycles(parents):
        members = set(component)

        def inside(p: str, members: set[str] = members) -> list[str]:
            return [q for q in parents.get(p, []) if q in members]

        for path in component:
            inp.deadline.tick()
            chain = None
            for parent in inside(path):
                chain = reaches(parent, path, inside)
                if chain is not None:
                    break
            shown = " → ".join([path, *(chain or [path])])
            yield Finding(LintCode.L16, path, f"a topic-map cycle: {shown}")


def misnamed_findings(inp: LintInput) -> Iterator[Finding]:
    for path in sorted(inp.snap.misnamed):
        for bad in inp.snap.misnamed[path]:
            yield Finding(LintCode.L17, path, f"{bad.key}: {bad.value!r} names no parent: {bad.reason}")
