"""``python -m vaultctl.console``: the console process the daemon starts (not a command for people).

The daemon checks for the console extra before it starts this process; should the web stack be
missing anyway (uninstalled since, another interpreter), the console's log gets one line naming
the extra instead of a traceback, and the daemon reports that the console did not start."""

import sys

from protocol.errors import ExitStatus
from protocol.extras import CONSOLE

if (absence := CONSOLE.absence()) is not None:
    print(f"vaultd console: {absence}", file=sys.stderr)
    sys.exit(int(ExitStatus.UNAVAILABLE))

from vaultctl.console.main import main

sys.exit(main())
