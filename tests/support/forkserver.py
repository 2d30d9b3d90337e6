"""Daemons forked from a process that has already imported vaultd, one fork per test.

Every integration test starts its own daemon, and a daemon's start was mostly the interpreter
importing vaultd: 0.35 s of the 0.45 s of CPU it spends before it listens, paid again by every
test. The fork server pays it once per test process (per pytest-xdist worker): it imports what
``python -m vaultd.main`` imports before it listens, then forks a daemon on request. Isolation is
unchanged: each test still has its own daemon process, home, socket and environment, and the fork
runs ``vaultd.main`` as ``python -m`` does (:func:`runpy.run_module` as ``__main__``, with the
test's ``sys.argv``, environment, working folder, umask and output), exiting as the interpreter
would (non-daemon threads joined, ``atexit`` run, streams flushed).

What a fork cannot reproduce goes the ordinary way, a new interpreter (:meth:`_Client.spawn`
answers None): another command than ``python -m vaultd.main``; an environment whose value differs
from the server's for a variable the interpreter reads as it starts (``PYTHON*``: a
``sitecustomize`` that hides an extra; the locale) or that a module read while the server imported
it (``VAULTD_JOURNAL_KEEP``, read once as ``vaultd.txn.prune`` loads: the server records every
variable read during its imports); a platform other than Linux; or ``VAULTD_TEST_FRESH_DAEMONS=1``
in the environment pytest runs in (every daemon then a new interpreter, as before). Only the test
suite forks (tests/conftest.py turns it on): a benchmark measures a daemon as a user starts it.

The server is the daemons' parent: it reaps them and reports each one's exit status on the
connection that asked for it, and signals go through it, so a signal never reaches a pid that was
reaped and reused. :class:`ForkedProcess` offers what the tests use of :class:`subprocess.Popen`.
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import runpy
import select
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

REPO = Path(__file__).resolve().parents[2]
MODULE = "vaultd.main"
FRESH_ENV = "VAULTD_TEST_FRESH_DAEMONS"
#: Read once, before any test's fixtures clear ``VAULTD_*`` from the environment.
FRESH = os.environ.get(FRESH_ENV, "") not in ("", "0")
#: The variables that change how an interpreter starts, which a fork has already done: a request
#: whose values differ from the server's gets a new interpreter instead.
_STARTUP_PREFIXES = ("PYTHON", "LC_")
_STARTUP_KEYS = frozenset({"LANG", "LANGUAGE"})
#: The fork server's own variables, never passed to it or compared.
_PER_HOME_PREFIXES = ("VAULTD_", "XDG_")
_PER_HOME_KEYS = frozenset({"HOME"})


def _differing(read: set[str], own: Mapping[str, str], wanted: Mapping[str, str]) -> list[str]:
    """The variables whose value in ``wanted`` is not the server's own, among those the imports
    read and those the interpreter reads as it starts."""
    startup = {k for k in (*own, *wanted) if k.startswith(_STARTUP_PREFIXES) or k in _STARTUP_KEYS}
    return sorted(k for k in read | startup if own.get(k) != wanted.get(k))


REPORT_WAIT_S = 30.0  #: how long an ended daemon's status may take to come from the server


def _ended(pid: int) -> bool:
    """Whether ``pid`` has ended: gone, or every thread of it a zombie (it has exited and waits
    for the server to reap it; a first thread that ended while others run is not an end)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return True
    for task in tasks:
        try:
            stat = Path(f"/proc/{pid}/task/{task}/stat").read_text(errors="replace")
        except OSError:
            continue  # that thread went while we looked
        if stat.rpartition(")")[2].split()[:1] not in (["Z"], ["X"]):
            return False
    return True


class ForkedProcess:
    """A daemon forked by the server, as much of :class:`subprocess.Popen` as the tests use."""

    def __init__(self, args: Sequence[str], sock: socket.socket, pid: int, buffered: bytes = b"") -> None:
        self.args = list(args)
        self.pid = pid
        self.returncode: int | None = None
        self._sock = sock
        self._buf = buffered
        self._signalled = False
        self._lock = threading.Lock()

    def _read(self, timeout: float | None) -> bool:
        """Take what the server sent within ``timeout`` (None: until something comes); whether
        anything came. The end of the connection without an exit status is the server gone."""
        if b"\n" not in self._buf:
            ready, _, _ = select.select([self._sock], [], [], timeout)
            if not ready:
                return False
            chunk = self._sock.recv(1 << 12)
            if not chunk:
                self._sock.close()
                raise RuntimeError(f"the fork server ended before reporting how daemon {self.pid} exited")
            self._buf += chunk
        while b"\n" in self._buf:
            line, _, self._buf = self._buf.partition(b"\n")
            message = json.loads(line)
            if "exit" in message:
                self.returncode = int(message["exit"])
                self._sock.close()
            elif "signalled" in message:
                self._signalled = True
        return True

    def poll(self) -> int | None:
        """The exit status once the daemon has exited, as Popen's: a process that has ended
        (every thread gone, waiting to be reaped, or reaped) has a status at once, so its report
        from the server is waited for rather than answered None."""
        with self._lock:
            while self.returncode is None and self._read(0):
                pass
            if self.returncode is None and _ended(self.pid):
                deadline = time.monotonic() + REPORT_WAIT_S
                while self.returncode is None and (left := deadline - time.monotonic()) > 0:
                    self._read(left)
            return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while self.returncode is None:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
                self._read(left)
            return self.returncode

    def send_signal(self, sig: int) -> None:
        """Signal the daemon unless it has exited, as Popen does: the server sends it only to a
        child it has not reaped, and answers once it has."""
        with self._lock:
            if self.returncode is not None:
                return
            self._signalled = False
            self._sock.sendall(json.dumps({"signal": int(sig)}).encode() + b"\n")
            while self.returncode is None and not self._signalled:
                self._read(None)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def __del__(self) -> None:
        self._sock.close()


class _Client:
    """The test process's side: starts the server on first use, asks it for daemons."""

    def __init__(self) -> None:
        #: Set by the test suite (tests/conftest.py); the benchmarks and the reliability drivers,
        #: which time and measure daemons, start each one as users do.
        self.enabled = False
        self._lock = threading.Lock()
        self._server: subprocess.Popen[bytes] | None = None
        self._path: Path | None = None

    def _start(self) -> Path:
        if self._server is not None and self._server.poll() is None and self._path is not None:
            return self._path
        folder = Path(tempfile.mkdtemp(prefix="vfs"))
        path = folder / "s"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        listener.listen(128)  # connections wait here while the server imports
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(_PER_HOME_PREFIXES) and k not in _PER_HOME_KEYS and k not in ("PYTHONDONTWRITEBYTECODE", "COLUMNS", "LINES")
        }
        env["PYTHONPATH"] = str(REPO)
        out = open(folder / "server.out", "ab")
        # stdin is a pipe held open by this process alone: the server ends when this process does
        self._server = subprocess.Popen(
            [sys.executable, "-m", "tests.support.forkserver", str(listener.fileno())],
            env=env,
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=out,
            pass_fds=[listener.fileno()],
        )
        out.close()
        listener.close()
        self._path = path
        atexit.register(self._stop, self._server, folder)
        return path

    @staticmethod
    def _stop(server: subprocess.Popen[bytes], folder: Path) -> None:
        if server.stdin is not None:
            server.stdin.close()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        for name in ("s", "server.out"):
            (folder / name).unlink(missing_ok=True)
        folder.rmdir()

    def spawn(self, command: Sequence[str], args: Sequence[str], env: Mapping[str, str], output: Path, umask: int) -> ForkedProcess | None:
        """The daemon, forked; None when a fork would not be what ``command`` with ``env`` starts
        (the caller then starts a new interpreter)."""
        if not self.enabled or FRESH or not sys.platform.startswith("linux") or list(command) != [sys.executable, "-m", MODULE]:
            return None
        with self._lock:
            path = self._start()
        if umask < 0:
            umask = os.umask(0o022)
            os.umask(umask)
        request = {"args": list(args), "env": dict(env), "cwd": os.getcwd(), "umask": umask, "output": str(output)}
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(str(path))
            sock.sendall(json.dumps(request).encode() + b"\n")
            buf = b""
            while b"\n" not in buf:
                chunk = sock.recv(1 << 12)
                if not chunk:
                    said = (path.parent / "server.out").read_text(errors="replace")[-4000:]
                    raise RuntimeError(f"the fork server ended without starting a daemon; it said:\n{said}")
                buf += chunk
        except BaseException:
            sock.close()
            raise
        line, _, rest = buf.partition(b"\n")
        answer = json.loads(line)
        if "pid" not in answer:  # {"fresh": [the variables that differ]}
            sock.close()
            return None
        return ForkedProcess([sys.executable, "-m", MODULE, *args], sock, int(answer["pid"]), rest)


CLIENT = _Client()


# -- the server -------------------------------------------------------------------------------


def _preload_recording() -> set[str]:
    """:func:`_preload`, and the names of the environment variables read meanwhile (a module that
    reads one as it loads keeps the server's value, which a fork would inherit)."""
    read: set[str] = set()
    environ_type = type(os.environ)
    getitem = environ_type.__getitem__

    def recording(self: Any, key: str) -> str:
        read.add(key)
        return getitem(self, key)

    environ_type.__getitem__ = recording  # type: ignore[method-assign]
    try:
        _preload()
    finally:
        environ_type.__getitem__ = getitem  # type: ignore[method-assign]
    return read


def _preload() -> None:
    """What ``python -m vaultd.main`` imports before it listens, in its order: ``rich`` left out
    before structlog is imported, as the daemon does; the event loop's backend; every method
    handler (the daemon imports each at its method's first call; a fork has them all at once)."""
    import vaultd.main

    vaultd.main._leave_out_terminal_drawing()
    import structlog  # noqa: F401

    import protocol.methods.service  # noqa: F401
    import vaultd.content_mode
    import vaultd.daemon
    import vaultd.server.activation
    import vaultd.server.listener
    import vaultd.server.notify
    from vaultd.api import load_handlers

    load_handlers()
    import anyio._backends._asyncio  # noqa: F401


def _become_daemon(request: dict[str, Any]) -> None:
    """In the fork: the process state a new ``python -m vaultd.main`` would have in this test."""
    os.chdir(request["cwd"])
    os.umask(int(request["umask"]))
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    out = os.open(request["output"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()  # TZ as the test's environment has it
    sys.path[0] = os.getcwd()  # what ``-m`` puts first
    sys.argv = [MODULE, *request["args"]]  # argv[0] becomes the module's file, as with ``-m``


def _read_request(conn: socket.socket) -> dict[str, Any]:
    conn.settimeout(30)
    buf = b""
    while b"\n" not in buf:
        chunk = conn.recv(1 << 16)
        if not chunk:
            raise ConnectionError("the test process left before asking")
        buf += chunk
    conn.settimeout(None)
    request: dict[str, Any] = json.loads(buf.partition(b"\n")[0])
    return request


def _send(conn: socket.socket, message: dict[str, Any]) -> None:
    try:
        conn.sendall(json.dumps(message).encode() + b"\n")
    except OSError:
        pass  # the test process closed its end; the daemon still runs and is still reaped


def serve(listener: socket.socket, read: set[str], own_env: dict[str, str]) -> None:
    """Fork a daemon for each connection; report each one's exit on its connection; end when
    stdin (the test process) closes. ``own_env`` is the server's environment as it started,
    before the imports: a variable vaultd sets for itself as it loads (one BLAS thread) is set
    the same way by a new interpreter, so only what the server was given is compared."""
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(wake_r, selectors.EVENT_READ, "child")
    sel.register(0, selectors.EVENT_READ, "parent")
    conns: dict[int, socket.socket] = {}  # pid -> its connection, until reaped
    bufs: dict[int, bytes] = {}

    def close_all_in_child() -> None:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        sel.close()
        listener.close()
        for c in conns.values():
            c.close()
        os.close(wake_r)
        os.close(wake_w)

    def fork(conn: socket.socket, request: dict[str, Any]) -> int:
        """The daemon's pid; in the daemon, it runs vaultd.main and whatever ends it (its
        ``sys.exit``, an exception) ends the process as it would a new interpreter's: through
        the interpreter's own exit (threads joined, ``atexit``, finalization, the status)."""
        pid = os.fork()
        if pid:
            return pid
        try:
            conn.close()
            close_all_in_child()
            _become_daemon(request)
        except BaseException:  # noqa: BLE001 - a fork that failed to set up must not return into the server's loop
            traceback.print_exc()
            os._exit(70)
        runpy.run_module(MODULE, run_name="__main__", alter_sys=True)
        sys.exit(0)  # as a module that returns: status 0

    def reap() -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = conns.pop(pid, None)
            bufs.pop(pid, None)
            if conn is not None:
                sel.unregister(conn)
                _send(conn, {"exit": os.waitstatus_to_exitcode(status)})
                conn.close()

    while True:
        for key, _ in sel.select():
            if key.data == "accept":
                conn, _ = listener.accept()
                try:
                    request = _read_request(conn)
                except (OSError, ValueError):
                    conn.close()
                    continue
                differing = _differing(read, own_env, request["env"])
                if differing:
                    _send(conn, {"fresh": differing})
                    conn.close()
                    continue
                pid = fork(conn, request)
                conns[pid] = conn
                bufs[pid] = b""
                sel.register(conn, selectors.EVENT_READ, pid)
                _send(conn, {"pid": pid})
            elif key.data == "child":
                while True:
                    try:
                        if not os.read(wake_r, 512):
                            break
                    except BlockingIOError:
                        break
                reap()
            elif key.data == "parent":
                if not os.read(0, 512):
                    return  # the test process ended; running daemons go on, orphaned as before
            else:
                pid = key.data
                conn = conns[pid]
                try:
                    chunk = conn.recv(1 << 12)
                except OSError:
                    chunk = b""
                if not chunk:  # the test process let go of this daemon; it is still reaped
                    sel.unregister(conn)
                    conn.close()
                    del conns[pid]
                    bufs.pop(pid, None)
                    continue
                bufs[pid] += chunk
                if b"\n" in bufs[pid]:  # one signal at a time: the client waits for the answer
                    line, _, bufs[pid] = bufs[pid].partition(b"\n")
                    reap()  # a child that already exited is reported, not signalled
                    if pid in conns:
                        os.kill(pid, int(json.loads(line)["signal"]))
                        _send(conn, {"signalled": True})


def main(fd: int) -> None:
    listener = socket.socket(fileno=fd)
    own_env = dict(os.environ)
    read = _preload_recording()
    assert threading.active_count() == 1, "the imports started a thread: forking now would copy it half-made"
    gc.collect()
    gc.freeze()  # the imported objects stay shared with the forks instead of being copied by their collector
    serve(listener, read, own_env)


if __name__ == "__main__":
    main(int(sys.argv[1]))
