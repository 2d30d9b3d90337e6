"""vaultctl daemon install / uninstall: the unit files it writes are valid, start a real
socket-activated daemon, keep the client from starting a second one, and go back exactly."""

from __future__ import annotations

import json
import os
import plistlib
import shlex
import shutil
import signal
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.integration.test_socket_activation import socket_activate_tool
from tests.support.harness import REPO, VAULTCTL, Home, copy_sample_vault, vaultctl
from tests.support.wait import wait_until

if TYPE_CHECKING:
    from collections.abc import Iterator

LAUNCHD_KEYS = {
    # The keys launchd.plist(5) documents that the agent uses; Label and ProgramArguments are required.
    "Label",
    "ProgramArguments",
    "Sockets",
    "KeepAlive",
    "ProcessType",
    "StandardOutPath",
    "StandardErrorPath",
    "EnvironmentVariables",
}
SOCKET_KEYS = {"SockPathName", "SockPathMode", "SockType", "SockFamily"}


def unit_dir(home: Home) -> Path:
    return Path(home.env["XDG_CONFIG_HOME"]) / "systemd" / "user"


def parse_unit(path: Path) -> dict[str, list[str]]:
    """``Key=value`` lines of a unit file (every section), a key's values in order."""
    found: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, _, value = line.partition("=")
            found.setdefault(key, []).append(value)
    return found


def verify_units(*paths: Path, env: dict[str, str]) -> None:
    """``systemd-analyze --user verify``; skipped where it is absent, a failure under CI."""
    tool = shutil.which("systemd-analyze")
    if tool is None:
        message = "systemd-analyze is not installed (Debian package systemd; .ci/run installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    runtime = Path(env["HOME"]) / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    out = subprocess.run(
        [tool, "--user", "verify", *map(str, paths)],
        env={**env, "XDG_RUNTIME_DIR": str(runtime)},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=paths[0].parent,
    )
    # verify prints a warning for each setting it ignores, yet exits 0: neither may appear.
    assert out.returncode == 0 and not out.stdout.strip() and not out.stderr.strip(), out.stdout + out.stderr


@pytest.fixture
def installed(home: Home) -> Iterator[Home]:
    r = vaultctl(home, "daemon", "install", "--systemd", "--no-start")
    assert r.code == 0, r.err
    yield home


def test_dry_run_shows_and_writes_nothing(home: Home) -> None:
    r = vaultctl(home, "daemon", "install", "--systemd", "--dry-run", "--json")
    assert r.code == 0, r.err
    plan = r.json()
    assert plan["applied"] is False and [f["change"] for f in plan["files"]] == ["create", "create"]
    assert "ListenStream=" in plan["files"][0]["text"] and "Type=notify" in plan["files"][1]["text"]
    assert plan["commands"] == [["systemctl", "--user", "daemon-reload"], ["systemctl", "--user", "enable", "--now", "vaultd.socket"]]
    assert not unit_dir(home).exists() and not (home.home / "service").exists()


def test_installed_units_verify_and_name_this_installation(installed: Home) -> None:
    socket_unit, service_unit = unit_dir(installed) / "vaultd.socket", unit_dir(installed) / "vaultd.service"
    verify_units(socket_unit, service_unit, env=installed.env)
    sock, svc = parse_unit(socket_unit), parse_unit(service_unit)
    assert sock["ListenStream"] == [str(installed.socket)]  # VAULTD_SOCKET is set: that path, as the client resolves it
    assert sock["FileDescriptorName"] == ["vaultd"] and sock["SocketMode"] == ["0600"]
    argv = shlex.split(svc["ExecStart"][0])
    assert argv[-4:] == ["--home", str(installed.home), "--idle-exit", "600"]
    for setting in ("ProtectSystem=strict", "PrivateTmp=yes", "NoNewPrivileges=yes", "RestrictAddressFamilies=AF_UNIX"):
        key, value = setting.split("=")
        assert svc[key] == [value]
    assert svc["ReadWritePaths"] == [installed.env["HOME"], str(installed.home)]  # the home is outside HOME here
    for f in (socket_unit, service_unit):
        assert (f.stat().st_mode & 0o777) == 0o600


def test_the_runtime_socket_is_written_with_the_specifier(home: Home) -> None:
    """With no VAULTD_SOCKET, the client's socket is in the runtime folder: the unit says %t."""
    env = {k: v for k, v in home.env.items() if k != "VAULTD_SOCKET"}
    env["XDG_RUNTIME_DIR"] = str(home.root / "rt")
    r = subprocess.run(
        [*VAULTCTL, "daemon", "install", "--systemd", "--dry-run", "--json"], env=env, capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert r.returncode == 0, r.stderr
    assert "ListenStream=%t/vaultd/vaultd.sock\n" in json.loads(r.stdout)["files"][0]["text"]


def test_the_installed_units_give_a_socket_activated_daemon(installed: Home) -> None:
    """Started exactly as the units say: ListenStream, FileDescriptorName, ExecStart."""
    sock, svc = parse_unit(unit_dir(installed) / "vaultd.socket"), parse_unit(unit_dir(installed) / "vaultd.service")
    argv = [a.replace("%%", "%").replace("$$", "$") for a in shlex.split(svc["ExecStart"][0])]
    installed.socket.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    out = open(installed.root / "daemon.out", "ab")
    proc = subprocess.Popen(
        [socket_activate_tool(), f"--listen={sock['ListenStream'][0]}", f"--fdname={sock['FileDescriptorName'][0]}", *argv],
        env={"PATH": os.environ["PATH"], "HOME": installed.env["HOME"]},
        stdout=out,
        stderr=out,
    )
    out.close()
    try:
        wait_until(lambda: installed.socket.exists(), 20, "the socket")
        vault = copy_sample_vault(installed.root / "vault")
        added = vaultctl(installed, "vault", "add", "notes", str(vault), "--json")
        assert added.code == 0, added.err
        status = vaultctl(installed, "status", "--json").json()
        assert status["activation"] == "systemd" and status["pid"] == proc.pid and status["idle_exit_s"] == 600
        hits = vaultctl(installed, "search", "alpha", "--json")
        assert hits.code == 0 and hits.json()["hits"]
        assert vaultctl(installed, "daemon", "stop").code == 0  # exits 0; the manager's socket stays
        assert proc.wait(15) == 0 and installed.socket.exists()
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(15)


def test_the_client_never_starts_a_daemon_beside_the_managed_one(installed: Home) -> None:
    env = {k: v for k, v in installed.env.items() if k != "VAULTD_NO_AUTOSTART"}  # autostart on
    proc = subprocess.run([*VAULTCTL, "status"], env=env, capture_output=True, text=True, timeout=60, cwd=REPO)
    assert proc.returncode == 69, proc.stderr
    assert "systemd runs vaultd for this home" in proc.stderr and "systemctl --user start vaultd.socket" in proc.stderr
    assert not installed.socket.exists() and not (installed.home / "logs" / "vaultd.stdout").exists()


def test_uninstall_puts_back_what_was_there(home: Home) -> None:
    folder = unit_dir(home)
    folder.mkdir(parents=True)
    own = "# the user's own unit\n[Service]\nExecStart=/bin/true\n"
    (folder / "vaultd.service").write_text(own)
    r = vaultctl(home, "daemon", "install", "--systemd", "--no-start", "--json")
    assert r.code == 0, r.err
    assert [f["change"] for f in r.json()["files"]] == ["create", "replace"]
    assert (folder / "vaultd.service").read_text() != own
    again = vaultctl(home, "daemon", "install", "--systemd", "--no-start", "--json")  # over our own files
    assert [f["change"] for f in again.json()["files"]] == ["unchanged", "unchanged"]
    u = vaultctl(home, "daemon", "uninstall", "--json")
    assert u.code == 0, u.err
    assert (folder / "vaultd.service").read_text() == own and not (folder / "vaultd.socket").exists()
    assert not (home.home / "service" / "record.json").exists()
    assert vaultctl(home, "daemon", "uninstall").code == 1  # nothing left to undo (NOT_FOUND)


def test_a_record_under_its_earlier_name_is_read_and_then_taken_away(installed: Home) -> None:
    """An install by a version that named the record ``receipt.json``: the client still knows the
    service is managed, uninstall still puts every file back, and no record is left behind."""
    service = installed.home / "service"
    (service / "record.json").rename(service / "receipt.json")
    env = {k: v for k, v in installed.env.items() if k != "VAULTD_NO_AUTOSTART"}  # autostart on
    proc = subprocess.run([*VAULTCTL, "status"], env=env, capture_output=True, text=True, timeout=60, cwd=REPO)
    assert proc.returncode == 69 and "systemd runs vaultd for this home" in proc.stderr, proc.stderr
    again = vaultctl(installed, "daemon", "install", "--systemd", "--no-start", "--json")  # over the earlier record
    assert again.code == 0, again.err
    assert [f["change"] for f in again.json()["files"]] == ["unchanged", "unchanged"]
    assert (service / "record.json").exists() and not (service / "receipt.json").exists()
    (service / "record.json").rename(service / "receipt.json")
    u = vaultctl(installed, "daemon", "uninstall", "--json")
    assert u.code == 0, u.err
    assert not (unit_dir(installed) / "vaultd.socket").exists() and not (unit_dir(installed) / "vaultd.service").exists()
    assert not (service / "receipt.json").exists() and not (service / "record.json").exists()


def test_uninstall_refuses_over_a_changed_file(installed: Home) -> None:
    service_unit = unit_dir(installed) / "vaultd.service"
    service_unit.write_text(service_unit.read_text() + "# edited by hand\n")
    r = vaultctl(installed, "daemon", "uninstall")
    assert r.code == 75 and "changed since 'vaultctl daemon install' wrote it" in r.err
    assert (unit_dir(installed) / "vaultd.socket").exists() and (installed.home / "service" / "record.json").exists()


@pytest.mark.skipif(Path("/run/systemd/system").exists(), reason="a systemd user manager may run here: install would really start it")
def test_install_without_a_service_manager_leaves_nothing(home: Home) -> None:
    r = vaultctl(home, "daemon", "install", "--systemd")
    assert r.code == 69, r.err
    assert "--no-start" in r.err
    assert not unit_dir(home).exists() or not list(unit_dir(home).iterdir())
    assert not (home.home / "service" / "record.json").exists()


def check_plist(agent: dict[str, Any], socket_path: str) -> None:
    assert set(agent) <= LAUNCHD_KEYS and {"Label", "ProgramArguments"} <= set(agent)
    assert agent["Label"] == "org.vaultd"
    argv = agent["ProgramArguments"]
    assert all(isinstance(a, str) for a in argv) and argv[0].startswith("/")
    assert (
        argv[0].endswith("/vaultd") or argv[1:3] == ["-m", "vaultd.main"] or agent.get("EnvironmentVariables", {}).get("SHIV_ENTRY_POINT")
    )
    assert "--home" in argv and "--idle-exit" in argv
    sockets = agent["Sockets"]
    assert list(sockets) == ["vaultd"] and set(sockets["vaultd"]) == SOCKET_KEYS
    entry = sockets["vaultd"]
    assert entry["SockPathName"] == socket_path and entry["SockPathMode"] == 0o600
    assert (entry["SockType"], entry["SockFamily"]) == ("stream", "Unix")
    assert agent["KeepAlive"] == {"SuccessfulExit": False}  # a clean idle exit stays down until the next connection
    assert agent["StandardOutPath"].startswith("/") and agent["StandardErrorPath"].startswith("/")


def test_launchd_agent_has_every_key_launchd_needs(home: Home) -> None:
    r = vaultctl(home, "daemon", "install", "--launchd", "--no-start")
    assert r.code == 0, r.err
    path = Path(home.env["HOME"]) / "Library" / "LaunchAgents" / "org.vaultd.plist"
    with path.open("rb") as fh:
        agent = plistlib.load(fh)
    check_plist(agent, str(home.socket))
    assert agent["StandardOutPath"] == str(home.home / "logs" / "launchd.out")
    assert vaultctl(home, "daemon", "uninstall").code == 0 and not path.exists()
