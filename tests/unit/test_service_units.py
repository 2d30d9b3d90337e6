"""The service files: the shipped copies name our real entry point, socket and socket name, and
paths are escaped so systemd reads back exactly the path we meant."""

from __future__ import annotations

import os
import plistlib
import shutil
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.location import resolve_socket
from tests.integration.test_service_install import check_plist, parse_unit, verify_units
from vaultctl.service.launch import Launch, daemon_launch
from vaultctl.service.units import SHIPPED, ServiceSpec, _word, systemd_service
from vaultd.server.activation import SOCKET_NAME

REPO = Path(__file__).resolve().parents[2]


def test_shipped_files_are_the_rendered_ones() -> None:
    for rel, render in SHIPPED.items():
        assert (REPO / rel).read_text(encoding="utf-8") == render(), f"{rel} is stale: run make docs"


def test_shipped_units_name_our_entry_point_socket_and_name() -> None:
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["vaultd"] == "vaultd.main:main"
    svc = parse_unit(REPO / "systemd" / "vaultd.service")
    sock = parse_unit(REPO / "systemd" / "vaultd.socket")
    assert svc["ExecStart"][0].split()[0] == "%h/.local/bin/vaultd"  # where pipx and uv tool put console scripts
    assert svc["Type"] == ["notify"] and svc["Requires"] == ["vaultd.socket"]
    # %t is the user manager's XDG_RUNTIME_DIR: the same socket the clients resolve there.
    assert sock["ListenStream"] == ["%t/vaultd/vaultd.sock"]
    assert resolve_socket(environ={"XDG_RUNTIME_DIR": "/run/user/1000"}) == Path("/run/user/1000/vaultd/vaultd.sock")
    assert sock["FileDescriptorName"] == [SOCKET_NAME]
    with (REPO / "launchd" / "org.vaultd.plist").open("rb") as fh:
        agent = plistlib.load(fh)
    check_plist(agent, "/Users/USERNAME/.local/share/vaultd/run/vaultd.sock")
    assert list(agent["Sockets"]) == [SOCKET_NAME]


def test_shipped_units_verify(tmp_path: Path) -> None:
    """systemd-analyze resolves %h to a home where ~/.local/bin/vaultd is this checkout's."""
    user = tmp_path / "user"
    (user / ".local" / "bin").mkdir(parents=True)
    found = shutil.which("vaultd", path=os.path.dirname(sys.executable))
    assert found, "the vaultd console script is not installed beside this Python: run make venv"
    (user / ".local" / "bin" / "vaultd").symlink_to(found)
    folder = tmp_path / "units"
    folder.mkdir()
    for name in ("vaultd.socket", "vaultd.service"):
        shutil.copy(REPO / "systemd" / name, folder / name)
    verify_units(folder / "vaultd.socket", folder / "vaultd.service", env={"HOME": str(user), "PATH": os.environ["PATH"]})


def _unit_words(value: str) -> list[str]:
    """Split an ExecStart= value as systemd does (quotes, backslash escapes) and undo %% and $$."""
    words, current, quoted, i, started = [], "", False, 0, False
    while i < len(value):
        c = value[i]
        if c == "\\" and i + 1 < len(value):
            current += value[i + 1]
            i += 2
            started = True
            continue
        if c == '"':
            quoted = not quoted
            started = True
        elif c == " " and not quoted:
            if started:
                words.append(current)
            current, started = "", False
        else:
            current += c
            started = True
        i += 1
    if started:
        words.append(current)
    return [w.replace("%%", "%").replace("$$", "$") for w in words]


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40))
def test_paths_survive_unit_quoting(tail: str) -> None:
    path = "/home/u/" + tail
    assert _unit_words(_word(path)) == [path]


def test_odd_home_paths_verify(tmp_path: Path) -> None:
    """A home with a space, a percent sign and a dollar: systemd parses the unit without a warning."""
    odd = tmp_path / "my home %h $HOME"
    (odd / ".local" / "bin").mkdir(parents=True)
    spec = ServiceSpec(
        launch=Launch((sys.executable, "-m", "vaultd.main")),
        home=str(odd / "vd"),
        socket=str(odd / "s.sock"),
        writable=(str(odd),),
        vaults=(str(odd / "vault with space"),),
        logs=str(odd / "logs"),
    )
    text = systemd_service(spec)
    line = next(v for v in text.splitlines() if v.startswith("ExecStart="))
    assert _unit_words(line.removeprefix("ExecStart="))[-4:] == ["--home", str(odd / "vd"), "--idle-exit", "600"]
    folder = tmp_path / "units"
    folder.mkdir()
    (folder / "vaultd.service").write_text(text)
    (folder / "vaultd.socket").write_text(f"[Socket]\nListenStream={spec.socket.replace('%', '%%')}\n")
    verify_units(folder / "vaultd.socket", folder / "vaultd.service", env={"HOME": str(tmp_path), "PATH": os.environ["PATH"]})


def test_a_path_with_a_newline_is_refused() -> None:
    from vaultctl.service.units import BadPath

    spec = ServiceSpec(launch=Launch(("/bin/vaultd",)), home="/home/u\n/x", socket="/s", writable=(), vaults=(), logs="/l")
    with pytest.raises(BadPath, match="line break"):
        systemd_service(spec)


def test_daemon_launch_follows_the_installation(tmp_path: Path) -> None:
    venv_bin = tmp_path / "bin"
    venv_bin.mkdir()
    for name in ("vaultctl", "vaultd"):
        (venv_bin / name).write_text("#!/bin/sh\n")
        (venv_bin / name).chmod(0o755)
    assert daemon_launch(str(venv_bin / "vaultctl"), "/py") == Launch((str(venv_bin / "vaultd"),))
    pyz = tmp_path / "vaultctl.pyz"
    with zipfile.ZipFile(pyz, "w") as z:
        z.writestr("environment.json", "{}")
    assert daemon_launch(str(pyz), "/py") == Launch(("/py", str(pyz)), (("SHIV_ENTRY_POINT", "vaultd.main:main"),))
    assert daemon_launch(str(REPO / "vaultctl" / "main.py"), "/py") == Launch(("/py", "-m", "vaultd.main"))
