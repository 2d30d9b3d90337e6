"""Starting, finding, refusing and stopping the daemon: one per home, a clean socket, autostart."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys

from tests.support.harness import REPO, Daemon, Home, RawClient, vaultctl, wait_for_socket
from tests.support.wait import wait_until


def test_socket_and_folder_modes(daemon: Daemon) -> None:
    sock = daemon.home.socket
    assert stat.S_ISSOCK(sock.lstat().st_mode)
    assert stat.S_IMODE(sock.lstat().st_mode) == 0o600
    assert stat.S_IMODE(sock.parent.lstat().st_mode) == 0o700
    assert stat.S_IMODE(daemon.home.home.lstat().st_mode) == 0o700


def test_second_daemon_on_same_home_names_the_holder_and_exits(daemon: Daemon) -> None:
    proc = subprocess.run([sys.executable, "-m", "vaultd.main"], env=daemon.home.env, capture_output=True, text=True, timeout=30)
    assert proc.returncode != 0
    assert f"pid {daemon.proc.pid}" in proc.stderr
    raw = RawClient(daemon.home.socket)  # the first daemon still serves
    assert raw.hello()["result"]["server"] == "vaultd"


def test_stale_socket_file_is_replaced(home: Home) -> None:
    home.socket.parent.mkdir(parents=True, mode=0o700)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(home.socket))
    stale.close()  # the file stays, nobody listens: what a SIGKILLed daemon leaves
    d = Daemon(home)
    try:
        assert RawClient(home.socket).hello()["result"]["server"] == "vaultd"
    finally:
        d.stop()


def test_sigterm_and_daemon_stop_shut_down_cleanly(home: Home) -> None:
    d = Daemon(home)
    assert d.stop(signal.SIGTERM) == 0
    assert not home.socket.exists()
    d2 = Daemon(home)  # the home lock was released
    r = vaultctl(home, "daemon", "stop")
    assert r.code == 0, r.err
    assert d2.proc.wait(15) == 0
    assert not home.socket.exists()
    d2.log.close()


def test_autostart_on_first_command_and_off_switch(home: Home) -> None:
    off = vaultctl(home, "status", env={"VAULTD_NO_AUTOSTART": "1"})
    assert off.code == 69
    assert "vaultctl daemon start" in off.err
    env = {k: v for k, v in home.env.items() if k != "VAULTD_NO_AUTOSTART"}
    started = subprocess.run(
        [sys.executable, "-m", "vaultctl.main", "status", "--json"], env=env, capture_output=True, text=True, timeout=60, cwd=REPO
    )
    try:
        assert started.returncode == 0, started.stderr
        status = __import__("json").loads(started.stdout)
        assert status["socket"] == str(home.socket) and status["vaults"] == []
    finally:
        vaultctl(home, "daemon", "stop")
    wait_until(lambda: not home.socket.exists(), 10, "the stopped daemon to remove its socket")
    assert not home.socket.exists()


def test_inherited_listener_from_systemd(home: Home) -> None:
    home.socket.parent.mkdir(parents=True, mode=0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(home.socket))
    listener.listen(8)
    fd = listener.fileno()

    def as_fd3() -> None:
        os.dup2(fd, 3)

    env = {**home.env, "LISTEN_FDS": "1"}
    proc = subprocess.Popen(
        ["sh", "-c", f'LISTEN_PID=$$ exec "{sys.executable}" -m vaultd.main'],
        env=env,
        preexec_fn=as_fd3,
        pass_fds=(fd, 3),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    listener.close()
    try:
        wait_for_socket(home.socket, proc)
        client = RawClient(home.socket)
        assert client.hello()["result"]["server"] == "vaultd"
        status = client.call("daemon.status")
        assert status["pid"] == proc.pid
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=15)
        assert proc.returncode == 0, err.decode()


def test_stop_of_a_daemon_stuck_in_a_request_returns_once_it_is_gone(home: Home) -> None:
    """A write held in its worker thread (the fault seam's pause, up to 120 s) keeps the daemon past
    its own grace: ``daemon stop`` escalates and returns only once the process has exited, and the
    home is free for the next daemon."""
    gate = home.root / "gate"
    home.env["VAULTD_FAULTS"] = f"pause=after-plan@1:{gate}"
    stuck = Daemon(home)
    del home.env["VAULTD_FAULTS"]
    root = home.root / "vault"
    root.mkdir()
    assert vaultctl(home, "vault", "add", "v", str(root)).code == 0
    write = subprocess.Popen(
        [sys.executable, "-m", "vaultctl.main", "new", "held", "--vault", "v"],
        env=home.env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(gate.exists, 60, "the write to reach its pause")
        stopped = vaultctl(home, "daemon", "stop", "--json", timeout=120)
        assert stopped.code == 0, stopped.err
        assert stuck.proc.poll() is not None, "daemon stop returned while the daemon still ran"
        report = json.loads(stopped.out)
        assert report["pid"] == stuck.pid and report["exited"] is True
        assert report["signals"] and report["signals"][-1] in ("SIGTERM", "SIGKILL"), report
        assert not (root / "held.md").exists()  # the held write never reached the vault
        again = Daemon(home)  # the home lock went with the process
        try:
            assert vaultctl(home, "status").code == 0
            assert RawClient(home.socket).hello()["result"]["server"] == "vaultd"
        finally:
            again.stop()
    finally:
        gate.unlink(missing_ok=True)
        write.kill()
        write.wait()
        stuck.stop(signal.SIGKILL)


def test_stop_says_the_process_exited(daemon: Daemon, home: Home) -> None:
    stopped = vaultctl(home, "daemon", "stop")
    assert stopped.code == 0, stopped.err
    assert stopped.out.strip() == f"vaultd stopped (pid {daemon.pid} has exited)"
    assert daemon.proc.poll() == 0
