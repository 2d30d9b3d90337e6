"""Rules for a new registry entry: a canonical existing folder, unique, not nested, not the home."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from vaultd.errors import ConfigError, InvalidParams, NotFound, ValidationFailed

if TYPE_CHECKING:
    from protocol.methods.vaults import VaultEntry
    from vaultd.registry.config import Config


def canonical_folder(raw: str) -> str:
    """The folder's canonical absolute path (symlinks resolved), or a clear refusal.

    Raises:
        InvalidParams: INVALID_PARAMS, the path holds a NUL byte or is relative.
        NotFound: NOT_FOUND, no folder is there.
        ValidationFailed: VALIDATION, it cannot be resolved, is not a folder, or is not readable.
    """
    if "\x00" in raw:
        raise InvalidParams("the vault path contains a NUL byte")
    path = Path(raw)
    if not path.is_absolute():
        raise InvalidParams(f"the vault path must be absolute, got a relative path: {raw!r}")
    try:
        resolved = path.resolve(strict=True)
    except (RuntimeError, OSError) as exc:  # RuntimeError: a symlink loop on older Pythons
        if isinstance(exc, FileNotFoundError):
            raise NotFound(f"no folder at {raw}") from exc
        raise ValidationFailed(f"cannot resolve {raw}: {getattr(exc, 'strerror', None) or exc}") from exc
    if not resolved.is_dir():
        raise ValidationFailed(f"{raw} is not a folder")
    if not os.access(resolved, os.R_OK | os.X_OK):
        raise ValidationFailed(f"{raw} is not readable")
    return str(resolved)


def _inside(child: str, parent: str) -> bool:
    return child == parent or child.startswith(parent.rstrip("/") + "/")


def check_new_entry(config: Config, entry: VaultEntry, home: Path) -> None:
    """Refuse a duplicate id or path, a vault nested in another (either way), or one holding the home.

    Raises:
        ConfigError: VALIDATION, the id or path is registered, the vault nests with another, or it
            holds the home.
    """
    for other in config.vaults:
        if other.id == entry.id:
            raise ConfigError(f"a vault with id {entry.id!r} is already registered (at {other.path})")
        if other.path == entry.path:
            raise ConfigError(f"{entry.path} is already registered as vault {other.id!r}")
        if _inside(entry.path, other.path) or _inside(other.path, entry.path):
            raise ConfigError(f"{entry.path} is nested with registered vault {other.id!r} at {other.path}")
    home_real = str(home.resolve())
    if _inside(home_real, entry.path):
        raise ConfigError(f"{entry.path} contains the vaultd home {home_real}; indexes must live outside vaults")
