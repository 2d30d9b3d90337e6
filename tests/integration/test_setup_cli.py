"""vaultctl setup through the real entry point: dry run, apply, apply again, undo, for every host."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from tests.support.harness import REPO

HOST_FILES = {
    "claude": ".claude.json",
    "codex": ".codex/config.toml",
    "cursor": ".cursor/mcp.json",
    "gemini": ".gemini/settings.json",
    "windsurf": ".codeium/windsurf/mcp_config.json",
}
EXISTING = {
    "claude": '{\n    "theme": "dark",\n    "mcpServers": {\n        "other": {"command": "x"}\n    }\n}\n',
    "codex": '# my codex config\nmodel = "o4"\n\n[mcp_servers.other]\ncommand = "x"\n',
    "cursor": '{"mcpServers":{}}',
    "gemini": '{\r\n  "mcpServers": {\r\n    "a": {"command": "b"}\r\n  }\r\n}\r\n',
    "windsurf": '{\n\t"mcpServers": {}\n}\n',
}


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "HOME": str(home),
        "VAULTD_HOME": str(home / "vd"),
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "PYTHONPATH": str(REPO),
    }
    return subprocess.run(
        [sys.executable, "-m", "vaultctl.main", "setup", *args], env=env, capture_output=True, text=True, cwd=REPO, timeout=60
    )


@pytest.mark.parametrize("host", sorted(HOST_FILES))
@pytest.mark.parametrize("existing", [False, True])
def test_apply_is_idempotent_and_undo_is_byte_identical(tmp_path: Path, host: str, existing: bool) -> None:
    target = tmp_path / HOST_FILES[host]
    target.parent.mkdir(parents=True, exist_ok=True)
    if existing:
        target.write_bytes(EXISTING[host].encode())
    before = target.read_bytes() if existing else None
    dry = _run(tmp_path, host)
    assert dry.returncode == 0, dry.stderr
    assert (target.read_bytes() if existing else None) == before and (existing or not target.exists())
    applied = _run(tmp_path, host, "--apply", "--json")
    assert applied.returncode == 0, applied.stderr
    assert json.loads(applied.stdout)["applied"] is True
    text = target.read_text()
    assert "vaultd" in text and "mcp" in text
    mtime = target.stat().st_mtime_ns
    again = _run(tmp_path, host, "--apply", "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["action"] == "none"
    assert target.stat().st_mtime_ns == mtime
    undone = _run(tmp_path, host, "--undo")
    assert undone.returncode == 0, undone.stderr
    if existing:
        assert target.read_bytes() == before
    else:
        assert not target.exists()


def test_malformed_and_linked_files_are_refused_untouched(tmp_path: Path) -> None:
    cfg = tmp_path / ".claude.json"
    cfg.write_text('{"mcpServers": {"x": {"command": "y"}}, // comment\n}')
    before = cfg.read_bytes()
    out = _run(tmp_path, "claude", "--apply")
    assert out.returncode == 1 and cfg.read_bytes() == before
    cfg.unlink()
    real = tmp_path / "real.json"
    real.write_text("{}")
    cfg.symlink_to(real)
    out = _run(tmp_path, "claude", "--apply")
    assert out.returncode == 1 and real.read_text() == "{}"


def test_unknown_host_is_a_usage_error(tmp_path: Path) -> None:
    assert _run(tmp_path, "emacs").returncode == 2


async def test_a_host_with_its_own_environment_reaches_the_daemon_setup_ran_against(tmp_path: Path) -> None:
    """Regression: with VAULTD_HOME and VAULTD_SOCKET set, setup wrote no env, so a host that starts
    servers with an environment of its own reached (and autostarted) a daemon with no vaults. Here
    the shim is started exactly as the host would (the entry's command, args and env, nothing of
    this shell's vaultd variables) and driven with the official MCP SDK client."""
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    from tests.support.harness import Daemon, Home, vaultctl

    home = Home.create()
    try:
        daemon = Daemon(home)
        try:
            (home.root / "v").mkdir()
            (home.root / "v" / "Note.md").write_text("# Note\n")
            assert vaultctl(home, "vault", "add", "mine", str(home.root / "v")).code == 0
            user = home.root / "user"
            setup_env = {**home.env, "HOME": str(user), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
            applied = await anyio.to_thread.run_sync(
                lambda: subprocess.run(
                    [sys.executable, "-m", "vaultctl.main", "setup", "claude", "--apply", "--json"],
                    env=setup_env,
                    capture_output=True,
                    text=True,
                    cwd=REPO,
                    timeout=60,
                )
            )
            assert applied.returncode == 0, applied.stderr
            assert any("VAULTD_SOCKET=" in n for n in json.loads(applied.stdout)["notes"])
            entry = json.loads((user / ".claude.json").read_text())["mcpServers"]["vaultd"]
            assert entry["env"] == {"VAULTD_HOME": str(home.home), "VAULTD_SOCKET": str(home.socket)}
            host_env = {"HOME": str(user), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "VAULTD_NO_AUTOSTART": "1", **entry["env"]}
            server = StdioServerParameters(command=entry["command"], args=entry["args"], env=host_env, cwd=str(REPO))
            async with Client(server, mode="auto", read_timeout_seconds=60) as client:
                listed = await client.call_tool("note_list", {"vault": "mine"})  # a core tool: the entry offers it
            assert not listed.is_error, listed.content  # only the daemon setup ran against has the vault "mine"
            assert isinstance(listed.structured_content, dict) and "notes" in listed.structured_content
        finally:
            daemon.stop()
    finally:
        home.cleanup()


def test_setup_and_doctor_name_the_claude_entries_that_win_over_the_user_one(tmp_path: Path) -> None:
    """Regression: a leftover local-scope entry silently won over the user entry setup wrote
    (setup said it added it, doctor said ok, and Claude Code ran the leftover)."""
    from tests.support.harness import Daemon, Home

    home = Home.create()
    try:
        daemon = Daemon(home)
        try:
            user = home.root / "user"
            project = home.root / "proj"
            project.mkdir()
            (user / ".claude.json").write_text(
                json.dumps(
                    {
                        "projects": {
                            str(project): {
                                "mcpServers": {"vaultd": {"type": "stdio", "command": "/old/venv/bin/vaultctl", "args": ["mcp"]}}
                            }
                        }
                    },
                    indent=2,
                )
            )
            (project / ".mcp.json").write_text('{"mcpServers": {"vaultd": {"command": "vaultctl-old"}}}\n')
            env = {**home.env, "HOME": str(user), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}

            def run(*args: str) -> subprocess.CompletedProcess[str]:
                return subprocess.run(
                    [sys.executable, "-m", "vaultctl.main", *args], env=env, capture_output=True, text=True, cwd=project, timeout=120
                )

            applied = run("setup", "claude", "--apply", "--json")
            assert applied.returncode == 0, applied.stderr
            notes = json.loads(applied.stdout)["notes"]
            assert any("local-scope" in n and str(project) in n and "claude mcp remove vaultd -s local" in n for n in notes), notes
            assert any("project-scope" in n and ".mcp.json" in n for n in notes), notes
            doctor = run("doctor", "--json")
            rows = [f for f in json.loads(doctor.stdout)["findings"] if f["check"].startswith("host")]
            ok = [r for r in rows if r["check"] == "host:claude" and r["level"] == "ok"]
            assert ok and "this daemon" in ok[0]["finding"], rows
            warned = [r["finding"] for r in rows if r["check"] == "host:claude" and r["level"] == "warn"]
            assert len(warned) == 2 and any("local-scope" in w for w in warned), rows
            # An entry whose command is gone, and one that reaches no daemon: each its own row.
            codex = user / ".codex"
            codex.mkdir()
            (codex / "config.toml").write_text('[mcp_servers.vaultd]\ncommand = "/nonexistent/vaultctl"\nargs = ["mcp"]\n')
            (user / ".gemini").mkdir()
            (user / ".gemini" / "settings.json").write_text(
                json.dumps({"mcpServers": {"vaultd": {"command": str(Path(sys.executable).parent / "vaultctl"), "args": ["mcp"]}}})
            )
            doctor = run("doctor", "--json")
            assert doctor.returncode == 1, doctor.stdout
            result = json.loads(doctor.stdout)
            by_check = {f["check"]: f for f in result["findings"] if f["check"] in ("host:codex", "host:gemini")}
            assert by_check["host:codex"]["level"] == "fail" and "cannot run" in by_check["host:codex"]["finding"]
            assert by_check["host:gemini"]["level"] == "warn", by_check
            # No daemon at the default place (or one that is not this one, if the machine runs its own).
            assert any(w in by_check["host:gemini"]["finding"] for w in ("reaches no daemon", "not this shell's"))
            assert result["verdict"] == "fail"
        finally:
            daemon.stop()
    finally:
        home.cleanup()
