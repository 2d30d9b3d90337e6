"""Where a user's folders are, read from an environment mapping so tests (and callers) can pass one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping


def home_of(env: Mapping[str, str]) -> Path:
    """``$HOME``, else the password database's idea of it."""
    return Path(env["HOME"]) if env.get("HOME") else Path.home()


def vaultd_home(env: Mapping[str, str]) -> Path:
    """``$VAULTD_HOME``, else ``$XDG_DATA_HOME/vaultd``, else ``~/.local/share/vaultd``."""
    if env.get("VAULTD_HOME"):
        return Path(env["VAULTD_HOME"])
    if env.get("XDG_DATA_HOME"):
        return Path(env["XDG_DATA_HOME"]) / "vaultd"
    return home_of(env) / ".local" / "share" / "vaultd"
