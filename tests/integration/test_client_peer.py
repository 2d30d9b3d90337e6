"""The clients send nothing to a socket that is not provably the user's own daemon.

An impostor listens where the client looks for the daemon: as another uid in a folder that passes
the folder rule (only the peer-uid check can catch it), in a folder another uid owns (a shared
``XDG_RUNTIME_DIR``), or in a folder others may write to. ``vaultctl`` and ``vaultctl mcp`` must
refuse, say why, and the impostor must receive zero bytes, not even ``hello``.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.support.harness import REPO, VAULTCTL, Daemon, Home

if TYPE_CHECKING:
    from collections.abc import Iterator

NOBODY = 65534
SECRET = "the secret body of a brand new note\n"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="another uid needs root")

# Binds as the test's user, then (when a uid is given) drops to it before listen(): the kernel
# reports the listener's credentials as of listen(), so the impostor is that uid to any client.
_IMPOSTOR = textwrap.dedent("""
    import os, select, socket, sys
    path, uid = sys.argv[1], int(sys.argv[2])
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lsock.bind(path)
    os.chmod(path, 0o666)
    if uid >= 0:
        os.setgroups([]); os.setgid(uid); os.setuid(uid)
    lsock.listen(16)
    print("ready", flush=True)
    conns, received, accepted = [], 0, 0
    while True:
        readable, _, _ = select.select([lsock, sys.stdin, *conns], [], [])
        if sys.stdin in readable:
            break
        for r in readable:
            if r is lsock:
                c, _ = lsock.accept()
                conns.append(c)
                accepted += 1
            else:
                data = r.recv(65536)
                received += len(data)
                if not data:
                    conns.remove(r)
    print(f"{accepted} {received}", flush=True)
""")


@dataclass
class Impostor:
    proc: subprocess.Popen[str]

    def finish(self) -> tuple[int, int]:
        """Stop it; (connections accepted, bytes received)."""
        out, _ = self.proc.communicate("stop\n", timeout=30)
        accepted, received = out.split()
        return int(accepted), int(received)


@pytest.fixture
def start_impostor() -> Iterator[object]:
    started: list[Impostor] = []

    def start(path: Path, uid: int) -> Impostor:
        proc = subprocess.Popen(
            [sys.executable, "-c", _IMPOSTOR, str(path), str(uid)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        impostor = Impostor(proc)
        started.append(impostor)
        return impostor

    yield start
    for impostor in started:
        if impostor.proc.poll() is None:
            impostor.proc.kill()
            impostor.proc.communicate()


@pytest.fixture
def scratch() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="vp"))  # short: AF_UNIX paths are limited to ~100 bytes
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _env(home: Home, **changes: str | None) -> dict[str, str]:
    env = {**home.env, "VAULTD_NO_AUTOSTART": "1"}
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def _new_note(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*VAULTCTL, "new", "secret-note", "--body", "-"], input=SECRET, env=env, capture_output=True, text=True, cwd=REPO, timeout=60
    )


async def _mcp_create(env: dict[str, str]) -> str:
    """A note_create through the shim, driven by the official SDK client; the tool error's text."""
    server = StdioServerParameters(command=sys.executable, args=["-m", "vaultctl.main", "mcp"], env=env, cwd=str(REPO))
    async with Client(server, mode="legacy", read_timeout_seconds=60) as client:
        result = await client.call_tool("note_create", {"path": "secret-note", "body": SECRET})
    assert result.is_error, result
    text = result.content[0]
    assert text.type == "text"
    return text.text


def _refused(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 69, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


@needs_root
async def test_a_listener_of_another_uid_gets_nothing(home: Home, scratch: Path, start_impostor: object) -> None:
    """The folder is the user's and private, so only the peer-uid check stands in the way."""
    folder = scratch / "run"
    folder.mkdir(mode=0o700)
    sock = folder / "v.sock"
    env = _env(home, VAULTD_SOCKET=str(sock))
    impostor = start_impostor(sock, NOBODY)  # type: ignore[operator]
    _refused(_new_note(env), f"runs as uid {NOBODY}", "nothing was sent")
    message = await _mcp_create(env)
    assert f"runs as uid {NOBODY}" in message and "not available" in message, message
    accepted, received = impostor.finish()
    assert accepted >= 2, "both clients connected, so the peer check is what refused them"
    assert received == 0


@needs_root
async def test_a_socket_folder_owned_by_another_uid_is_refused(home: Home, scratch: Path, start_impostor: object) -> None:
    """A shared XDG_RUNTIME_DIR: another user made ``vaultd/`` there first and listens in it."""
    os.chmod(scratch, 0o1777)
    folder = scratch / "vaultd"
    folder.mkdir(mode=0o700)
    os.chown(folder, NOBODY, NOBODY)
    impostor = start_impostor(folder / "vaultd.sock", NOBODY)  # type: ignore[operator]
    env = _env(home, VAULTD_SOCKET=None, XDG_RUNTIME_DIR=str(scratch))
    _refused(_new_note(env), f"belongs to uid {NOBODY}")
    message = await _mcp_create(env)
    assert f"belongs to uid {NOBODY}" in message, message
    assert impostor.finish() == (0, 0)


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o722])
def test_a_socket_folder_others_may_write_to_is_refused(home: Home, scratch: Path, start_impostor: object, mode: int) -> None:
    folder = scratch / "run"
    folder.mkdir()
    os.chmod(folder, mode)
    sock = folder / "v.sock"
    impostor = start_impostor(sock, NOBODY if os.geteuid() == 0 else -1)  # type: ignore[operator]
    _refused(_new_note(_env(home, VAULTD_SOCKET=str(sock))), "writable by other users", f"{mode & 0o777:03o}")
    assert impostor.finish() == (0, 0)


@needs_root
def test_in_a_sticky_shared_folder_a_name_another_user_took_gets_nothing(home: Home, scratch: Path, start_impostor: object) -> None:
    """A sticky folder such as /tmp: nobody can replace another's socket there, but anyone can take a
    free name first; the listener's uid is what gives it away."""
    folder = scratch / "shared"
    folder.mkdir()
    os.chmod(folder, 0o1777)
    sock = folder / "v.sock"
    impostor = start_impostor(sock, NOBODY)  # type: ignore[operator]
    _refused(_new_note(_env(home, VAULTD_SOCKET=str(sock))), f"runs as uid {NOBODY}", "nothing was sent")
    accepted, received = impostor.finish()
    assert accepted >= 1 and received == 0


def test_the_users_own_daemon_in_a_sticky_shared_folder_is_accepted(home: Home, scratch: Path) -> None:
    """The rule the daemon binds under is the rule its clients connect under: what one accepts,
    the other does too (VAULTD_SOCKET=/tmp/vaultd.sock works end to end, /tmp left as it is)."""
    folder = scratch / "shared"
    folder.mkdir()
    os.chmod(folder, 0o1777)
    home.socket = folder / "v.sock"
    home.env["VAULTD_SOCKET"] = str(home.socket)
    daemon = Daemon(home)
    try:
        status = subprocess.run([*VAULTCTL, "status", "--json"], env=_env(home), capture_output=True, text=True, cwd=REPO, timeout=60)
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["pid"] == daemon.proc.pid
        assert stat.S_IMODE(folder.stat().st_mode) == 0o1777
    finally:
        daemon.stop()


def test_autostart_refuses_an_unsafe_socket_folder(home: Home, scratch: Path) -> None:
    folder = scratch / "run"
    folder.mkdir()
    os.chmod(folder, 0o777)
    sock = folder / "v.sock"
    env = _env(home, VAULTD_SOCKET=str(sock), VAULTD_NO_AUTOSTART=None)
    _refused(_new_note(env), "writable by other users")
    started = subprocess.run([*VAULTCTL, "daemon", "start"], env=env, capture_output=True, text=True, cwd=REPO, timeout=60)
    _refused(started, "writable by other users")
    assert not sock.exists(), "no daemon was started there"
    assert not (home.home / "logs" / "vaultd.stdout").exists(), "no daemon was spawned"


def test_the_users_own_daemon_is_accepted(home: Home, daemon: Daemon) -> None:
    """The checks accept what the daemon makes by itself: a private folder it owns."""
    status = subprocess.run([*VAULTCTL, "status", "--json"], env=_env(home), capture_output=True, text=True, cwd=REPO, timeout=60)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["pid"] == daemon.proc.pid
