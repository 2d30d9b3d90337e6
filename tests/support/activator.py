"""A socket-activating service manager for tests, passing the socket exactly as systemd does.

``systemd-socket-activate`` starts a daemon once; systemd's socket units start it again whenever
the listener has a connection waiting and no instance runs, which is what an idle exit relies
on. This keeps the listener for the whole test, as ``vaultd.socket`` would (mode 0600 in a 0700
folder), and each time a connection waits and no daemon runs, starts one with the listener as
descriptor 3 and ``LISTEN_FDS=1``, ``LISTEN_FDNAMES=vaultd``, ``LISTEN_PID`` set to the daemon's
own pid (the shell that sets it ``exec``s the daemon, keeping its pid, as systemd sets it in the
child between fork and exec), and ``NOTIFY_SOCKET`` naming a datagram socket whose messages it
keeps, as ``Type=notify`` would. While a daemon runs it does not look at the listener, as
systemd does not.
"""

from __future__ import annotations

import fcntl
import os
import select
import shlex
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path


def high_fd(sock: socket.socket) -> int:
    """A copy of the socket's descriptor numbered above 3 and the like, so that a shell can move
    it to 3 (``3<&N N<&-``; bash, as dash takes single digits only) without clobbering another
    descriptor it is also given; the caller closes it."""
    return fcntl.fcntl(sock.fileno(), fcntl.F_DUPFD_CLOEXEC, 20)


@dataclass
class Run:
    """One activation: the daemon's pid and, once it ended, its exit status."""

    pid: int
    status: int | None = None


@dataclass
class Activator:
    """Owns the listener at ``socket_path`` and starts ``command`` on demand (call :meth:`start`)."""

    socket_path: Path
    command: Sequence[str]
    env: dict[str, str]
    output: Path
    runs: list[Run] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    def start(self) -> None:
        self.socket_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            self.listener.bind(str(self.socket_path))
        finally:
            os.umask(old)
        self.listener.listen(128)
        self.notify_path = self.socket_path.parent / "notify"
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(str(self.notify_path))
        self._stop = threading.Event()
        self._current: subprocess.Popen[bytes] | None = None
        self._thread = threading.Thread(target=self._loop, name="activator", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        with open(self.output, "ab") as out:
            while not self._stop.is_set():
                self._drain_notices()
                readable, _, _ = select.select([self.listener], [], [], 0.05)
                if not readable or self._stop.is_set():
                    continue
                proc = self._spawn(out)
                run = Run(proc.pid)
                self.runs.append(run)
                while proc.poll() is None:
                    self._drain_notices(timeout=0.05)
                run.status = proc.returncode
                self._current = None
            self._drain_notices()

    def _spawn(self, out: BinaryIO) -> subprocess.Popen[bytes]:
        fd = high_fd(self.listener)
        # The listener becomes descriptor 3 and its other number is closed: the daemon sees
        # exactly what systemd gives it.
        script = f"LISTEN_PID=$$ exec {shlex.join(self.command)} 3<&{fd} {fd}<&-"
        env = {**self.env, "LISTEN_FDS": "1", "LISTEN_FDNAMES": "vaultd", "NOTIFY_SOCKET": str(self.notify_path)}
        try:
            proc = subprocess.Popen(["bash", "-c", script], env=env, pass_fds=(fd,), stdin=subprocess.DEVNULL, stdout=out, stderr=out)
        finally:
            os.close(fd)
        self._current = proc
        return proc

    def _drain_notices(self, timeout: float = 0.0) -> None:
        readable, _, _ = select.select([self.notify], [], [], timeout)
        while readable:
            self.notices.append(self.notify.recv(4096).decode())
            readable, _, _ = select.select([self.notify], [], [], 0)

    def wait_for_runs_ended(self, count: int, timeout: float) -> None:
        """Wait until ``count`` activations have ended."""
        deadline = time.monotonic() + timeout
        while sum(1 for r in self.runs if r.status is not None) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"expected {count} ended runs within {timeout} s; runs: {self.runs}")
            time.sleep(0.02)

    def stop(self) -> None:
        """Stop the running daemon (SIGTERM, as ``systemctl stop`` would) and the loop."""
        self._stop.set()
        proc = self._current
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._thread.join(20)
        self.listener.close()
        self.notify.close()
