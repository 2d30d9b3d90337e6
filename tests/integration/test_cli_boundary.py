"""What reaches the user when something unexpected happens: one line and an exit status, never a
traceback unless asked for with VAULTD_DEBUG=1."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.harness import REPO, VAULTCTL, Daemon, Home

if TYPE_CHECKING:
    from collections.abc import Iterator

# A listener of the user's own uid that answers ``hello`` with a result of another shape, as a
# daemon of an incompatible version might: the client cannot decode it.
_ODD_PEER = textwrap.dedent("""
    import json, socket, sys
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lsock.bind(sys.argv[1]); lsock.listen(4)
    print("ready", flush=True)
    while True:
        conn, _ = lsock.accept()
        buf = b""
        while b"\\n" not in buf:
            chunk = conn.recv(65536)
            if not chunk:
                break
            buf += chunk
        if buf:
            req = json.loads(buf.split(b"\\n")[0])
            conn.sendall(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": {"surprise": [1, 2]}}).encode()
                         + b"\\n")
        conn.close()
""")


@pytest.fixture
def odd_peer() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="vb"))
    sock = root / "v.sock"
    proc = subprocess.Popen([sys.executable, "-c", _ODD_PEER, str(sock)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    yield sock
    proc.kill()
    proc.wait()
    proc.stdout.close()
    shutil.rmtree(root, ignore_errors=True)


def _run(home: Home, sock: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*VAULTCTL, *args], env={**home.env, "VAULTD_SOCKET": str(sock), **env}, capture_output=True, text=True, cwd=REPO, timeout=60
    )


def test_an_unexpected_failure_is_one_line_and_exit_70(home: Home, odd_peer: Path) -> None:
    r = _run(home, odd_peer, "status")
    assert r.returncode == 70, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("vaultctl: internal error (ValidationError"), lines
    assert "VAULTD_DEBUG=1" in lines[0]


def test_vaultd_debug_shows_the_traceback(home: Home, odd_peer: Path) -> None:
    r = _run(home, odd_peer, "status", VAULTD_DEBUG="1")
    assert r.returncode == 70
    assert "Traceback (most recent call last)" in r.stderr and "msgspec.ValidationError" in r.stderr


def test_an_argument_that_is_not_utf8_is_a_usage_error(daemon: Daemon) -> None:
    env = {k.encode(): v.encode() for k, v in daemon.home.env.items()}
    r = subprocess.run(
        [os.fsencode(sys.executable), b"-m", b"vaultctl.main", b"show", b"caf\xe9"], env=env, capture_output=True, cwd=REPO, timeout=60
    )
    assert r.returncode == 2, r.stderr
    assert b"Traceback" not in r.stderr and b"not valid UTF-8" in r.stderr
