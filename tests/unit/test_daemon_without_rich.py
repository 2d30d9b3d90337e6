"""The daemon's process leaves rich out (structlog would import it for tracebacks the daemon never
draws): every module the daemon loads, and its logging of an exception, must work without it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROBE = textwrap.dedent(
    """
    import json, sys, tempfile
    from pathlib import Path
    from vaultd.main import NOT_IN_THE_DAEMON, _leave_out_terminal_drawing
    _leave_out_terminal_drawing()
    import structlog
    from vaultd.api import load_handlers
    from vaultd.daemon import Daemon  # noqa: F401
    from vaultd.main import configure_logging
    load_handlers()
    home = Path(tempfile.mkdtemp())
    log_file = configure_logging(home, foreground=False)
    try:
        raise RuntimeError("a failure the log must carry")
    except RuntimeError:
        structlog.get_logger("vaultd").exception("probe")
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in NOT_IN_THE_DAEMON and sys.modules[m] is not None)
    print(json.dumps({"loaded": loaded, "log": log_file.read_text()}))
    """
)


def test_the_daemons_modules_load_and_log_an_exception_without_rich() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["loaded"] == [], f"loaded in the daemon after all: {out['loaded']}"
    line = json.loads(out["log"].strip().splitlines()[-1])
    assert line["event"] == "probe" and "RuntimeError: a failure the log must carry" in line["exception"]
