"""vaultd with its folder fsyncs removed: the negative control of the lost-writes suite.

Run as ``python -m reliability.nofsync_daemon``; it replaces :func:`vaultd.fsio.fsync_dir` with a
no-op before the daemon's modules import it, then runs the daemon as usual. The lost-writes
harness must find violations with it (renames and creates that never became durable).
"""

from __future__ import annotations

import sys
from pathlib import Path

import vaultd.fsio


def _skip(folder: Path) -> None:
    """The missing fsync under test."""


vaultd.fsio.fsync_dir = _skip

from vaultd.main import main  # noqa: E402 - must import after the patch

if __name__ == "__main__":
    sys.exit(main())
