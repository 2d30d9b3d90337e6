"""``python -m vaultctl.mcp [--tools SET]``: the shim without the CLI around it, for hosts that
count start-up milliseconds (it skips importing typer). Same behaviour as ``vaultctl mcp``."""

import sys

from vaultctl.mcp import EXIT_USAGE, fast_args, run

tools = fast_args(sys.argv[1:])
if tools is None:
    print("usage: python -m vaultctl.mcp [--tools core|read|write|all|NAME,NAME...]", file=sys.stderr)
    sys.exit(EXIT_USAGE)
sys.exit(run(tools))
