"""Write policy and validation rules: pure functions the transaction engine calls with its plan.

Codes: P01 write channel, P02 deny paths, P03 an unusable PII policy, P04 a path private to the
caller's channel, P05 vaultd's own files (the operation log, .vaultd/, .git/), V01 schema, V04
path safety, V06 secrets, V07 PII. Every function returns :class:`~protocol.errors.Issue` values
and never raises on user input; no issue ever carries a matched secret or PII value.
"""

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
