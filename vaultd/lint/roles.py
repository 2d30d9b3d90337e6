"""Lint by folder role: what a finding in an intake, raw, journal or user-only folder is worth.

A raw folder holds captured sources, kept byte for byte (V17): they are not notes to hold to a
schema, and a fix there would be refused anyway. Journal and user-only folders are the person's
(agents may not write there, P06): a finding in them would only invite a fix nobody should make
for them, so lint reports none, though their links still count for the notes they name. Intake
notes are pending triage: their links are checked, but not yet their schema, their place in the
maps or their fullness. With no role set, every finding stands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.methods.lint import LintCode
from protocol.methods.vaults import FolderRoles, in_folder

if TYPE_CHECKING:
    from collections.abc import Iterable

    from vaultd.lint.model import Finding

#: What an intake note is not held to while it waits to be filed.
PENDING = frozenset({LintCode.L04, LintCode.L05, LintCode.L06, LintCode.L08, LintCode.L09, LintCode.L18, LintCode.L19, LintCode.L20})


def unlinted(path: str, roles: FolderRoles | None) -> bool:
    """Whether ``path`` lies where lint reports nothing: the raw, journal and user-only folders."""
    if roles is None:
        return False
    folders = [*roles.agent_closed(), *([roles.raw] if roles.raw is not None else [])]
    return any(in_folder(path, folder) for folder in folders)


def by_role(found: Iterable[Finding], roles: FolderRoles | None) -> list[Finding]:
    """The findings a vault's folder roles leave standing (all of them when it has none)."""
    if roles is None:
        return list(found)
    return [
        f
        for f in found
        if not unlinted(f.note, roles) and not (roles.intake is not None and f.code in PENDING and in_folder(f.note, roles.intake))
    ]
