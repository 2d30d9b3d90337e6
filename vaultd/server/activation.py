"""Socket activation: the listening socket a service manager opened for us, if one did.

A service manager (systemd's ``vaultd.socket``, launchd's ``Sockets`` entry) owns the socket file
and keeps listening while no daemon runs; it starts the daemon on the first connection and hands
it the listener. The daemon then never binds or unlinks the socket, and may exit when idle: what
arrives meanwhile waits in the manager's listen queue and starts the daemon again.

systemd passes descriptors from 3 on and says so in ``LISTEN_PID`` (which must be our pid, or the
variables were meant for a parent), ``LISTEN_FDS`` (how many) and ``LISTEN_FDNAMES`` (their
``FileDescriptorName=``, colon-separated), as ``sd_listen_fds_with_names(3)`` reads them. The
variables are removed before anything else runs, so no child of the daemon mistakes them for its
own. launchd hands its sockets out through ``launch_activate_socket(3)``, by the name of the
``Sockets`` entry.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fcntl
import os
import socket
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from protocol.methods.service import Activation
from vaultd.server.listener import StartupError

if TYPE_CHECKING:
    from collections.abc import MutableMapping

SOCKET_NAME = "vaultd"
"""The socket's name in both managers: ``FileDescriptorName=`` in systemd/vaultd.socket, the
``Sockets`` key in launchd/org.vaultd.plist."""

LISTEN_FDS_START = 3
_SYSTEMD_VARIABLES = ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES")
_MAX_FDS = 64  #: far above any socket unit of ours; a larger count is a garbled variable


@dataclass(frozen=True, slots=True)
class Inherited:
    """A listener a service manager opened, and which manager it was."""

    sock: socket.socket
    manager: Activation

    @property
    def path(self) -> str | None:
        """The socket file the listener is bound to, when it has one."""
        name = self.sock.getsockname()
        return name if isinstance(name, str) and name.startswith("/") else None


def inherited(environ: MutableMapping[str, str] | None = None) -> Inherited | None:
    """The listener a service manager passed to this process, or None when none did.

    Raises:
        StartupError: the manager passed descriptors that are not one listening Unix stream
            socket named for vaultd; the message says what to fix in the unit.
    """
    env = os.environ if environ is None else environ
    found = from_systemd(env)
    if found is None and sys.platform == "darwin":
        found = from_launchd()
    return found


def from_systemd(env: MutableMapping[str, str]) -> Inherited | None:
    """Read (and remove) the ``LISTEN_*`` variables; take the descriptor named ``vaultd``."""
    pid, count, names = (env.pop(name, None) for name in _SYSTEMD_VARIABLES)
    if not pid or not count or pid != str(os.getpid()):
        return None  # not set, or set for another process (a parent that was activated)
    if not count.isdigit() or not 0 < int(count) <= _MAX_FDS:
        raise StartupError(f"LISTEN_FDS={count!r} is not a count of descriptors; check the socket unit")
    fds = list(range(LISTEN_FDS_START, LISTEN_FDS_START + int(count)))
    for fd in fds:
        _close_on_exec(fd)
    labels = names.split(":") if names else []
    if len(labels) != len(fds):
        labels = []  # sd_listen_fds_with_names: a count that does not match means no names
    if SOCKET_NAME in labels:
        chosen = fds[labels.index(SOCKET_NAME)]
    elif len(fds) == 1:
        chosen = fds[0]
    else:
        raise StartupError(
            f"the service manager passed {len(fds)} sockets and none is named {SOCKET_NAME!r}; "
            f"set FileDescriptorName={SOCKET_NAME} on the one vaultd should serve"
        )
    for fd in fds:
        if fd != chosen:
            os.close(fd)  # not ours to serve; the manager keeps its own copy
    return Inherited(_listener(chosen), Activation.SYSTEMD)


def from_launchd() -> Inherited | None:
    """Ask launchd for the ``vaultd`` socket of our job (macOS only); None when launchd did not start us."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    activate = libc.launch_activate_socket
    activate.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.POINTER(ctypes.c_int)), ctypes.POINTER(ctypes.c_size_t)]
    activate.restype = ctypes.c_int
    fds_out = ctypes.POINTER(ctypes.c_int)()
    count = ctypes.c_size_t(0)
    err = activate(SOCKET_NAME.encode(), ctypes.byref(fds_out), ctypes.byref(count))
    if err in (errno.ESRCH, errno.ENOENT):
        return None  # not a launchd job, or a job without our socket: bind as usual
    if err != 0:
        raise StartupError(f"launchd did not hand over the {SOCKET_NAME!r} socket: {os.strerror(err)}")
    fds = [fds_out[i] for i in range(count.value)]
    libc.free(fds_out)
    if not fds:
        return None
    for fd in fds[1:]:
        os.close(fd)
    _close_on_exec(fds[0])
    return Inherited(_listener(fds[0]), Activation.LAUNCHD)


def _close_on_exec(fd: int) -> None:
    try:
        flags = fcntl.fcntl(fd, fcntl.F_GETFD)
    except OSError as exc:
        raise StartupError(f"the service manager said descriptor {fd} is a socket, but it is not open") from exc
    fcntl.fcntl(fd, fcntl.F_SETFD, flags | fcntl.FD_CLOEXEC)


def _listener(fd: int) -> socket.socket:
    """The descriptor as a socket object, if it is a listening Unix stream socket."""
    try:
        sock = socket.socket(fileno=fd)
    except OSError as exc:
        raise StartupError(f"descriptor {fd} from the service manager is not a socket") from exc
    accepting = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) if hasattr(socket, "SO_ACCEPTCONN") else 1
    if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_STREAM or not accepting:
        sock.detach()
        raise StartupError(
            "the socket from the service manager is not a listening Unix stream socket; "
            "use ListenStream=PATH (systemd) or SockFamily Unix, SockType stream (launchd)"
        )
    return sock
