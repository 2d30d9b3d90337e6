"""``vaultctl mcp``: a stdio MCP server whose tools are the method table's ``mcp`` methods.

It holds no vault state: every tool call is one call to the daemon on the ``mcp`` channel.
Modules: ``stdio`` (the loop and framing), ``wire`` (JSON-RPC messages), ``server`` (the MCP
methods), ``versions`` (both session models), ``tools`` and ``schemas`` (the tool list),
``calls`` and ``link`` (calling the daemon), ``errors``.
"""

from vaultctl.mcp.stdio import serve

__all__ = ["serve"]
