"""Socket activation: a service manager owns the socket, starts the daemon on a connection, and
starts it again after an idle exit, with no request lost at the boundary.

The first tests use systemd's own ``systemd-socket-activate`` (Debian package ``systemd``), which
starts the daemon once. The idle tests need a manager that starts it again: ``Activator`` passes
the socket exactly as systemd's socket units do (see tests/support/activator.py).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.activator import Activator, high_fd
from tests.support.harness import VAULTD, Home, RawClient, copy_sample_vault, vaultctl
from tests.support.wait import wait_until

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


def socket_activate_tool() -> str:
    """``systemd-socket-activate``; skipped when absent, but a failure under CI (.ci/run installs it)."""
    found = shutil.which("systemd-socket-activate")
    if found is None:
        message = "systemd-socket-activate is not installed (Debian package systemd; .ci/run installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


def start_with_systemd_tool(home: Home, *daemon_args: str) -> subprocess.Popen[bytes]:
    """The daemon behind ``systemd-socket-activate``: it binds the socket now and execs the daemon
    (keeping its pid) on the first connection, with the environment it is told to pass."""
    home.socket.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    passed = [f"--setenv={k}={v}" for k, v in home.env.items() if k in ("VAULTD_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "PYTHONPATH")]
    out = open(home.root / "daemon.out", "ab")
    proc = subprocess.Popen(
        [socket_activate_tool(), f"--listen={home.socket}", "--fdname=vaultd", *passed, *VAULTD, *daemon_args],
        env={"PATH": os.environ["PATH"], "HOME": home.env["HOME"]},
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=out,
    )
    out.close()
    wait_until(lambda: home.socket.exists() or proc.poll() is not None, 20, "systemd-socket-activate to bind the socket")
    assert proc.poll() is None, (home.root / "daemon.out").read_text()
    return proc


@pytest.fixture
def activated(home: Home) -> Iterator[subprocess.Popen[bytes]]:
    proc = start_with_systemd_tool(home)
    yield proc
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)


def test_systemd_socket_activate_starts_the_daemon_on_the_first_connection(home: Home, activated: subprocess.Popen[bytes]) -> None:
    time.sleep(0.3)
    assert not home.log_file.exists(), "the daemon ran before any connection"
    status = vaultctl(home, "status", "--json")  # autostart is off: the manager must start it
    assert status.code == 0, status.err
    got = status.json()
    assert got["pid"] == activated.pid  # the tool exec'd the daemon: LISTEN_PID was its own pid
    assert got["activation"] == "systemd" and got["socket"] == str(home.socket)
    vault = copy_sample_vault(home.root / "vault")
    assert vaultctl(home, "vault", "add", "sample", str(vault), "--json").code == 0
    hits = vaultctl(home, "search", "alpha", "--json")
    assert hits.code == 0 and hits.json()["hits"], hits.err
    activated.send_signal(signal.SIGTERM)
    assert activated.wait(15) == 0
    assert home.socket.exists(), "the daemon removed a socket that belongs to the service manager"


def test_idle_exit_leaves_the_managers_socket(home: Home) -> None:
    proc = start_with_systemd_tool(home, "--idle-exit", "0.5")
    try:
        status = vaultctl(home, "status", "--json")
        assert status.code == 0, status.err
        assert status.json()["idle_exit_s"] == 0.5
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert home.socket.exists()
    events = [json.loads(line) for line in home.log_file.read_text().splitlines()]
    assert any(e["event"] == "stopped" and e.get("reason") == "idle" for e in events), events[-3:]


def test_idle_exit_is_ignored_for_a_daemon_that_bound_its_socket(home: Home) -> None:
    from tests.support.harness import Daemon

    d = Daemon(home, ["--idle-exit", "0.2"])
    try:
        status = RawClient(home.socket)
        status.hello()
        got = status.call("daemon.status")
        assert got["activation"] == "self" and got["idle_exit_s"] is None
        status.sock.close()
        time.sleep(1.0)
        assert d.proc.poll() is None, "a daemon that owns its socket must not exit when idle"
    finally:
        assert d.stop() == 0


@pytest.mark.parametrize("bad", ["-1", "nan", "soon", "1e9"])
def test_idle_exit_bounds(home: Home, bad: str) -> None:
    out = subprocess.run([*VAULTD, "--idle-exit", bad], env=home.env, capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and "--idle-exit takes seconds from 0 (never) to 604800" in out.stderr


# -- the boundary ------------------------------------------------------------------------------

IDLE_S = 0.4


@pytest.fixture
def manager(home: Home) -> Iterator[Activator]:
    vault = copy_sample_vault(home.root / "vault")
    config = home.home / "config.json"
    # Registered before the first start, so every activation takes the vault as it starts.
    a = Activator(home.socket, [*VAULTD, "--idle-exit", str(IDLE_S)], home.env, home.root / "daemon.out")
    a.start()
    try:
        client = RawClient(home.socket, timeout=30)
        client.hello()
        client.call("vault.add", {"id": "v", "path": str(vault)})
        client.sock.close()
        assert config.exists()
        yield a
    finally:
        a.stop()


def one_request(path: Path, index: int) -> dict[str, Any]:
    """A fresh connection: hello, then create one note. The reply must come, whatever the moment."""
    c = RawClient(path, timeout=30)
    try:
        assert "result" in c.hello()
        reply = c.request("note.create", {"vault": "v", "path": f"boundary/n{index:03}", "body": f"note {index}\n"})
        return reply
    finally:
        c.sock.close()


def test_requests_around_the_idle_deadline_are_all_answered(home: Home, manager: Activator) -> None:
    """Each request goes out at a chosen offset from the moment the previous connection closed,
    straddling the idle deadline: before it, at it, and just after the daemon decided to exit.
    Every one is answered and applied; the daemon exits in between and is started again."""
    offsets = [IDLE_S - 0.05, IDLE_S - 0.01, IDLE_S, IDLE_S + 0.005, IDLE_S + 0.02, IDLE_S + 0.05, IDLE_S + 0.3]
    index = 0
    for _round in range(2):
        for offset in offsets:
            time.sleep(offset)
            reply = one_request(home.socket, index)
            assert "result" in reply, reply
            index += 1
    # Concurrent clients at the boundary as well: four at once, right at the deadline.
    time.sleep(IDLE_S)
    replies: list[dict[str, Any]] = []
    threads = [threading.Thread(target=lambda i=i: replies.append(one_request(home.socket, i))) for i in range(index, index + 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    index += 4
    assert len(replies) == 4 and all("result" in r for r in replies), replies
    notes = sorted(p.name for p in (home.root / "vault" / "boundary").iterdir())
    assert notes == [f"n{i:03}.md" for i in range(index)]
    ended = [r for r in manager.runs if r.status is not None]
    assert len(ended) >= 2, f"the daemon never exited when idle: {manager.runs}"
    assert all(r.status == 0 for r in ended), manager.runs


def test_each_activation_says_ready_after_taking_its_vaults(home: Home, manager: Activator) -> None:
    manager.wait_for_runs_ended(1, 20)  # the fixture's connection ended; the daemon went idle
    assert one_request(home.socket, 0)["result"]
    manager.wait_for_runs_ended(2, 20)
    ready = [n for n in manager.notices if n.startswith("READY=1")]
    stopping = [n for n in manager.notices if n.startswith("STOPPING=1")]
    assert len(ready) >= 2 and len(stopping) >= 2, manager.notices
    assert "STATUS=serving 1 vault(s)" in ready[-1]
    assert "STATUS=idle; exiting" in stopping[-1]


def test_a_connection_left_open_keeps_the_daemon(home: Home, manager: Activator) -> None:
    manager.wait_for_runs_ended(1, 20)
    c = RawClient(home.socket, timeout=30)
    c.hello()
    time.sleep(IDLE_S * 4)
    assert c.call("daemon.status")["pid"] == manager.runs[-1].pid and manager.runs[-1].status is None
    c.sock.close()
    manager.wait_for_runs_ended(2, 20)


def test_listen_fds_are_read_as_systemd_defines_them(home: Home) -> None:
    """Two descriptors, ours named ``vaultd`` second: the daemon serves that one and closes the other."""
    home.socket.parent.mkdir(mode=0o700, parents=True)
    ours = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.bind(str(home.socket))
    ours.listen(8)
    other = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    other.bind(str(home.root / "other.sock"))
    other.listen(8)
    o, m = high_fd(ours), high_fd(other)
    script = f'LISTEN_PID=$$ exec "{sys.executable}" -m vaultd.main 3<&{m} 4<&{o} {m}<&- {o}<&-'
    env = {**home.env, "LISTEN_FDS": "2", "LISTEN_FDNAMES": "metrics:vaultd"}
    proc = subprocess.Popen(["bash", "-c", script], env=env, pass_fds=(o, m), stderr=subprocess.PIPE)
    os.close(o)
    os.close(m)
    try:
        client = RawClient(home.socket)
        client.hello()
        status = client.call("daemon.status")
        assert status["activation"] == "systemd" and status["pid"] == proc.pid
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=15)
        ours.close()
        other.close()
    assert proc.returncode == 0, err.decode()


@pytest.mark.parametrize(
    ("fds", "names", "message"),
    [
        ("2", "a:b", "none is named 'vaultd'"),
        ("x", "", "LISTEN_FDS='x' is not a count"),
    ],
)
def test_listen_fds_that_cannot_be_served_are_refused_clearly(home: Home, fds: str, names: str, message: str) -> None:
    home.socket.parent.mkdir(mode=0o700, parents=True)
    a = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    a.bind(str(home.root / "a.sock"))
    a.listen(1)
    fd = high_fd(a)
    script = f'LISTEN_PID=$$ exec "{sys.executable}" -m vaultd.main 3<&{fd} 4<&{fd} {fd}<&-'
    env = {**home.env, "LISTEN_FDS": fds, "LISTEN_FDNAMES": names}
    out = subprocess.run(["bash", "-c", script], env=env, pass_fds=(fd,), capture_output=True, text=True, timeout=30)
    os.close(fd)
    a.close()
    assert out.returncode == 1 and message in out.stderr, out.stderr


def test_a_datagram_socket_is_refused(home: Home) -> None:
    d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    d.bind(str(home.root / "d.sock"))
    fd = high_fd(d)
    script = f'LISTEN_PID=$$ exec "{sys.executable}" -m vaultd.main 3<&{fd} {fd}<&-'
    out = subprocess.run(
        ["bash", "-c", script], env={**home.env, "LISTEN_FDS": "1"}, pass_fds=(fd,), capture_output=True, text=True, timeout=30
    )
    os.close(fd)
    d.close()
    assert out.returncode == 1 and "not a listening Unix stream socket" in out.stderr, out.stderr
