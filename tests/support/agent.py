"""An agent for tests: the official MCP SDK client driving ``vaultctl mcp`` against the test daemon."""

from __future__ import annotations

import sys
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.support.harness import REPO, Home

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from mcp.types import CallToolResult

SHIM = [sys.executable, "-m", "vaultctl.main", "mcp"]


@asynccontextmanager
async def agent(home: Home, env: dict[str, str] | None = None, mode: str = "auto") -> AsyncIterator[Client]:
    """One agent session: one shim process (so one agent session id unless ``VAULTD_SESSION`` is set)."""
    server = StdioServerParameters(command=SHIM[0], args=SHIM[1:], env={**home.env, **(env or {})}, cwd=str(REPO))
    async with Client(server, mode=mode, read_timeout_seconds=60) as client:
        yield client


def ok(result: CallToolResult) -> dict[str, Any]:
    """The structured result of a call that must have succeeded."""
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content
