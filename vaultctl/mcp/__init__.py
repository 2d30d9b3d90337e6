"""``vaultctl mcp``: a stdio MCP server whose tools are the method table's ``mcp`` methods.

It holds no vault state: every tool call is one call to the daemon on the ``mcp`` channel.
Modules: ``stdio`` (the loop and framing), ``wire`` (JSON-RPC messages), ``server`` (the MCP
methods), ``versions`` (both session models), ``tools`` and ``schemas`` (the tool list),
``calls`` and ``daemon_connection`` (calling the daemon), ``errors``.
"""

from __future__ import annotations

import logging
import os

from vaultctl.mcp.stdio import serve

LOG_ENV = "VAULTD_MCP_LOG"  #: stderr log level: debug, info, warning (the default), error


def run() -> int:
    """Configure stderr logging from ``$VAULTD_MCP_LOG`` and serve until stdin closes."""
    level = os.environ.get(LOG_ENV, "warning").upper()
    logging.basicConfig(level=getattr(logging, level, logging.WARNING), format="vaultctl mcp: %(levelname)s %(message)s")
    return serve()


__all__ = ["LOG_ENV", "run", "serve"]
