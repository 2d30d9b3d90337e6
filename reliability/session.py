"""A vaultd process the reliability drivers may kill at any moment, and a client that says so.

The drivers start the real daemon (``python -m vaultd.main``) in an isolated home, optionally with
``VAULTD_FAULTS`` set, talk to it over its socket with JSON-RPC lines, and SIGKILL it at crash
points or from a timer. A call whose connection drops raises :class:`Died`, so the driver knows the
operation was not acknowledged.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from typing import TYPE_CHECKING, Any

from tests.support.harness import accepts
from tests.support.wait import WaitTimeout, wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Home


class Died(Exception):
    """The daemon went away before answering."""


class Refused(Exception):
    """The daemon answered with a JSON-RPC error."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message", "error"))
        self.error = error

    @property
    def code(self) -> str:
        data = self.error.get("data") or {}
        return str(data.get("code", self.error.get("code")))


class Proc:
    """One daemon process; ``start`` returns False if it died before listening."""

    def __init__(self, home: Home, faults: str | None = None, module: str = "vaultd.main") -> None:
        self.home = home
        env = dict(home.env)
        env.pop("VAULTD_FAULTS", None)
        if faults:
            env["VAULTD_FAULTS"] = faults
        self.log = open(home.root / "daemon.out", "ab")  # closed in wait()
        self.proc = subprocess.Popen([sys.executable, "-m", module], env=env, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)

    def listening(self, timeout: float = 30.0) -> bool:
        """True once the socket accepts a connection, False if the daemon exits first (a crash
        point before it listens); raises :class:`TimeoutError` if neither happens within ``timeout``."""
        accepted = False

        def settled() -> bool:
            nonlocal accepted
            if self.proc.poll() is not None:
                return True
            accepted = accepts(self.home.socket)
            return accepted

        wait_until(settled, timeout, f"vaultd to listen on {self.home.socket} or exit", poll=0.01)
        return accepted

    def exited_within(self, seconds: float) -> bool:
        try:
            self.proc.wait(seconds)
            return True
        except subprocess.TimeoutExpired:
            return False

    def kill_now(self) -> None:
        """SIGKILL without waiting (from a timer thread)."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.wait()

    def stop(self) -> int:
        """Graceful stop (SIGTERM), SIGKILL after 15 s."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.wait()

    def wait(self) -> int:
        code = self.proc.wait()
        if not self.log.closed:
            self.log.close()
        return code

    @property
    def killed(self) -> bool:
        return self.proc.poll() == -signal.SIGKILL


class Client:
    """A JSON-RPC client on the daemon's socket that turns a dropped connection into :class:`Died`."""

    def __init__(self, path: Path, timeout: float = 60.0, channel: str = "cli") -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(str(path))
        except OSError as exc:
            self.sock.close()
            raise Died(str(exc)) from exc
        self.buf = b""
        self.next_id = 0
        try:
            self.call("hello", {"client": "reliability", "version": "1", "channel": channel})
        except BaseException:
            self.sock.close()  # a daemon that died before it said hello: Died, never a leaked socket
            raise

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self.next_id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        try:
            self.sock.sendall(json.dumps(msg).encode() + b"\n")
            while b"\n" not in self.buf:
                chunk = self.sock.recv(1 << 16)
                if not chunk:
                    raise Died(f"{method}: connection closed")
                self.buf += chunk
        except OSError as exc:  # reset, broken pipe, timeout
            raise Died(f"{method}: {exc}") from exc
        line, _, self.buf = self.buf.partition(b"\n")
        reply = json.loads(line)
        if "error" in reply:
            raise Refused(reply["error"])
        return reply["result"]

    def close(self) -> None:
        self.sock.close()


def register(home: Home, vault: Path, vault_id: str = "v") -> None:
    """Register ``vault`` in ``home`` with a short-lived daemon, then stop it."""
    p = Proc(home)
    if not p.listening():
        raise RuntimeError("vaultd exited before listening:\n" + (home.root / "daemon.out").read_text())
    c = Client(home.socket)
    c.call("vault.add", {"id": vault_id, "path": str(vault)})
    c.close()
    p.stop()


def connect_ready(home: Home, timeout: float = 60.0) -> Client:
    """A client once the vault answers reads (its recovery and scan are done)."""
    refusals: list[Refused] = []

    def answered() -> Client | None:
        try:
            c = Client(home.socket)
        except Refused as exc:
            refusals.append(exc)
            return None
        try:
            c.call("vault.stats", {"fresh": True})
        except Refused as exc:
            c.close()
            refusals.append(exc)
            return None
        except BaseException:
            c.close()  # a daemon that died mid-call (a crash point): the caller sees Died, not a leaked socket
            raise
        return c

    try:
        ready = wait_until(answered, timeout, f"the vault behind {home.socket} to answer reads", poll=0.05)
    except WaitTimeout as exc:
        raise RuntimeError(f"the vault never became ready: {refusals[-1].error}") from exc
    assert ready is not None  # wait_until returns only what the predicate returned truthy
    return ready
