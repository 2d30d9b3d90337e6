"""Who is on the other end of the daemon's socket, decided before the client sends a byte.

A note's body is only as private as the process it is sent to. Two checks guard it:

* the socket's folder passes the rule the daemon applies before it binds
  (:func:`protocol.location.socket_dir_problem`): it is the user's (or root's), and no other user
  may write in it unless it is sticky, as ``/tmp`` is, where nobody can replace another's socket
  (a name another user took first there is caught by the next check);
* the process listening must run as the user (the kernel's ``SO_PEERCRED`` / ``getpeereid``,
  never anything the peer says), which also catches a folder renamed or replaced between the
  check and ``connect``.

The peer decision is a pure function of numbers so it can be tested without another user; the
functions that read the numbers from the system are the thin layer around them.
"""

from __future__ import annotations

import errno
import os
import socket
import struct
import sys
from typing import TYPE_CHECKING

from protocol.location import socket_dir_problem

if TYPE_CHECKING:
    from pathlib import Path


def peer_problem(socket_path: str, peer: int, me: int) -> str | None:
    """Why a client must not talk to a server running as ``peer``, or None when it is the user."""
    if peer != me:
        return f"the process listening on {socket_path} runs as uid {peer}, not as you (uid {me}); nothing was sent to it"
    return None


def check_folder(socket_path: Path) -> str | None:
    """The daemon's socket-place rule applied before connecting; a missing folder is no problem
    yet (there is no socket to connect to, and the daemon creates it private)."""
    folder = socket_path.parent
    if not os.path.lexists(folder):
        return None
    return socket_dir_problem(folder, os.geteuid())


def check_peer(sock: socket.socket, socket_path: Path) -> str | None:
    """The peer rule applied to a connected socket."""
    try:
        uid = peer_uid(sock)
    except OSError as exc:
        return f"cannot learn who listens on {socket_path}: {exc.strerror or exc}; nothing was sent to it"
    return peer_problem(str(socket_path), uid, os.geteuid())


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a connected Unix socket, from the kernel."""
    if sys.platform.startswith("linux"):
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", creds)
        return int(uid)
    if sys.platform == "darwin" or "bsd" in sys.platform:  # pragma: no cover - not run on the Linux CI
        # getpeereid(3) is LOCAL_PEERCRED at level SOL_LOCAL (0): struct xucred
        # {u_int cr_version; uid_t cr_uid; short cr_ngroups; gid_t cr_groups[16]; ...}. Untested here.
        level = getattr(socket, "SOL_LOCAL", 0)
        option = getattr(socket, "LOCAL_PEERCRED", 1)
        creds = sock.getsockopt(level, option, struct.calcsize("2ih16iP"))
        return int(struct.unpack_from("2i", creds)[1])
    raise OSError(errno.ENOTSUP, "no way to read the peer's credentials on this platform")
