"""``python -m vaultctl.mcp``: the shim without the CLI around it, for hosts that count start-up
milliseconds (it skips importing typer). Same behaviour as ``vaultctl mcp``."""

import sys

from vaultctl.mcp import run

sys.exit(run())
