"""The daemon's perimeter: the home lock, the socket file, the peer's uid (a listener a service
manager passes in is taken in :mod:`vaultd.server.activation`).

Order matters: the home lock is taken before the socket is touched, because binding replaces a
socket file, and replacing a live daemon's socket would strand it.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import struct
import sys
from typing import TYPE_CHECKING

from protocol.location import socket_dir_problem
from vaultd.fsio import LockHeld, record_holder, take_lock

if TYPE_CHECKING:
    from pathlib import Path


class StartupError(Exception):
    """The daemon cannot start; the message says why and what to do, ``status`` is the exit code."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def acquire_home_lock(home: Path) -> int:
    """Take ``$VAULTD_HOME/vaultd.lock``; the fd must stay open for the daemon's life."""
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock_path = home / "vaultd.lock"
    try:
        fd = take_lock(lock_path)
    except LockHeld as exc:
        raise StartupError(
            f"another vaultd (pid {exc.holder or 'unknown'}) holds the home {home}; use 'vaultctl daemon stop' first"
        ) from None
    record_holder(fd)
    return fd


def _prepare_socket_dir(folder: Path) -> None:
    """Create a private folder for the socket, or check an existing one and leave it as it is.

    The daemon never changes a folder it did not create: ``VAULTD_SOCKET=/tmp/vaultd.sock`` must
    not turn ``/tmp`` into a 0700 folder. The rule for an existing folder is shared with the
    clients (:func:`protocol.location.socket_dir_problem`).
    """
    try:
        folder.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise StartupError(f"cannot create the socket folder {folder}: {exc.strerror}") from exc
    else:
        os.chmod(folder, 0o700)  # ours: private whatever the umask
        return
    problem = socket_dir_problem(folder, os.getuid())
    if problem is not None:
        raise StartupError(problem)


def _socket_answers(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def bind_socket(path: Path) -> socket.socket:
    """Listen at ``path`` (socket 0600; its folder 0700 when the daemon creates it), replacing a
    stale socket file of this user only."""
    if len(os.fsencode(path)) >= 104:
        raise StartupError(f"socket path {path} is too long for AF_UNIX; set VAULTD_SOCKET to a shorter path")
    _prepare_socket_dir(path.parent)
    if path.exists() or path.is_symlink():
        st = path.lstat()
        if not stat.S_ISSOCK(st.st_mode):
            raise StartupError(f"{path} exists and is not a socket; move it away")
        if st.st_uid != os.getuid():
            raise StartupError(f"the socket {path} belongs to uid {st.st_uid}, not to this user; set VAULTD_SOCKET to a path of your own")
        if _socket_answers(path):
            raise StartupError(f"another daemon is listening on {path}")
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)
    try:
        sock.bind(str(path))
    finally:
        os.umask(old_umask)
    os.chmod(path, 0o600)
    sock.listen(128)
    return sock


def peer_uid(sock: socket.socket) -> int:
    """The connecting process's uid, from the kernel (never from anything the peer says)."""
    if sys.platform.startswith("linux"):
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", creds)
        return int(uid)
    if hasattr(socket, "LOCAL_PEERCRED"):  # macOS and the BSDs: struct xucred
        creds = sock.getsockopt(0, socket.LOCAL_PEERCRED, struct.calcsize("2ih16iP"))
        return int(struct.unpack_from("2i", creds)[1])
    raise OSError(errno.ENOTSUP, "no way to read the peer's credentials on this platform")
