"""How to start ``vaultd`` from the installation this ``vaultctl`` runs from.

One answer for the client's autostart and for the service units ``vaultctl daemon install``
writes, so both start the same daemon, of the same version, with the same libraries:

- a ``vaultd`` script beside the running ``vaultctl`` (a venv, ``pipx``, ``uv tool``): that
  script, by the path it was found at (``~/.local/bin/vaultd`` survives an upgrade);
- a single-file build (a shiv zipapp, ``vaultctl.pyz``): the same file again, run by the same
  Python, with ``SHIV_ENTRY_POINT`` naming the daemon's entry point;
- otherwise (``python -m vaultctl.main`` in a checkout): ``python -m vaultd.main``.
"""

from __future__ import annotations

import os
import sys
import zipfile
from dataclasses import dataclass

DAEMON_ENTRY_POINT = "vaultd.main:main"
SHIV_ENTRY_VARIABLE = "SHIV_ENTRY_POINT"


@dataclass(frozen=True, slots=True)
class Launch:
    """The command line that starts the daemon, and what its environment must add."""

    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()


def daemon_launch(argv0: str | None = None, executable: str | None = None) -> Launch:
    """The way to start ``vaultd`` that belongs with ``argv0`` (default: this process's)."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    python = sys.executable if executable is None else executable
    script = os.path.abspath(argv0) if argv0 else ""
    base = os.path.basename(script)
    if base.startswith("vaultctl") and not base.endswith(".pyz"):
        sibling = os.path.join(os.path.dirname(script), "vaultd" + base[len("vaultctl") :])
        if os.path.isfile(sibling) and os.access(sibling, os.X_OK):
            return Launch((sibling,))
    if script and _is_shiv(script):
        return Launch((python, script), ((SHIV_ENTRY_VARIABLE, DAEMON_ENTRY_POINT),))
    return Launch((python, "-m", "vaultd.main"))


def _is_shiv(path: str) -> bool:
    """A zipapp built by shiv: it carries its bootstrap settings in ``environment.json``."""
    if not os.path.isfile(path) or not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as archive:
        return "environment.json" in archive.namelist()
