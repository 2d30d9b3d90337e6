"""Write policy and validation rules: pure functions the transaction engine calls with its plan.

Codes: P01 write channel, P02 deny paths, P03 an unusable PII policy, P04 a path private to the
caller's channel, P05 vaultd's own files (the operation log, .vaultd/, .git/), V01 schema, V04
path safety, V06 secrets, V07 PII. Every function returns :class:`~protocol.errors.Issue` values
and never raises on user input; no issue ever carries a matched secret or PII value.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Each rule's module is imported at the first use of one of its names (the names below are for the
# type checker): the transaction engine and the journal, which every vault's start loads for its
# recovery, use the path rules alone, and a vault that is only indexed and read never loads the
# secret, PII and schema rules, nor the sources' ledger the schema reads.
if TYPE_CHECKING:
    from vaultd.policy.added import added_lines, split_lines
    from vaultd.policy.decoded import decoded_lines
    from vaultd.policy.owned import owned_path_issue
    from vaultd.policy.path_screen import path_screen_issues
    from vaultd.policy.paths import (
        MAX_COMPONENT_BYTES,
        MAX_PATH_BYTES,
        RESERVED_NAMES,
        check_inside_vault,
        check_new_path,
        deny_path_issue,
        disk_spelling,
        disk_twin,
        matching_glob,
        path_key,
        write_channel_issue,
    )
    from vaultd.policy.pii import (
        effective_action,
        pattern_problem,
        pii_findings,
        pii_line_findings,
        validate_pii_policy,
    )
    from vaultd.policy.projects import project_issue
    from vaultd.policy.schema import (
        BUILTIN_DOMAINS,
        CONFIDENCES,
        STATUSES,
        NoteType,
        new_issues_only,
        schema_issues,
    )
    from vaultd.policy.secrets import (
        SecretFinding,
        SecretRule,
        scan_secret_lines,
        scan_secrets,
        secret_issues,
        secret_line_issues,
    )

#: Each name of the package: the module that defines it.
_WHERE: dict[str, str] = {
    "added_lines": "added",
    "split_lines": "added",
    "decoded_lines": "decoded",
    "owned_path_issue": "owned",
    "path_screen_issues": "path_screen",
    "MAX_COMPONENT_BYTES": "paths",
    "MAX_PATH_BYTES": "paths",
    "RESERVED_NAMES": "paths",
    "check_inside_vault": "paths",
    "check_new_path": "paths",
    "deny_path_issue": "paths",
    "disk_spelling": "paths",
    "disk_twin": "paths",
    "matching_glob": "paths",
    "path_key": "paths",
    "write_channel_issue": "paths",
    "effective_action": "pii",
    "pattern_problem": "pii",
    "pii_findings": "pii",
    "pii_line_findings": "pii",
    "validate_pii_policy": "pii",
    "project_issue": "projects",
    "BUILTIN_DOMAINS": "schema",
    "CONFIDENCES": "schema",
    "STATUSES": "schema",
    "NoteType": "schema",
    "new_issues_only": "schema",
    "schema_issues": "schema",
    "SecretFinding": "secrets",
    "SecretRule": "secrets",
    "scan_secret_lines": "secrets",
    "scan_secrets": "secrets",
    "secret_issues": "secrets",
    "secret_line_issues": "secrets",
}


def __getattr__(name: str) -> Any:
    """A rule's name, its module imported at its first use.

    Raises:
        AttributeError: no rule has that name.
    """
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "BUILTIN_DOMAINS",
    "CONFIDENCES",
    "MAX_COMPONENT_BYTES",
    "MAX_PATH_BYTES",
    "RESERVED_NAMES",
    "STATUSES",
    "NoteType",
    "SecretFinding",
    "SecretRule",
    "added_lines",
    "check_inside_vault",
    "check_new_path",
    "decoded_lines",
    "deny_path_issue",
    "disk_spelling",
    "disk_twin",
    "effective_action",
    "matching_glob",
    "new_issues_only",
    "owned_path_issue",
    "path_key",
    "path_screen_issues",
    "pattern_problem",
    "pii_findings",
    "pii_line_findings",
    "project_issue",
    "scan_secret_lines",
    "scan_secrets",
    "schema_issues",
    "secret_issues",
    "secret_line_issues",
    "split_lines",
    "validate_pii_policy",
    "write_channel_issue",
]
