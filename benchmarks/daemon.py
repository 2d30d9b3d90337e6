"""A vaultd subprocess in a fresh temporary home, and blocking socket clients to it.

Like ``tests/support/daemon.py``: a short temp folder (AF_UNIX paths are limited to ~100 bytes)
holding the home, the socket and the daemon's output; the child gets ``VAULTD_HOME`` and
``VAULTD_SOCKET`` and no ``XDG_*`` variable, so nothing touches the user's own daemon.
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
from pathlib import Path
from typing import Any

import msgspec

from protocol.methods.common import Channel
from vaultctl.client import Client

BIN = Path(sys.executable).parent
VAULT_ID = "bench"


def _command(name: str, module: str) -> list[str]:
    script = BIN / name
    return [str(script)] if script.exists() else [sys.executable, "-m", module]


VAULTD = _command("vaultd", "vaultd.main")
VAULTCTL = _command("vaultctl", "vaultctl.main")


class Home:
    """A temp folder holding a vaultd home, its socket, and the vault copy under test."""

    def __init__(self, parent: Path | None = None) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="vb", dir=parent))
        self.home = self.root / "home"
        self.socket = self.root / "v.sock"
        self.vault = self.root / "vault"
        (self.root / "user").mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "VAULTD_"))}
        env.update({
            "HOME": str(self.root / "user"), "VAULTD_HOME": str(self.home), "VAULTD_SOCKET": str(self.socket),
            "VAULTD_NO_AUTOSTART": "1", "VAULTD_VAULT": VAULT_ID,
        })
        self.env = env

    @property
    def log(self) -> Path:
        return self.home / "logs" / "vaultd.log"

    def ready_seconds(self) -> list[float]:
        """The daemon's own ``index ready`` seconds, in log order."""
        out = []
        if self.log.exists():
            for line in self.log.read_text(errors="replace").splitlines():
                if '"index ready"' in line:
                    out.append(float(json.loads(line)["seconds"]))
        return out

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


class Daemon:
    """A running ``vaultd``; ``started`` is the perf_counter instant it was spawned."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self._out = open(home.root / "daemon.out", "ab")  # noqa: SIM115 - closed in stop()
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(VAULTD, env=home.env, stdin=subprocess.DEVNULL, stdout=self._out,
                                     stderr=self._out)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def client(self, timeout: float = 30.0) -> Client:
        """A session as soon as the socket accepts (polling every 2 ms)."""
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"vaultd exited with {self.proc.returncode}; see {self.home.root / 'daemon.out'}")
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(str(self.home.socket))
            except OSError:
                sock.close()
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no vaultd on {self.home.socket} after {timeout} s") from None
                time.sleep(0.002)
                continue
            sock.settimeout(600)
            return Client(sock, Channel.CLI, "vaultd-bench")

    def stop(self, timeout: float = 30.0) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._out.close()


def call(client: Client, method: str, params: dict[str, Any]) -> Any:
    """A call whose result is decoded loosely (the benchmark reads a field or two)."""
    return msgspec.json.decode(client.call_raw(method, params))
