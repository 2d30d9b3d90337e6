"""vaultd with its folder fsyncs removed: the negative control of the lost-writes suite.

Run as ``python -m reliability.nofsync_daemon``; it replaces :func:`vaultd.fsio.fsync_dir` and
:func:`vaultd.txn.dirfd.fsync_folder` (the same fsync on an open folder) with no-ops before the
daemon's modules import them, then runs the daemon as usual. The lost-writes harness must find
violations with it (renames and creates that never became durable).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import vaultd.fsio
import vaultd.txn.dirfd

if TYPE_CHECKING:
    from pathlib import Path


def _skip(folder: Path) -> None:
    """The missing fsync under test."""


def _skip_fd(fd: int) -> None:
    """The same missing fsync, on a folder opened by descriptor."""


vaultd.fsio.fsync_dir = _skip
vaultd.txn.dirfd.fsync_folder = _skip_fd

from vaultd.main import main  # noqa: E402 - must import after the patch

if __name__ == "__main__":
    sys.exit(main())
