"""``vaultctl mcp``: a stdio MCP server whose tools are the method table's ``mcp`` methods.

It holds no vault state: every tool call is one call to the daemon on the ``mcp`` channel.
Modules: ``stdio`` (the loop and framing), ``wire`` (JSON-RPC messages), ``server`` (the MCP
methods), ``versions`` (both session models), ``tools`` and ``schemas`` (the tool list),
``toolsets`` (which tools one shim offers), ``calls`` and ``daemon_connection`` (calling the
daemon), ``budget`` (every result within its byte budget), ``resources`` (notes as resources),
``updates`` (resource subscriptions, relayed from the daemon's events), ``errors``.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING

from vaultctl.mcp.stdio import serve
from vaultctl.mcp.toolsets import DEFAULT_TOOLSET, UnknownTools, resolve

if TYPE_CHECKING:
    from collections.abc import Sequence

LOG_ENV = "VAULTD_MCP_LOG"  #: stderr log level: debug, info, warning (the default), error


EXIT_USAGE = 2


def run(tools: str = DEFAULT_TOOLSET) -> int:
    """Configure stderr logging from ``$VAULTD_MCP_LOG`` and serve ``tools`` until stdin closes.

    A ``tools`` that names no toolset or tool exits 2 at once, before any handshake: a host then
    shows the server as failed with the message, instead of an agent missing tools silently.
    """
    level = os.environ.get(LOG_ENV, "warning").upper()
    logging.basicConfig(level=getattr(logging, level, logging.WARNING), format="vaultctl mcp: %(levelname)s %(message)s")
    try:
        specs = resolve(tools)
    except UnknownTools as exc:
        print(f"vaultctl mcp: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return serve(specs=specs)


def fast_args(args: Sequence[str]) -> str | None:
    """The toolset of an ``mcp`` command line the fast path serves (``mcp``, ``mcp --tools X``,
    ``mcp --tools=X``), or None for anything else (``--help``), which goes through the CLI."""
    match list(args):
        case []:
            return DEFAULT_TOOLSET
        case ["--tools", value]:
            return value
        case [flag] if flag.startswith("--tools="):
            return flag.removeprefix("--tools=")
    return None


__all__ = ["EXIT_USAGE", "LOG_ENV", "fast_args", "run", "serve"]
