"""A vaultd subprocess in a fresh temporary home, and blocking socket clients to it.

The home and the process come from the one harness, :mod:`tests.support.harness`; what is added
here is what the benchmarks time: the installed script, the socket polled every 2 ms, sessions
through vaultctl's own client.
"""

from __future__ import annotations

import json
import signal
import socket
import sys
from pathlib import Path
from typing import Any, Self

import msgspec

from protocol.methods.common import Channel
from tests.support import harness
from tests.support.wait import wait_until
from vaultctl.client import CallError, Client

BIN = Path(sys.executable).parent
VAULT_ID = "bench"


def _command(name: str, module: str) -> list[str]:
    script = BIN / name
    return [str(script)] if script.exists() else [sys.executable, "-m", module]


VAULTD = _command("vaultd", "vaultd.main")
VAULTCTL = _command("vaultctl", "vaultctl.main")


class Home(harness.Home):
    """A harness home holding the vault copy under test; its clients never autostart a daemon."""

    @classmethod
    def create(cls, parent: Path | None = None, prefix: str = "vb") -> Self:
        home = super().create(parent, prefix)
        home.env.update({"VAULTD_NO_AUTOSTART": "1", "VAULTD_VAULT": VAULT_ID})
        return home

    def ready_seconds(self) -> list[float]:
        """The daemon's own ``index ready`` seconds, in log order."""
        out = []
        if self.log_file.exists():
            for line in self.log_file.read_text(errors="replace").splitlines():
                if '"index ready"' in line:
                    out.append(float(json.loads(line)["seconds"]))
        return out


class Daemon(harness.Daemon):
    """The installed ``vaultd`` script, timed from its spawn; ``client()`` waits for the socket."""

    def __init__(self, home: Home) -> None:
        super().__init__(home, command=VAULTD, wait=False)

    def client(self, timeout: float = 30.0) -> Client:
        """A session as soon as the socket accepts (polling every 2 ms: start-up is what is timed)."""

        def accepted() -> socket.socket | None:
            if self.proc.poll() is not None:
                raise RuntimeError(f"vaultd exited with {self.proc.returncode}; see {self.home.root / 'daemon.out'}")
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(str(self.home.socket))
            except OSError:
                sock.close()
                return None
            return sock

        sock = wait_until(accepted, timeout, f"vaultd on {self.home.socket}", poll=0.002)
        assert sock is not None  # wait_until returns only what the predicate returned truthy
        sock.settimeout(600)
        return Client(sock, Channel.CLI, "vaultd-bench")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        return super().stop(sig, timeout)


def call(client: Client, method: str, params: dict[str, Any]) -> Any:
    """A call whose result is decoded loosely (the benchmark reads a field or two)."""
    return msgspec.json.decode(client.call_raw(method, params))


def answers_a_listing(client: Client) -> bool:
    """Whether the vault answers ``note.list`` yet (a call refused while it indexes is no)."""
    try:
        call(client, "note.list", {"vault": VAULT_ID, "limit": 1})
    except CallError:
        return False
    return True
