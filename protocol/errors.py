"""The error catalogue: one stable name per failure, its JSON-RPC code and the CLI exit status.

Every boundary translates through this one table: the daemon turns a ``VaultError`` into a
JSON-RPC error whose ``data`` is an :class:`ErrorData`; ``vaultctl`` maps the name to an exit
status; the MCP shim passes the name through in a tool error. Vault codes live in -33000..-33099,
outside the -32000..-32099 range MCP reserves for itself.
"""

from __future__ import annotations

import enum

import msgspec


class ExitStatus(enum.IntEnum):
    """Exit statuses of ``vaultctl`` (sysexits where one fits)."""

    OK = 0
    REFUSED = 1  #: the daemon answered and said no
    USAGE = 2  #: the command line or the params were wrong
    UNAVAILABLE = 69  #: no daemon answered (EX_UNAVAILABLE)
    INTERNAL = 70  #: a bug or an unexpected failure (EX_SOFTWARE)
    CONFLICT = 75  #: retry after re-reading (EX_TEMPFAIL)


class ErrorCode(enum.StrEnum):
    """Stable error names. The value is what travels in ``error.data.code``."""

    PARSE_ERROR = "PARSE_ERROR"  #: the frame was not JSON
    INVALID_REQUEST = "INVALID_REQUEST"  #: JSON, but not a JSON-RPC 2.0 request
    METHOD_NOT_FOUND = "METHOD_NOT_FOUND"
    INVALID_PARAMS = "INVALID_PARAMS"  #: wrong types, unknown keys, out-of-range values
    NOT_FOUND = "NOT_FOUND"
    AMBIGUOUS = "AMBIGUOUS"  #: a name matched more than one note; data carries candidates
    CONFLICT = "CONFLICT"  #: a target changed since it was read
    STALE_PREVIEW = "STALE_PREVIEW"  #: a confirm fingerprint no longer matches
    VALIDATION = "VALIDATION"  #: the change would break a rule; issues carry V-codes
    POLICY = "POLICY"  #: write channel, PII, deny paths
    LIMIT = "LIMIT"  #: a size or count bound
    LOCKED = "LOCKED"  #: another process holds a lock we need
    UNAVAILABLE = "UNAVAILABLE"  #: a vault or the daemon cannot serve now
    INTERNAL = "INTERNAL"

    @property
    def rpc_code(self) -> int:
        return _CATALOGUE[self][0]

    @property
    def exit_status(self) -> ExitStatus:
        return _CATALOGUE[self][1]

    @classmethod
    def from_rpc_code(cls, code: int) -> ErrorCode:
        """Best name for a bare JSON-RPC code (a peer that sent no ``data.code``)."""
        for name, (rpc, _) in _CATALOGUE.items():
            if rpc == code:
                return name
        return cls.INTERNAL


_CATALOGUE: dict[ErrorCode, tuple[int, ExitStatus]] = {
    ErrorCode.PARSE_ERROR: (-32700, ExitStatus.INTERNAL),
    ErrorCode.INVALID_REQUEST: (-32600, ExitStatus.INTERNAL),
    ErrorCode.METHOD_NOT_FOUND: (-32601, ExitStatus.INTERNAL),
    ErrorCode.INVALID_PARAMS: (-32602, ExitStatus.USAGE),
    ErrorCode.INTERNAL: (-32603, ExitStatus.INTERNAL),
    ErrorCode.NOT_FOUND: (-33001, ExitStatus.REFUSED),
    ErrorCode.AMBIGUOUS: (-33002, ExitStatus.REFUSED),
    ErrorCode.CONFLICT: (-33003, ExitStatus.CONFLICT),
    ErrorCode.STALE_PREVIEW: (-33004, ExitStatus.CONFLICT),
    ErrorCode.VALIDATION: (-33005, ExitStatus.REFUSED),
    ErrorCode.POLICY: (-33006, ExitStatus.REFUSED),
    ErrorCode.LIMIT: (-33007, ExitStatus.REFUSED),
    ErrorCode.LOCKED: (-33008, ExitStatus.REFUSED),
    ErrorCode.UNAVAILABLE: (-33009, ExitStatus.UNAVAILABLE),
}


class Severity(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Issue(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One finding: a validation rule, a note problem, a bad param. Never carries a secret value."""

    code: str  #: a stable rule code, one of :class:`~protocol.issue_codes.IssueCode` (``V03``, ``N01``, ``PARAM``)
    message: str
    severity: Severity = Severity.ERROR
    path: str | None = None  #: vault-relative note path, or a JSON path like ``$.params.limit``
    line: int | None = None


class ErrorData(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What travels in a JSON-RPC error's ``data``."""

    code: ErrorCode
    message: str
    issues: list[Issue] = []  #: at most :data:`~protocol.limits.MAX_ERROR_ISSUES`, in the order found
    issues_omitted: int = 0  #: issues found beyond the listed ones
    candidates: list[str] = []  #: for AMBIGUOUS
