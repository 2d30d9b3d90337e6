"""The registry file, ``$VAULTD_HOME/config.json``: strict, bounded, versioned, written atomically.

Its format version and how another version is read: :mod:`protocol.config_format`.

It fails closed: a malformed, oversized, linked or non-regular file is named in the error and
never overwritten, because it may be a user's hand edit we must not destroy. Every change is a
read-modify-write under an exclusive lock, so two processes cannot lose each other's update.
A new entry is checked here too: a canonical existing folder, unique, not nested, not the home.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import msgspec

from protocol.config_format import (
    BACKUP_NAME,
    CONFIG_VERSION,
    FormatProblem,
    Kept,
    migrated,
    newer_problem,
    put_back,
    set_aside,
    version_of,
)
from protocol.limits import MAX_FRAME_BYTES
from protocol.methods.vaults import VaultEntry
from vaultd.errors import ConfigError, InvalidParams, LimitExceeded, NotFound, ValidationFailed
from vaultd.fsio import ReadRefused, Refusal, locked, read_regular, write_atomic

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

MAX_CONFIG_BYTES = 64 * 1024


MiB = 1024 * 1024


class DaemonLimits(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True, frozen=True):
    """The daemon's own bounds (``"daemon"`` in config.json), read once at start.

    They keep one client from costing the others: connections are capped, a connection that
    never says ``hello`` is closed, replies waiting for a slow reader are bounded globally and
    per connection, and a reader that takes no bytes for ``send_timeout_s`` is dropped.
    """

    max_connections: Annotated[int, msgspec.Meta(ge=1, le=65536)] = 256
    hello_timeout_s: Annotated[float, msgspec.Meta(gt=0, le=3600)] = 10.0
    send_timeout_s: Annotated[float, msgspec.Meta(gt=0, le=3600)] = 30.0
    reply_budget_bytes: Annotated[int, msgspec.Meta(ge=64 * 1024, le=16 * 1024 * MiB)] = 64 * MiB
    connection_reply_bytes: Annotated[int, msgspec.Meta(ge=64 * 1024, le=16 * 1024 * MiB)] = 16 * MiB
    #: One request's frame; lower it to hold less per connection (a note.create of a large note
    #: then does not fit, and is refused as LIMIT).
    max_frame_bytes: Annotated[int, msgspec.Meta(ge=64 * 1024, le=MAX_FRAME_BYTES)] = MAX_FRAME_BYTES


class Config(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    version: int = CONFIG_VERSION
    vaults: list[VaultEntry] = []
    daemon: DaemonLimits = DaemonLimits()


class _Read(msgspec.Struct, kw_only=True, frozen=True):
    """The file as read: the registry, the keys a newer format added (kept to write back), and
    the original bytes when an older format was migrated in memory (the backup to keep)."""

    config: Config
    kept: Kept = []
    migrated_from: tuple[int, bytes] | None = None


class ConfigStore:
    """Reads and updates the registry file of one home."""

    def __init__(self, home: Path) -> None:
        self.path = home / "config.json"
        self._lock_path = home / "config.lock"

    def load(self) -> Config:
        """The current registry; a missing file is an empty one; an older format migrated in memory.

        Raises:
            ConfigError: VALIDATION, the file is unusable; the message names it and why.
        """
        return self._read().config

    def _read(self) -> _Read:
        """The file as this build reads it: the config, the keys it keeps unread, and what it was
        migrated from.

        Raises:
            ConfigError: VALIDATION, the file is unusable; the message names it and why.
        """
        try:
            data, _ = read_regular(self.path, MAX_CONFIG_BYTES)
        except FileNotFoundError:
            return _Read(config=Config())
        except ReadRefused as exc:
            if exc.refusal is Refusal.LINK:
                raise ConfigError(f"{self.path} is a symbolic link; config must be a regular file") from exc
            if exc.refusal is Refusal.NOT_REGULAR:
                raise ConfigError(f"{self.path} is not a regular file") from exc
            if exc.size is not None:
                raise ConfigError(f"{self.path} is {exc.size} bytes, over the {MAX_CONFIG_BYTES}-byte limit") from exc
            raise ConfigError(f"{self.path} is over the {MAX_CONFIG_BYTES}-byte limit") from exc
        except OSError as exc:
            raise ConfigError(f"cannot open {self.path}: {exc.strerror}") from exc
        try:
            doc = msgspec.json.decode(data)
            version = version_of(doc)
        except msgspec.DecodeError as exc:
            raise ConfigError(f"{self.path} is invalid: {exc}; fix or move it, then retry") from exc
        except FormatProblem as exc:
            raise ConfigError(f"{self.path} is invalid: {exc}; fix or move it, then retry") from exc
        kept: Kept = []
        if version > CONFIG_VERSION:
            doc, kept = set_aside(doc, Config.__struct_fields__, DaemonLimits.__struct_fields__)
            doc["version"] = CONFIG_VERSION
        elif version < CONFIG_VERSION:
            doc = migrated(doc)
        try:
            config = msgspec.convert(doc, Config, strict=True)
        except msgspec.ValidationError as exc:
            # msgspec names the field path (e.g. "$.vaults[0].colour"); it never echoes values.
            if version > CONFIG_VERSION:
                raise ConfigError(newer_problem(str(self.path), version, str(exc))) from exc
            raise ConfigError(f"{self.path} is invalid: {exc}; fix or move it, then retry") from exc
        if version > CONFIG_VERSION:
            config = msgspec.structs.replace(config, version=version)  # written back as the newer format it is
        return _Read(config=config, kept=kept, migrated_from=(version, data) if version < CONFIG_VERSION else None)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self._lock_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with locked(self._lock_path):
            yield

    def migrate(self) -> int | None:
        """Write an older file back in this build's format, the original kept beside it.

        Returns the version migrated from, or None when there was nothing to do. A backup that
        exists already is never overwritten (it is the first original).

        Raises:
            ConfigError: VALIDATION, the file is unusable; nothing is written.
        """
        with self._locked():
            read = self._read()
            if read.migrated_from is None:
                return None
            self._save(read)
            return read.migrated_from[0]

    def update(self, change: Callable[[Config], Config]) -> Config:
        """Apply ``change`` to the current registry and save it atomically, under the lock.

        Keys of a newer format this build does not know are written back unchanged; an older
        format is migrated first, with its backup.

        Raises:
            LimitExceeded: LIMIT, the registry would be over ``MAX_CONFIG_BYTES``; nothing is saved.
        """
        with self._locked():
            read = self._read()
            new = change(read.config)
            self._save(msgspec.structs.replace(read, config=new))
            return new

    def _save(self, read: _Read) -> None:
        """Write the config back with the keys it kept, and the backup of a migrated file once.

        Raises:
            LimitExceeded: LIMIT, the registry would be over ``MAX_CONFIG_BYTES``; nothing is saved.
        """
        doc = put_back(msgspec.to_builtins(read.config), read.kept)
        doc = {"version": max(read.config.version, CONFIG_VERSION), **{k: v for k, v in doc.items() if k != "version"}}
        data = msgspec.json.format(msgspec.json.encode(doc), indent=2) + b"\n"
        if len(data) > MAX_CONFIG_BYTES:
            raise LimitExceeded(f"the registry would grow past {MAX_CONFIG_BYTES} bytes; nothing was changed")
        if read.migrated_from is not None:
            old, original = read.migrated_from
            backup = self.path.with_name(BACKUP_NAME.format(version=old))
            if not backup.exists():
                write_atomic(backup, original, mode=0o600)
        write_atomic(self.path, data, mode=0o600)


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
