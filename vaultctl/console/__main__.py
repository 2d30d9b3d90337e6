"""``python -m vaultctl.console``: the console process the daemon starts (not a command for people)."""

import sys

from vaultctl.console.main import main

sys.exit(main())
