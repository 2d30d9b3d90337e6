"""Taking a vault: its ``.vaultd/`` runtime folder and the lock the daemon holds while it owns it.

The lock is an flock on ``<vault>/.vaultd/lock``, so it dies with the process: a killed daemon
never leaves a vault locked. The folder carries a ``.gitignore`` of ``*`` so a vault that is a
git repository never commits the journal or the lock.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from protocol.methods.daemon import Finding
from protocol.methods.vaults import VaultEntry, VaultHealth, VaultState

RUNTIME_DIR = ".vaultd"
SKIPPED_DIRS = frozenset({".vaultd", ".git", ".obsidian", ".trash"})


class VaultRuntime:
    """One registered vault as the daemon holds it."""

    def __init__(self, entry: VaultEntry) -> None:
        self.entry = entry
        self.root = Path(entry.path)
        self.state = VaultState.INDEXING
        self.message = ""
        self._lock_fd: int | None = None

    @property
    def runtime_dir(self) -> Path:
        return self.root / RUNTIME_DIR

    def take(self) -> bool:
        """Create the runtime folder and take the vault lock; False (and the state says why) if not."""
        if not self.root.is_dir():
            self.state, self.message = VaultState.MISSING, f"{self.root} is not a folder any more"
            return False
        try:
            self.runtime_dir.mkdir(mode=0o700, exist_ok=True)
            ignore = self.runtime_dir / ".gitignore"
            if not ignore.exists():
                ignore.write_text("*\n", encoding="utf-8")
            fd = os.open(self.runtime_dir / "lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError as exc:
            self.state, self.message = VaultState.ERROR, f"cannot prepare {self.runtime_dir}: {exc.strerror}"
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            self.state = VaultState.LOCKED
            self.message = "another process holds the vault lock; stop it, then run 'vaultctl doctor'"
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd
        self.state, self.message = VaultState.READY, ""
        return True

    def release(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    @property
    def owned(self) -> bool:
        return self._lock_fd is not None

    def health(self) -> VaultHealth:
        if self.owned and not self.root.is_dir():
            self.state, self.message = VaultState.MISSING, f"{self.root} is not a folder any more"
        return VaultHealth(id=self.entry.id, path=self.entry.path, state=self.state, message=self.message,
                           notes=self.note_count())

    def note_count(self) -> int:
        return 0

    def doctor_findings(self) -> list[Finding]:
        return []
