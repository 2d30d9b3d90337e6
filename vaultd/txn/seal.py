"""The journal key: how the daemon tells the journals it wrote from ones that arrived with a vault.

A vault folder can bring its own ``.vaultd/journal/`` (an unzip, a sync tool, a copied disk), and
recovery and undo write what a journal says. So every journal this daemon writes is sealed with
an HMAC-SHA256 under a key that never leaves ``$VAULTD_HOME``, and nothing in a journal is used
before its seal checks. The key is 32 random bytes in ``journal.key`` (mode 0600), created once,
whole or not at all, and never logged or sent anywhere.

The same key tags the names of the daemon's own transient journal folders (one being built, one
being pruned), which have no sealed manifest to check, so recovery can finish deleting its own
leftovers and leave every other folder alone.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import secrets
import stat
import threading
from typing import TYPE_CHECKING

from vaultd.errors import Unavailable

if TYPE_CHECKING:
    from pathlib import Path

KEY_FILE = "journal.key"
KEY_BYTES = 32
TAG_CHARS = 32  #: hex characters of a folder tag: 128 bits


class KeyUnusable(Unavailable):
    """The key file exists but cannot be trusted; journals are neither written nor used."""


_lock = threading.Lock()
_keys: dict[Path, bytes] = {}
_installed: bytes | None = None


def _read_key(path: Path) -> bytes:
    """The key's bytes, read only from a private regular file of the user's: a key others can read
    seals nothing.

    Raises:
        KeyUnusable: UNAVAILABLE, the file is not the user's regular file, others may read it, or
            its size is wrong.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            raise KeyUnusable(f"{path} is not a regular file owned by this user; move it away, then restart")
        if stat.S_IMODE(st.st_mode) & 0o077:
            raise KeyUnusable(
                f"{path} is readable by others (mode {stat.S_IMODE(st.st_mode):o}); "
                "move it away, then restart (kept journals then need checking by hand)"
            )
        data = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) != KEY_BYTES:
        raise KeyUnusable(f"{path} is not a journal key ({len(data)} bytes); move it away, then restart")
    return data


def _create_key(path: Path) -> None:
    """Write a new key beside ``path`` and link it into place, so the key file appears whole.

    ``link`` fails when the name exists and never follows it, which is O_EXCL for a file that
    must not appear half-written.
    """
    tmp = path.with_name(f".{KEY_FILE}-{secrets.token_hex(8)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        try:
            os.write(fd, secrets.token_bytes(KEY_BYTES))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path, follow_symlinks=False)
        except FileExistsError:
            return  # made meanwhile; that one is the key
        dfd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    finally:
        tmp.unlink(missing_ok=True)


def load_key(home: Path) -> bytes:
    """The home's journal key, created on first use.

    Raises:
        KeyUnusable: (UNAVAILABLE) the key file is not a private regular file of the right size.
    """
    with _lock:
        if home in _keys:
            return _keys[home]
        path = home / KEY_FILE
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            key = _read_key(path)
        except FileNotFoundError:
            _create_key(path)
            key = _read_key(path)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise KeyUnusable(f"{path} is a symbolic link; move it away, then restart") from exc
            raise
        _keys[home] = key
        return key


def install(home: Path) -> bytes:
    """Load the home's key and make it the one journal writes and undo use in this process."""
    global _installed
    key = load_key(home)
    _installed = key
    return key


def installed_key() -> bytes:
    """The key of the daemon's home.

    Raises:
        Unavailable: no key was installed (no vault was taken yet).
    """
    if _installed is None:
        raise Unavailable("the journal key is not loaded; restart the daemon")
    return _installed


def seal(key: bytes, manifest: bytes) -> bytes:
    """The MAC stored beside a manifest: hex HMAC-SHA256 over its exact bytes."""
    return hmac.new(key, manifest, hashlib.sha256).hexdigest().encode("ascii")


def verify(key: bytes, manifest: bytes, mac: bytes) -> bool:
    return hmac.compare_digest(seal(key, manifest), mac)


def folder_tag(key: bytes, op_id: str, state: str) -> str:
    """A tag for the name of a transient journal folder (``state`` is ``tmp`` or ``dead``)."""
    msg = f"vaultd-journal-folder\0{state}\0{op_id}".encode()
    return hmac.new(key, msg, hashlib.sha256).hexdigest()[:TAG_CHARS]
