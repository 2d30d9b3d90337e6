"""Errors at the shim's two boundaries: the MCP peer and the daemon.

::

    McpError                 a JSON-RPC error answered to the MCP client (bad frame, unknown method,
                             bad tool arguments, unsupported version): the request itself was wrong
    ToolFailure              a tool ran (or tried to) and failed: answered as a *result* with
                             ``isError: true`` so the model sees why and can correct itself
      from a CallError       the daemon refused: VALIDATION, POLICY, CONFLICT, NOT_FOUND, ...
      unavailable()          the daemon cannot be reached
      too_large()            the result is over the bound for one tool result

The daemon's stable error names pass through unchanged (``structuredContent.code``), so an agent
reacts to ``CONFLICT`` the same way ``vaultctl`` does.
"""

from __future__ import annotations

import enum
from typing import Any

import msgspec

from protocol.errors import ErrorCode, ErrorData, Issue


class RpcCode(enum.IntEnum):
    """JSON-RPC error codes the shim answers with."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    UNSUPPORTED_PROTOCOL_VERSION = -32022  #: MCP 2026-07-28: the request's version is not spoken here
    RESOURCE_NOT_FOUND = -32002  #: MCP server/resources, "Error Handling": no such resource


class McpError(Exception):
    """A request the shim answers with a JSON-RPC error instead of a result."""

    def __init__(self, code: RpcCode, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def invalid_params(message: str, path: str | None = None) -> McpError:
    """-32602 whose ``data`` has the vaultd error shape, naming the offending field."""
    issue = Issue(code=ErrorCode.INVALID_PARAMS.value, message=message, path=path)
    data = ErrorData(code=ErrorCode.INVALID_PARAMS, message=message, issues=[issue])
    return McpError(RpcCode.INVALID_PARAMS, message, data=msgspec.to_builtins(data))


class ToolFailure(Exception):
    """A tool call that ended in an error result (``isError: true``) carrying ``ErrorData``."""

    def __init__(self, data: ErrorData) -> None:
        super().__init__(data.message)
        self.data = data

    def structured(self) -> dict[str, Any]:
        """``{code, message, issues, issues_omitted, candidates}``, every key present so agents
        need not guess."""
        return {
            "code": self.data.code.value,
            "message": self.data.message,
            "issues": msgspec.to_builtins(self.data.issues),
            "issues_omitted": self.data.issues_omitted,
            "candidates": list(self.data.candidates),
        }


def unavailable(reason: str, *, maybe_applied: bool = False) -> ToolFailure:
    """The daemon could not be reached; say what to do, and whether the call may have landed."""
    message = f"vaultd is not available: {reason.rstrip('.')}."
    if maybe_applied:
        message += (
            " The connection dropped while the call was in flight, so it may have been applied:"
            " read the note (or the operation's receipt) before retrying."
        )
    elif "vaultctl" in reason:  # the client's message already says how to start the daemon
        message += " Nothing was changed."
    else:
        message += " Nothing was changed. Start the daemon with 'vaultctl daemon start' or check it with 'vaultctl doctor', then retry."
    return ToolFailure(ErrorData(code=ErrorCode.UNAVAILABLE, message=message))


def too_large(size: int, bound: int, paging: list[str]) -> ToolFailure:
    """A result over the per-result bound; name the arguments that make it smaller."""
    if paging:
        how = "call again asking for less: " + ", ".join(_PAGING_HINTS[p] for p in paging)
    else:
        how = "narrow the request (a more specific query, one vault or one note)"
    message = f"the result is {_size(size)}, over the {_size(bound)} bound for one tool result, with nothing to cut; {how}."
    return ToolFailure(ErrorData(code=ErrorCode.LIMIT, message=message))


def _size(n: int) -> str:
    return f"{n // 1024} KiB" if n >= 1024 else f"{n} bytes"


_PAGING_HINTS = {
    "limit": "a smaller limit",
    "cursor": "the cursor from the previous page",
    "offset": "an offset to start from",
    "max_bytes": "a smaller max_bytes",
}
PAGING_FIELDS: tuple[str, ...] = tuple(_PAGING_HINTS)
