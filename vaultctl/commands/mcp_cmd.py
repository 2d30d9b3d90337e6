"""``vaultctl mcp``: serve vaultd's tools to an agent host over stdio."""

from __future__ import annotations

from typing import Annotated

import typer

from vaultctl.mcp.toolsets import DEFAULT_TOOLSET


def mcp(
    tools: Annotated[
        str,
        typer.Option(
            help="The tools offered: core, read, write, all, or tool names, comma-separated (core,graph)."
            " core is what vaultctl setup writes; each set's cost to an agent's context is in docs/mcp.md."
        ),
    ] = DEFAULT_TOOLSET,
) -> None:
    """Run the MCP server on stdin/stdout for an agent host (tools generated from the method table).

    Agent hosts launch this; it answers the handshake at once and reaches the daemon on the first call.
    Logs go to stderr (VAULTD_MCP_LOG=debug for more); it exits 0 when stdin closes.
    """
    from vaultctl.mcp import run  # imported here so other commands never load the shim

    raise typer.Exit(run(tools))
