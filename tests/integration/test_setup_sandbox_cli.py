"""``vaultctl setup HOST --apply`` writes the host's own sandbox rules into its settings, merged
with the person's, and ``--undo`` gives every file back byte for byte: through the real entry
point, a real daemon holding a registered vault, in a temp home."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.harness import register
from vaultctl.setup.sandbox import claude_settings

if TYPE_CHECKING:
    from tests.support.harness import Daemon, Home

THEIRS: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test)"], "deny": ["Read(./.env)", "Bash(curl:*)"]},
    "sandbox": {"enabled": False, "excludedCommands": ["docker"], "filesystem": {"denyWrite": ["//etc"]}},
    "env": {"A": "1"},
}


@pytest.fixture
def vault(daemon: Daemon, home: Home) -> Path:
    root = home.root / "vault"
    root.mkdir()
    (root / "Alpha.md").write_text("# Alpha\n")
    register(home, root)
    return root


#: setup writes the absolute path of the vaultctl it finds on PATH into the host's files
PATH = f"{Path(sys.executable).parent}:/usr/bin:/bin"


def _setup(cli: Any, *args: str) -> Any:
    return cli("setup", *args, env={"PATH": PATH})


def _settings(home: Home) -> Path:
    return home.root / "user" / ".claude" / "settings.json"


def _files(home: Home) -> dict[str, bytes]:
    """Every file under the person's home (what setup may touch), by path."""
    user = home.root / "user"
    return {str(p.relative_to(user)): p.read_bytes() for p in sorted(user.rglob("*")) if p.is_file()}


def _sandbox_row(cli: Any) -> dict[str, Any]:
    """Doctor's ``sandbox:claude`` row ({} when doctor has none: no vaultd entry or hooks there)."""
    found = {f["check"]: f for f in cli("doctor", "--json").json()["findings"]}
    row: dict[str, Any] = found.get("sandbox:claude", {})
    return row


def test_apply_writes_claudes_sandbox_and_doctor_says_it_is_on(vault: Path, home: Home, cli: Any) -> None:
    out = _setup(cli, "claude", "--apply", "--json")
    assert out.code == 0, out.err
    data = json.loads(_settings(home).read_text())
    rules = claude_settings(home.env)
    assert data["sandbox"]["enabled"] is True and data["sandbox"]["allowUnsandboxedCommands"] is False
    assert "/" + str(vault) in data["sandbox"]["filesystem"]["denyWrite"]
    assert data["sandbox"]["filesystem"] == rules["sandbox"]["filesystem"]
    assert f"Edit(/{vault}/**)" in data["permissions"]["deny"]
    assert data["hooks"]["PreToolUse"], "the guard's hooks share the file"
    row = _sandbox_row(cli)
    assert row["level"] == "ok" and "the sandbox is on" in row["finding"], row
    plan = out.json()
    assert plan["sandbox"]["applied"] is True and plan["sandbox"]["path"] == str(_settings(home))


def test_undo_gives_every_file_back_byte_for_byte_and_apply_twice_is_a_no_op(vault: Path, home: Home, cli: Any) -> None:
    settings = _settings(home)
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps(THEIRS, indent=4) + "\n")
    before = _files(home)
    dry = _setup(cli, "claude")
    assert dry.code == 0, dry.err
    assert "sets sandbox.enabled to false; setup turns it on (undo puts false back)" in dry.out
    assert _files(home) == before, "a dry run writes nothing"

    assert _setup(cli, "claude", "--apply").code == 0
    once = _files(home)
    data = json.loads(settings.read_text())
    assert data["model"] == "opus" and data["env"] == {"A": "1"}
    assert data["permissions"]["allow"] == ["Bash(npm test)"]
    assert data["permissions"]["deny"][:2] == THEIRS["permissions"]["deny"], "their deny rules stay first, in order"
    assert f"Edit(/{vault}/**)" in data["permissions"]["deny"]
    assert data["sandbox"]["enabled"] is True and data["sandbox"]["excludedCommands"] == ["docker"]
    assert data["sandbox"]["filesystem"]["denyWrite"][0] == "//etc"
    assert "/" + str(vault) in data["sandbox"]["filesystem"]["denyWrite"]

    again = _setup(cli, "claude", "--apply", "--json")
    assert again.code == 0, again.err
    assert again.json()["sandbox"]["action"] == "none"
    assert _files(home) == once, "a second apply changes nothing"

    undone = _setup(cli, "claude", "--undo", "--json")
    assert undone.code == 0, undone.err
    assert undone.json()["sandbox"]["action"] == "remove"
    assert _files(home) == before, "undo gives back every file as it was"
    assert _sandbox_row(cli).get("level") != "ok"


def test_a_settings_file_setup_created_is_deleted_by_undo(vault: Path, home: Home, cli: Any) -> None:
    before = _files(home)
    assert _setup(cli, "claude", "--apply", "--no-guard").code == 0
    data = json.loads(_settings(home).read_text())
    assert set(data) == {"sandbox", "permissions"}
    assert _setup(cli, "claude", "--undo").code == 0
    assert _files(home) == before and not _settings(home).exists()


def test_a_newly_registered_vault_is_added_by_the_next_apply_and_undo_still_restores(vault: Path, home: Home, cli: Any) -> None:
    settings = _settings(home)
    settings.parent.mkdir(parents=True)
    settings.write_text('{"theme": "dark"}')
    before = _files(home)
    assert _setup(cli, "claude", "--apply").code == 0
    second = home.root / "second"
    second.mkdir()
    assert cli("vault", "add", "w", str(second)).code == 0
    assert _sandbox_row(cli)["level"] == "warn", "doctor sees the new vault is not denied yet"
    assert _setup(cli, "claude", "--apply").code == 0
    assert "/" + str(second) in json.loads(settings.read_text())["sandbox"]["filesystem"]["denyWrite"]
    assert _sandbox_row(cli)["level"] == "ok"
    assert _setup(cli, "claude", "--undo").code == 0
    assert _files(home) == before


def test_no_sandbox_leaves_the_sandbox_settings_out(vault: Path, home: Home, cli: Any) -> None:
    out = _setup(cli, "claude", "--apply", "--no-sandbox", "--json")
    assert out.code == 0, out.err
    plan = out.json()
    assert plan["sandbox"] is None
    assert any("Merge into it" in n for n in plan["notes"]), "the plan says what to merge by hand"
    data = json.loads(_settings(home).read_text())
    assert "sandbox" not in data and "permissions" not in data and data["hooks"]
    assert _sandbox_row(cli)["level"] == "warn"
    assert _setup(cli, "claude", "--undo", "--no-sandbox").code == 2


def test_codex_gets_workspace_write_and_undo_restores_its_own_mode(vault: Path, home: Home, cli: Any) -> None:
    config = home.root / "user" / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('sandbox_mode = "danger-full-access"\nmodel = "o3"\n\n[profiles.x]\nsandbox_mode = "read-only"\n')
    before = _files(home)
    out = _setup(cli, "codex", "--apply", "--json")
    assert out.code == 0, out.err
    assert "sets sandbox_mode = 'danger-full-access'" in " ".join(out.json()["sandbox"]["notes"])
    data = tomllib.loads(config.read_text())
    assert data["sandbox_mode"] == "workspace-write" and data["model"] == "o3"
    assert data["profiles"]["x"]["sandbox_mode"] == "read-only"
    found = {f["check"]: f for f in cli("doctor", "--json").json()["findings"]}
    assert found["sandbox:codex"]["level"] == "ok", found["sandbox:codex"]
    assert _setup(cli, "codex", "--apply", "--json").json()["sandbox"]["action"] == "none"
    assert _setup(cli, "codex", "--undo").code == 0
    assert _files(home) == before


def test_codex_without_a_mode_gets_one_line_that_undo_takes_out(vault: Path, home: Home, cli: Any) -> None:
    before = _files(home)
    assert _setup(cli, "codex", "--apply").code == 0
    config = home.root / "user" / ".codex" / "config.toml"
    assert config.read_text().startswith('sandbox_mode = "workspace-write"\n')
    assert _setup(cli, "codex", "--undo").code == 0
    assert _files(home) == before


def test_gemini_without_a_container_runtime_says_its_shell_is_guarded_only_by_words(vault: Path, home: Home, cli: Any) -> None:
    # Only the venv's folder on PATH: vaultctl is there, docker and podman are not.
    out = cli("setup", "gemini", "--apply", "--json", env={"PATH": str(Path(sys.executable).parent)})
    assert out.code == 0, out.err
    sandbox = out.json()["sandbox"]
    assert sandbox["action"] == "none" and "only by the guard" in sandbox["notes"][0]
    assert "tools" not in json.loads((home.root / "user" / ".gemini" / "settings.json").read_text())


def test_gemini_with_a_container_runtime_gets_its_sandbox_and_undo_restores(vault: Path, home: Home, cli: Any) -> None:
    tools = home.root / "bin"
    tools.mkdir()
    (tools / "podman").write_text("#!/bin/sh\nexit 0\n")
    (tools / "podman").chmod(0o755)
    settings = home.root / "user" / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{\n  "tools": {"core": ["ReadFileTool"]},\n  "ui": {"theme": "dark"}\n}\n')
    before = _files(home)
    env = {"PATH": f"{Path(sys.executable).parent}:{tools}"}
    out = cli("setup", "gemini", "--apply", "--json", env=env)
    assert out.code == 0, out.err
    data = json.loads(settings.read_text())
    assert data["tools"] == {"core": ["ReadFileTool"], "sandbox": True} and data["ui"] == {"theme": "dark"}
    found = {f["check"]: f for f in cli("doctor", "--json").json()["findings"]}
    assert found["sandbox:gemini"]["level"] == "ok", found["sandbox:gemini"]
    assert cli("setup", "gemini", "--apply", "--json", env=env).json()["sandbox"]["action"] == "none"
    assert cli("setup", "gemini", "--undo", env=env).code == 0
    assert _files(home) == before


def test_a_host_without_a_sandbox_says_so_in_the_plan(vault: Path, home: Home, cli: Any) -> None:
    out = _setup(cli, "cursor", "--json")
    assert out.code == 0, out.err
    plan = out.json()
    assert plan["sandbox"] is None
    assert any("no sandbox setup can turn on" in n for n in plan["notes"]), plan["notes"]


def test_a_mode_setup_cannot_edit_is_refused_and_nothing_is_written(vault: Path, home: Home, cli: Any) -> None:
    config = home.root / "user" / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('"sandbox_mode" = "danger-full-access"\n')
    before = _files(home)
    out = _setup(cli, "codex", "--apply")
    assert out.code != 0 and "--no-sandbox" in out.err
    assert 'add this by hand:\nsandbox_mode = "workspace-write"' in out.err
    assert _files(home) == before, "neither the entry, nor the hooks, nor the mode is written"
    alone = _setup(cli, "codex", "--apply", "--no-sandbox")
    assert alone.code == 0, alone.err
    assert tomllib.loads(config.read_text())["sandbox_mode"] == "danger-full-access"
