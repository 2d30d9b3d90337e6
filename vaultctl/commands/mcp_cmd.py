"""``vaultctl mcp``: serve vaultd's tools to an agent host over stdio."""

from __future__ import annotations

import logging
import os

import typer

LOG_ENV = "VAULTD_MCP_LOG"  #: stderr log level: debug, info, warning (default), error


def mcp() -> None:
    """Run the MCP server on stdin/stdout for an agent host (tools generated from the method table).

    Agent hosts launch this command; people rarely run it by hand. It answers the handshake at
    once and reaches the daemon (starting it if needed) on the first tool call. Logs go to stderr;
    set VAULTD_MCP_LOG=debug for more. Exits 0 when the host closes stdin.
    """
    level = os.environ.get(LOG_ENV, "warning").upper()
    logging.basicConfig(level=getattr(logging, level, logging.WARNING),
                        format="vaultctl mcp: %(levelname)s %(message)s")
    from vaultctl.mcp import serve  # imported here so other commands never load the shim

    raise typer.Exit(serve())
