"""Daemon-side exceptions. One root; each class carries its stable :class:`ErrorCode`.

    VaultError
    ├── InvalidParams      INVALID_PARAMS
    ├── NotFound           NOT_FOUND
    ├── Ambiguous          AMBIGUOUS (carries candidates)
    ├── Conflict           CONFLICT
    ├── StalePreview       STALE_PREVIEW
    ├── ValidationFailed   VALIDATION (carries issues)
    ├── PolicyRefused      POLICY
    ├── LimitExceeded      LIMIT
    ├── Locked             LOCKED
    ├── Unavailable        UNAVAILABLE
    ├── ConfigError        VALIDATION (the registry refuses the entry, or config.json is unusable;
    │                      names the file, never its text)
    └── Internal           INTERNAL

The dispatcher translates a ``VaultError`` into a JSON-RPC error once; nothing else builds
error replies. Messages say what happened and what to do next.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.errors import ErrorCode, ErrorData, Issue
from protocol.limits import MAX_ERROR_ISSUES

if TYPE_CHECKING:
    from collections.abc import Iterable


class VaultError(Exception):
    code: ErrorCode = ErrorCode.INTERNAL

    def __init__(self, message: str, *, issues: Iterable[Issue] = (), candidates: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.issues = list(issues)
        self.candidates = list(candidates)

    def to_data(self) -> ErrorData:
        """The error as it travels: its issues bounded here, once for every refusal, so one that
        finds an issue per backlink or per path never grows a reply without limit."""
        listed = self.issues[:MAX_ERROR_ISSUES]
        return ErrorData(
            code=self.code, message=self.message, issues=listed, issues_omitted=len(self.issues) - len(listed), candidates=self.candidates
        )


class InvalidParams(VaultError):
    code = ErrorCode.INVALID_PARAMS


class NotFound(VaultError):
    code = ErrorCode.NOT_FOUND


class Ambiguous(VaultError):
    code = ErrorCode.AMBIGUOUS


class Conflict(VaultError):
    code = ErrorCode.CONFLICT


class StalePreview(VaultError):
    code = ErrorCode.STALE_PREVIEW


class ValidationFailed(VaultError):
    code = ErrorCode.VALIDATION


class PolicyRefused(VaultError):
    code = ErrorCode.POLICY


class LimitExceeded(VaultError):
    code = ErrorCode.LIMIT


class Locked(VaultError):
    code = ErrorCode.LOCKED


class Unavailable(VaultError):
    code = ErrorCode.UNAVAILABLE


class ConfigError(VaultError):
    """Not INVALID_PARAMS: the request may be well formed, and what is wrong is the registry's state
    (a duplicate id, a nested path) or the config file itself, which no change of arguments fixes."""

    code = ErrorCode.VALIDATION


class Internal(VaultError):
    code = ErrorCode.INTERNAL
