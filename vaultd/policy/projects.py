"""The project registry: which project ids a vault's log events may name.

A vault that declares its projects keeps its log's ``project`` column to them, so a typo or an
agent's invented id does not split one project's history in two. ``-`` (no project) always goes;
a vault that declares none keeps no registry, and any well-formed id goes, as before.
"""

from __future__ import annotations

from protocol.errors import Issue
from protocol.issue_codes import IssueCode


def project_issue(project: str, declared: list[str], log_path: str) -> Issue | None:
    """V18 when ``project`` is neither ``-`` nor one of the ``declared`` ids of a registry."""
    if not declared or project == "-" or project in declared:
        return None
    names = ", ".join(sorted(set(declared)))
    return Issue(
        code=IssueCode.V18,
        path=log_path,
        message=f"the log event's project is not in the vault's project registry; declared: {names} (or - for none)",
    )
