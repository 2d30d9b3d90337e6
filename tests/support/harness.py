"""A real vaultd subprocess on a real socket in a temporary home, and ways to talk to it.

The one harness for a real daemon: the tests, the reliability drivers (``reliability/stress``)
and the benchmarks (``benchmarks/timed_daemon.py``) all start theirs here. A home is a short temp folder
(AF_UNIX paths are limited to ~100 bytes) holding the daemon's home, its socket and its output;
children get ``VAULTD_HOME`` and ``VAULTD_SOCKET`` and XDG folders inside it, so nothing touches
the user's own daemon.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Self

import msgspec

from protocol.methods.vaults import VaultAddParams
from tests.support import forkserver
from tests.support.wait import wait_until
from vaultctl.client import AGENT_MARKERS

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

REPO = Path(__file__).resolve().parents[2]
SAMPLE_VAULT = REPO / "examples" / "sample-vault"
VAULTCTL = [sys.executable, "-m", "vaultctl.main"]
VAULTD = [sys.executable, "-m", "vaultd.main"]


#: What the processes a test starts never inherit from the run. PYTHONDONTWRITEBYTECODE: an
#: installed vaultd runs from compiled bytecode, and a daemon or vaultctl recompiling every module at
#: each start would be timed and tested at two to three times what a user waits (the Makefile keeps
#: the bytecode in the venv). COLUMNS and LINES: the runner's terminal, not the test's; pytest-xdist
#: sets them in its workers, and vaultctl would wrap its output to them. A test that wants a width
#: passes COLUMNS itself.
INHERITED_NOT = frozenset({"PYTHONDONTWRITEBYTECODE", "COLUMNS", "LINES"}) | {key for key, _ in AGENT_MARKERS}
"""Not passed on; the agent hosts' markers would make every vaultctl speak as an agent."""


@dataclass
class Home:
    """An isolated vaultd home and socket; ``env`` is what every child process gets."""

    root: Path  #: a short temp folder (AF_UNIX paths are limited to ~100 bytes)
    home: Path
    socket: Path
    env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def create(cls, parent: Path | None = None, prefix: str = "vd") -> Self:
        """A new home in a fresh temp folder (under ``parent`` when given)."""
        root = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
        home, sock = root / "home", root / "run" / "v.sock"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "VAULTD_")) and k not in INHERITED_NOT}
        env.update(
            {
                "HOME": str(root / "user"),
                "VAULTD_HOME": str(home),
                "VAULTD_SOCKET": str(sock),
                "XDG_DATA_HOME": str(root / "user" / "data"),
                "XDG_CONFIG_HOME": str(root / "user" / "config"),
                "PYTHONPATH": str(REPO),
                # The meaning model embeds a few passages a second: a test that wants it turns it
                # on (tests/integration/test_meaning.py); every other daemon runs BM25 alone.
                "VAULTD_MEANING_MODEL": "off",
            }
        )
        (root / "user").mkdir()
        return cls(root=root, home=home, socket=sock, env=env)

    @property
    def vault(self) -> Path:
        """Where a test or a benchmark puts the vault it registers (nothing is created here)."""
        return self.root / "vault"

    @property
    def log_file(self) -> Path:
        """The daemon's JSON log."""
        return self.home / "logs" / "vaultd.log"

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


class DaemonProcess(Protocol):
    """What a test uses of a daemon's process: a :class:`subprocess.Popen`, or a daemon forked by
    :mod:`tests.support.forkserver`."""

    @property
    def pid(self) -> int: ...
    @property
    def returncode(self) -> int | Any: ...
    def poll(self) -> int | None: ...
    def wait(self, timeout: float | None = None) -> int: ...
    def send_signal(self, sig: int) -> None: ...
    def terminate(self) -> None: ...
    def kill(self) -> None: ...


class Daemon:
    """A running vaultd process: forked from one that has already imported vaultd when a fork is
    the same as a new ``python -m vaultd.main`` (:mod:`tests.support.forkserver`), a new one otherwise."""

    def __init__(
        self, home: Home, extra_args: Sequence[str] = (), umask: int = -1, *, command: Sequence[str] = VAULTD, wait: bool = True
    ) -> None:
        """``umask``: the one the daemon is started with, as a user's shell would (-1: this one).
        ``command`` starts it (a benchmark times the installed script); ``wait=False`` returns as
        soon as it is spawned, before it listens."""
        self.home = home
        self.log = open(home.root / "daemon.out", "ab")  # closed in stop()
        self.started = time.perf_counter()  #: the instant it was spawned
        forked = forkserver.CLIENT.spawn(command, extra_args, home.env, home.root / "daemon.out", umask)
        self.proc: DaemonProcess
        if forked is not None:
            self.proc = forked
        else:
            self.proc = subprocess.Popen(
                [*command, *extra_args],
                env=home.env,
                stdin=subprocess.DEVNULL,
                stdout=self.log,
                stderr=self.log,
                umask=umask,
            )
        if wait:
            try:
                wait_for_socket(home.socket, self.proc)
            except BaseException:
                # A daemon that never listened is not left running, nor its log file open: a
                # failed start must not turn into a stray process or a resource warning later.
                self.stop(signal.SIGKILL, timeout=5.0)
                raise

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode

    def output(self) -> str:
        return (self.home.root / "daemon.out").read_text(errors="replace")


def accepts(path: Path) -> bool:
    """Whether something listens on the socket at ``path`` (a connection is made and closed)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        s.close()


def wait_for_socket(path: Path, proc: DaemonProcess | None = None, timeout: float = 20.0) -> None:
    def listening() -> bool:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"vaultd exited with {proc.returncode} before listening")
        return accepts(path)

    wait_until(listening, timeout, f"a daemon listening on {path}")


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def vaultctl(
    home: Home, *args: str, input: str | None = None, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 60.0
) -> Result:
    """Run the real vaultctl entry point against the home's daemon."""
    proc = subprocess.run(
        [*VAULTCTL, *args], env={**home.env, **(env or {})}, input=input, capture_output=True, text=True, cwd=cwd or REPO, timeout=timeout
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


class RawClient:
    """A raw socket client for tests that send malformed or hand-made frames."""

    open_clients: list[RawClient] = []  #: closed by the autouse fixture after each test

    def __init__(self, path: Path, timeout: float = 10.0) -> None:
        RawClient.open_clients.append(self)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(str(path))
        self.buf = b""
        self._id = 0

    @classmethod
    def session(cls, path: Path, timeout: float = 120.0) -> RawClient:
        """A client that has said hello, as a person's CLI session."""
        client = cls(path, timeout)
        client.hello()
        return client

    def send_bytes(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send(self, request_id: int, method: str, params: Any = None) -> None:
        """Send a request without waiting for its reply: pipelined, or held at a fault gate."""
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send_bytes(json.dumps(msg).encode() + b"\n")

    def reply_to(self, request_id: int) -> dict[str, Any]:
        """The reply to ``request_id``; notifications and other replies before it are dropped."""
        while True:
            message = self.recv_message()
            if message.get("id") == request_id:
                return message

    def replies(self, count: int) -> dict[int, dict[str, Any]]:
        """The next ``count`` replies by id, notifications dropped (each read bounded by the
        client's socket timeout)."""
        out: dict[int, dict[str, Any]] = {}
        while len(out) < count:
            message = self.recv_message()
            if "id" in message:
                out[message["id"]] = message
        return out

    def recv_line(self) -> bytes:
        """The next reply frame as the daemon sent it, newline included."""
        while b"\n" not in self.buf:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line + b"\n"

    def recv_message(self) -> dict[str, Any]:
        return json.loads(self.recv_line())  # type: ignore[no-any-return]

    def request(self, method: str, params: Any = None) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self._id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send_bytes(json.dumps(msg).encode() + b"\n")
        return self.recv_message()

    def hello(self, channel: str = "cli") -> dict[str, Any]:
        return self.request("hello", {"client": "test", "version": "1", "channel": channel})

    def call(self, method: str, params: Any = None) -> Any:
        reply = self.request(method, params)
        if "error" in reply:
            raise AssertionError(f"{method} failed: {reply['error']}")
        return reply["result"]

    def close(self) -> None:
        self.sock.close()


def copy_sample_vault(dest: Path) -> Path:
    shutil.copytree(SAMPLE_VAULT, dest, symlinks=True, ignore=shutil.ignore_patterns(".vaultd"))
    return dest


REGISTER_TIMEOUT_S = 300.0  #: vault.add answers once the vault is indexed: a busy machine, a large vault


def register(home: Home, root: Path, vault_id: str = "v", **settings: Any) -> dict[str, Any]:
    """Register ``root`` as ``vault_id`` with the running daemon of ``home``, as a person's call
    over its socket, and return vault.add's answer (the entry and its health). ``settings`` are
    vault.add's params (``private_paths=["diary/**"]``, ``schema=SchemaProfile.TYPED``), checked
    against its Struct before anything is sent.

    For a test that is not about the CLI's vault commands: it starts no vaultctl process, whose
    start costs more than the call (a test about ``vaultctl vault add`` runs the CLI itself)."""
    params = msgspec.to_builtins(VaultAddParams(id=vault_id, path=str(root), **settings))
    client = RawClient.session(home.socket, REGISTER_TIMEOUT_S)
    try:
        client.send(1, "vault.add", params)
        reply = client.reply_to(1)
    finally:
        client.close()
    assert "error" not in reply, f"vault.add {vault_id} {root}: {reply['error']}"
    result: dict[str, Any] = reply["result"]
    return result


def registered_vault(home: Home, notes: Mapping[str, str | bytes], vault_id: str = "v", folder: str = "vault", **settings: Any) -> Path:
    """A vault of ``notes`` (path -> text or bytes) in the home's ``folder``, registered as
    ``vault_id`` with ``settings`` (:func:`register`)."""
    root = home.root / folder
    root.mkdir(parents=True, exist_ok=True)
    for rel, data in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            (root / rel).write_bytes(data)
        else:
            (root / rel).write_text(data)
    register(home, root, vault_id, **settings)
    return root


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file's bytes below ``folder`` except the vault's state folder (``.vaultd/``)."""
    out: dict[str, bytes] = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if rel.split("/")[0] == ".vaultd" or not p.is_file() or p.is_symlink():
            continue
        out[rel] = p.read_bytes()
    return out


def iter_lines(path: Path) -> Iterator[str]:
    yield from path.read_text(errors="replace").splitlines()


def start_daemon() -> tuple[Home, Daemon]:
    """A new home and a daemon listening in it."""
    home = Home.create()
    return home, Daemon(home)


def paused_daemon(home: Home, point: str, nth: int) -> tuple[Daemon, Path]:
    """A daemon that pauses the ``nth`` time it reaches the fault point ``point``, until the test
    removes the gate file it leaves: a test holds work at one step and acts meanwhile."""
    gate = home.root / "gate"
    home.env["VAULTD_FAULTS"] = f"pause={point}@{nth}:{gate}"
    return Daemon(home), gate


def wait_at_gate(gate: Path, daemon: Daemon, what: str) -> None:
    """Wait until the paused daemon is held at its gate (it ending first fails at once)."""

    def held() -> bool:
        if daemon.proc.poll() is not None:
            raise AssertionError("the daemon ended")
        return gate.exists()

    wait_until(held, 120, what, poll=0.01)


def assert_alive(home: Home, daemon: Daemon) -> None:
    """The daemon still runs and answers a fresh session as itself."""
    assert daemon.proc.poll() is None, "the daemon exited"
    c = RawClient(home.socket)
    c.hello()
    assert c.call("daemon.status")["pid"] == daemon.proc.pid
