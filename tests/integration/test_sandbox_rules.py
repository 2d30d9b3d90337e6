"""A shell sandboxed the way ``vaultctl setup``'s rules make Claude Code's sandbox on Linux
(bubblewrap: the file system read-only but for the session's folders, every vault, vaultd's home
and the socket's folder read-only again, the socket's folder hidden) cannot write a vault note or
reach the daemon's socket, while it can still write its own folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import TYPE_CHECKING

import pytest

from tests.support.harness import register
from vaultctl.setup.sandbox import bwrap_argv, claude_settings, sandbox_row

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home


def _bwrap_runs() -> bool:
    if shutil.which("bwrap") is None:
        return False
    return subprocess.run(["bwrap", "--ro-bind", "/", "/", "true"], capture_output=True, check=False).returncode == 0


CONNECT = "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print('connected')"


@pytest.fixture
def vault(daemon: Daemon, home: Home) -> Path:
    root = home.root / "vault"
    root.mkdir()
    (root / "Alpha.md").write_text("# Alpha\n")
    register(home, root)
    return root


def test_the_rules_name_every_vault_and_vaultds_own_folders(vault: Path, home: Home) -> None:
    settings = claude_settings(home.env)
    deny = settings["sandbox"]["filesystem"]["denyWrite"]
    assert "/" + str(vault) in deny and "/" + str(home.home) in deny and "/" + str(home.socket.parent) in deny
    assert settings["sandbox"]["enabled"] is True and settings["sandbox"]["allowUnsandboxedCommands"] is False
    assert f"Edit(/{vault}/**)" in settings["permissions"]["deny"]
    assert "/" + str(home.socket.parent) in settings["sandbox"]["filesystem"]["denyRead"]


def test_doctor_says_whether_the_sandbox_is_on(vault: Path, home: Home) -> None:
    row = sandbox_row("claude", home.env)
    assert row is not None and row[0] == "warn" and "only by the guard" in row[2]
    settings = home.root / "user" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(claude_settings(home.env)))
    on = sandbox_row("claude", home.env)
    assert on is not None and on[0] == "ok", on


def test_a_sandboxed_shell_cannot_write_a_note_or_reach_the_socket(vault: Path, home: Home, tmp_path: Path) -> None:
    if not _bwrap_runs():
        # .ci/run installs bubblewrap: under CI its absence is a failure, not a quiet skip.
        message = "bubblewrap cannot run here (apt-get install bubblewrap socat)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    python = shutil.which("python3") or "python3"
    outside = subprocess.run([python, "-c", CONNECT, str(home.socket)], capture_output=True, text=True, check=False)
    assert outside.returncode == 0 and "connected" in outside.stdout, "the socket answers outside the sandbox"
    box = bwrap_argv(home.env, writable=[str(tmp_path)])
    before = (vault / "Alpha.md").read_bytes()
    write = subprocess.run([*box, "bash", "-c", f"echo x >> {vault}/Alpha.md"], capture_output=True, text=True, check=False)
    assert write.returncode != 0 and "Read-only file system" in write.stderr
    remove = subprocess.run([*box, "rm", "-f", f"{vault}/Alpha.md"], capture_output=True, text=True, check=False)
    assert remove.returncode != 0
    assert (vault / "Alpha.md").read_bytes() == before
    reach = subprocess.run([*box, python, "-c", CONNECT, str(home.socket)], capture_output=True, text=True, check=False)
    assert reach.returncode != 0 and "connected" not in reach.stdout
    own = subprocess.run([*box, "bash", "-c", f"echo ok > {tmp_path}/mine.txt"], capture_output=True, text=True, check=False)
    assert own.returncode == 0 and (tmp_path / "mine.txt").read_text() == "ok\n", "the session's own folder stays writable"
