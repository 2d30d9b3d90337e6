"""Host setup: dry runs write nothing, apply is idempotent, undo gives back the very same bytes."""

from __future__ import annotations

import ast
import json
import os
import stat
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.errors import ErrorCode
from vaultctl.setup import (
    HOSTS,
    MAX_FILE_BYTES,
    Action,
    CannotEditFaithfully,
    EntryChanged,
    FileChanged,
    FileTooLarge,
    MalformedConfig,
    Mode,
    NoRecord,
    SetupError,
    Status,
    UnsafeFile,
    UsageError,
    apply_setup,
    files,
    plan_setup,
    run,
    setup_all,
    undo_setup,
)
from vaultctl.setup.hosts import launch_env

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

COMMAND = "/opt/vaultd/bin/vaultctl"
OTHER_COMMAND = "/usr/local/bin/vaultctl"
SECRET = "sk-live-SECRET0123456789abcdefXYZ"
JSON_HOSTS = ["claude", "cursor", "gemini", "windsurf", "kimi", "qwen", "antigravity"]
ALL_HOSTS = [*JSON_HOSTS, "codex"]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A fresh HOME and vaultd home; the library reads os.environ when not given env."""
    home = tmp_path / "home"
    home.mkdir()
    values = {"HOME": str(home), "VAULTD_HOME": str(tmp_path / "vaultd-home")}
    for key in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(key, raising=False)
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return values


def config_path(host: str, env: dict[str, str]) -> Path:
    return HOSTS[host].config_path(env)


def entry_for(host: str, command: str = COMMAND, env: dict[str, str] | None = None) -> dict[str, Any]:
    """The entry setup writes in ``env`` (else os.environ): the fixtures' VAULTD_HOME is not the
    default, so it is carried."""
    return HOSTS[host].entry(command, launch_env(os.environ if env is None else env))


def load(host: str, path: Path) -> Any:
    text = path.read_text(encoding="utf-8-sig")
    return tomllib.loads(text) if host == "codex" else json.loads(text)


def servers_of(host: str, data: Any) -> Any:
    return data["mcp_servers" if host == "codex" else "mcpServers"]


def records(env: dict[str, str]) -> list[Path]:
    folder = Path(env["VAULTD_HOME"]) / "setup"
    return sorted(folder.iterdir()) if folder.exists() else []


def write(path: Path, data: str | bytes, mode: int | None = None) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    path.write_bytes(raw)
    if mode is not None:
        path.chmod(mode)
    return raw


def state(path: Path) -> tuple[bytes, int] | None:
    if not path.exists():
        return None
    return path.read_bytes(), path.stat().st_mtime_ns


# -- every host, from no file ----------------------------------------------------------------------


@pytest.mark.parametrize("host", ALL_HOSTS)
def test_absent_file_dry_run_apply_again_undo(host: str, env: dict[str, str]) -> None:
    path = config_path(host, env)
    if host == "claude":  # the file lives in HOME itself; start without it
        assert not path.exists()

    plan = plan_setup(host, COMMAND)
    assert plan.action is Action.CREATE_FILE and not plan.applied
    assert plan.before is None and plan.after == entry_for(host)
    assert plan.diff.startswith("--- /dev/null")
    assert not path.exists() and records(env) == []
    if host != "claude":
        assert not path.parent.exists(), "a dry run must not create the host's folder"

    applied = apply_setup(host, COMMAND)
    assert applied.action is Action.CREATE_FILE and applied.applied
    assert servers_of(host, load(host, path)) == {"vaultd": entry_for(host)}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    if host != "claude":
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert sorted(p.name for p in path.parent.iterdir() if "vaultd-tmp" in p.name) == []
    [record] = records(env)
    assert stat.S_IMODE(record.stat().st_mode) == 0o600

    first = state(path)
    record_bytes = record.read_bytes()
    again = apply_setup(host, COMMAND)
    assert again.action is Action.NONE and not again.applied and again.diff == ""
    assert state(path) == first
    assert record.read_bytes() == record_bytes

    undone = undo_setup(host)
    assert undone.action is Action.DELETE_FILE and undone.applied
    assert not path.exists()
    assert records(env) == []


@pytest.mark.parametrize("host", ALL_HOSTS)
def test_existing_file_round_trip(host: str, env: dict[str, str]) -> None:
    path = config_path(host, env)
    if host == "codex":
        original = write(path, '# mine\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n', 0o640)
    else:
        original = write(path, '{\n  "theme": "dark",\n  "mcpServers": {\n    "other": {"command": "x"}\n  }\n}\n', 0o640)
    before_mtime = path.stat().st_mtime_ns

    plan_setup(host, COMMAND)
    assert path.read_bytes() == original and path.stat().st_mtime_ns == before_mtime

    applied = apply_setup(host, COMMAND)
    assert applied.action is Action.ADD
    data = load(host, path)
    assert servers_of(host, data) == {"other": {"command": "x"}, "vaultd": entry_for(host)}
    assert stat.S_IMODE(path.stat().st_mode) == 0o640, "apply keeps the file's mode"

    first = state(path)
    assert apply_setup(host, COMMAND).action is Action.NONE
    assert state(path) == first

    assert undo_setup(host).action is Action.REMOVE
    assert path.read_bytes() == original
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


# -- JSON formatting survives ----------------------------------------------------------------------

JSON_VARIANTS = {
    "two-space": '{\n  "a": 1,\n  "mcpServers": {\n    "x": {\n      "command": "x"\n    }\n  }\n}\n',
    "four-space": '{\n    "mcpServers": {\n        "x": {"command": "x"},\n        "y": {"command": "y"}\n    },\n    "z": [1, 2]\n}',
    "tabs": '{\n\t"mcpServers": {\n\t\t"x": {\n\t\t\t"command": "x"\n\t\t}\n\t}\n}\n',
    "crlf": '{\r\n  "a": true,\r\n  "mcpServers": {\r\n    "x": {\r\n      "command": "x"\r\n    }\r\n  }\r\n}\r\n',
    "unicode": '{\n  "名前": "値 \\u00e9 é",\n  "emoji": "🙂",\n  "mcpServers": {\n    "ü": {"command": "/p/ü"}\n  }\n}\n',
    "compact": '{"a":{"b":[1,2,{"c":null}]},"mcpServers":{"x":{"command":"x"}}}',
    "spaced-compact": '{ "a" : 1 , "mcpServers" : { "x" : { "command" : "x" } } }',
    "empty-top": "{}",
    "empty-top-newline": "{}\n",
    "empty-top-spaces": "{ \n }\n",
    "empty-servers": '{\n  "mcpServers": {}\n}\n',
    "empty-servers-spaced": '{\n  "mcpServers": {\n  },\n  "b": 2\n}\n',
    "no-servers": '{\n  "projects": {"/x": {"allowedTools": []}},\n  "numStartups": 7\n}\n',
    "existing-vaultd": '{\n  "mcpServers": {\n    "vaultd": {"command": "old", "env": {"K": "v"}},\n    "x": {"command": "x"}\n  }\n}\n',
    "existing-vaultd-compact": '{"mcpServers":{"x":{},"vaultd":{"command":"old"}}}',
    "existing-vaultd-null": '{\n  "mcpServers": {\n    "vaultd": null\n  }\n}\n',
    "bom": '\ufeff{\n  "mcpServers": {\n    "x": {"command": "x"}\n  }\n}\n',
    "escapes": '{\n  "k\\"ey": "a\\nb\\/c",\n  "mcpServers": {"x": {"args": ["--a", "\\u0041"]}}\n}\n',
    "numbers": '{\n  "n": 1.0e10, "m": -0.0, "big": 123456789012345678901234567890,\n  "mcpServers": {}\n}\n',
}


@pytest.mark.parametrize("host", JSON_HOSTS)
@pytest.mark.parametrize("variant", sorted(JSON_VARIANTS))
def test_json_formatting_round_trip(host: str, variant: str, env: dict[str, str]) -> None:
    path = config_path(host, env)
    original = write(path, JSON_VARIANTS[variant])
    parsed_before = json.loads(original.decode("utf-8-sig"))

    applied = apply_setup(host, COMMAND)
    had = "vaultd" in parsed_before.get("mcpServers", {})
    assert applied.action is (Action.REPLACE if had else Action.ADD)
    after = json.loads(path.read_bytes().decode("utf-8-sig"))
    expected = dict(parsed_before)
    expected["mcpServers"] = {**parsed_before.get("mcpServers", {}), "vaultd": entry_for(host)}
    assert after == expected
    text = path.read_bytes().decode("utf-8")
    if variant == "crlf":
        assert "\n" not in text.replace("\r\n", ""), "inserted lines use the file's CRLF"
    if variant == "tabs":
        assert '\t\t"vaultd": {\n\t\t\t"' in text
    if variant == "bom":
        assert text.startswith("\ufeff")

    assert apply_setup(host, COMMAND).action is Action.NONE
    assert undo_setup(host).action is (Action.RESTORE if had else Action.REMOVE)
    assert path.read_bytes() == original


def test_reapply_with_new_command_then_undo_restores_original(env: dict[str, str]) -> None:
    path = config_path("cursor", env)
    original = write(path, '{\n  "mcpServers": {\n    "vaultd": {"command": "mine"}\n  }\n}\n')
    apply_setup("cursor", COMMAND)
    moved = apply_setup("cursor", OTHER_COMMAND)
    assert moved.action is Action.REPLACE and moved.before == entry_for("cursor")
    assert undo_setup("cursor").action is Action.RESTORE
    assert path.read_bytes() == original


def test_reapply_over_created_file_still_deletes_it(env: dict[str, str]) -> None:
    path = config_path("gemini", env)
    apply_setup("gemini", COMMAND)
    apply_setup("gemini", OTHER_COMMAND)
    assert undo_setup("gemini").action is Action.DELETE_FILE
    assert not path.exists()


def test_undo_keeps_the_hosts_later_edits(env: dict[str, str]) -> None:
    """The host rewrote its file after setup: undo removes only vaultd's entry."""
    path = config_path("claude", env)
    apply_setup("claude", COMMAND)
    data = json.loads(path.read_text())
    data["numStartups"] = 2
    data["mcpServers"]["later"] = {"command": "l"}
    path.write_text(json.dumps(data, indent=2))
    assert undo_setup("claude").action is Action.REMOVE
    assert json.loads(path.read_text()) == {"numStartups": 2, "mcpServers": {"later": {"command": "l"}}}


def test_undo_of_a_created_file_the_user_extended_keeps_the_file(env: dict[str, str]) -> None:
    path = config_path("cursor", env)
    apply_setup("cursor", COMMAND)
    path.write_text(path.read_text().replace('{\n  "mcpServers"', '{\n  "theme": 1,\n  "mcpServers"'))
    assert undo_setup("cursor").action is Action.REMOVE
    assert json.loads(path.read_text()) == {"theme": 1}


# -- TOML formatting survives ----------------------------------------------------------------------

TOML_VARIANTS = {
    "comments-and-tables": '# Codex settings\nmodel = "o3"  # inline comment\n\n[mcp_servers.other]\n'
    'command = "npx"\nargs = ["-y", "srv"]\nenv = { TOKEN = "t" }\n\n# about profiles\n[profiles.fast]\n'
    'model = "o4-mini"\n',
    "no-trailing-newline": 'model = "o3"\n[tui]\nnotifications = true',
    "trailing-blank-lines": 'model = "o3"\n\n\n',
    "empty": "",
    "crlf": 'model = "o3"\r\n\r\n[mcp_servers.other]\r\ncommand = "x"\r\n',
    "explicit-servers-header": "[mcp_servers]\n\n[mcp_servers.a]\ncommand = 'a'\n",
    "unicode": 'name = "ünïcödé 🙂"\n[mcp_servers."quoted name"]\ncommand = "/x/ü"\n',
    "multiline-string": 'notes = """\n[mcp_servers.vaultd]\ncommand = "fake"\n"""\n',
    "existing-vaultd": 'model = "o3"\n\n[mcp_servers.vaultd]\ncommand = "old" # mine\nargs = [\n  "a",\n]\n'
    'startup_timeout_sec = 20\n\n# next table\n[profiles.a]\nmodel = "x"\n',
    "existing-vaultd-last": '[mcp_servers.vaultd]\ncommand = "old"',
    "existing-vaultd-spaced-header": '[ mcp_servers . "vaultd" ]  # here\ncommand = "old"\n\n[x]\ny = 1\n',
    "existing-vaultd-empty": "[mcp_servers.vaultd]\n[x]\ny = 1\n",
    "array-of-tables-last": 'a = 1\n\n[[profiles]]\nname = "p"\n',
}


@pytest.mark.parametrize("variant", sorted(TOML_VARIANTS))
def test_toml_formatting_round_trip(variant: str, env: dict[str, str]) -> None:
    path = config_path("codex", env)
    original = write(path, TOML_VARIANTS[variant])
    parsed_before = tomllib.loads(original.decode())
    had = "vaultd" in parsed_before.get("mcp_servers", {})

    applied = apply_setup("codex", COMMAND)
    assert applied.action is (Action.REPLACE if had else Action.ADD)
    expected = dict(parsed_before)
    expected["mcp_servers"] = {**parsed_before.get("mcp_servers", {}), "vaultd": entry_for("codex")}
    assert tomllib.loads(path.read_text()) == expected
    applied_text = path.read_bytes()
    if had:
        # Bytes outside the entry's own lines are untouched.
        assert applied_text.startswith(original[: original.index(b"]") + 1])
    else:
        assert applied_text.startswith(original), "a new table is appended after every byte"

    assert apply_setup("codex", COMMAND).action is Action.NONE
    undo_setup("codex")
    assert path.read_bytes() == original


def test_toml_undo_keeps_tables_added_after_ours(env: dict[str, str]) -> None:
    path = config_path("codex", env)
    write(path, 'model = "o3"\n')
    apply_setup("codex", COMMAND)
    with path.open("a") as f:
        f.write('\n[mcp_servers.later]\ncommand = "l"\n')
    assert undo_setup("codex").action is Action.REMOVE
    assert path.read_text() == 'model = "o3"\n\n[mcp_servers.later]\ncommand = "l"\n'


def test_json_undo_from_the_middle_of_the_servers(env: dict[str, str]) -> None:
    path = config_path("cursor", env)
    write(path, '{\n  "mcpServers": {\n    "a": {}\n  }\n}\n')
    apply_setup("cursor", COMMAND)
    path.write_text(path.read_text().replace("\n  }\n}", ',\n    "b": {}\n  }\n}'))
    undo_setup("cursor")
    assert path.read_text() == '{\n  "mcpServers": {\n    "a": {},\n    "b": {}\n  }\n}\n'


def test_codex_home_is_honoured(env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    plan = apply_setup("codex", COMMAND)
    assert plan.path == tmp_path / "codex-home" / "config.toml"
    assert plan.path.exists()
    assert not (Path(env["HOME"]) / ".codex").exists()


def test_toml_inline_entry_is_refused(env: dict[str, str]) -> None:
    path = config_path("codex", env)
    original = write(path, 'mcp_servers = { vaultd = { command = "old" }, o = { command = "' + SECRET + '" } }\n')
    with pytest.raises(CannotEditFaithfully) as info:
        apply_setup("codex", COMMAND)
    assert info.value.code is ErrorCode.VALIDATION
    assert SECRET not in str(info.value)
    manual = info.value.manual
    assert manual is not None and SECRET not in manual
    # The hint is valid for the file as it is: the entry's new value, put where the old one was.
    pair = _hint_pair(manual)
    assert "replace the vaultd entry" in manual
    fixed = original.decode().replace('vaultd = { command = "old" }', pair)
    assert tomllib.loads(fixed)["mcp_servers"] == {"vaultd": entry_for("codex"), "o": {"command": SECRET}}
    assert path.read_bytes() == original and records(env) == []


def _hint_pair(manual: str) -> str:
    """The ``vaultd = {...}`` line of a hint for an inline mcp_servers table (nothing else to paste)."""
    lines = [line for line in manual.splitlines() if line and not line.startswith("#")]
    assert len(lines) == 1 and lines[0].startswith("vaultd = {"), manual
    assert "[mcp_servers.vaultd]" not in manual.split("\n", 1)[1], "TOML allows no such table here"
    return lines[0]


def test_toml_inline_servers_table_is_refused_with_a_hint_valid_for_the_file(env: dict[str, str]) -> None:
    """Regression: the hint was a [mcp_servers.vaultd] table, which TOML (and Codex) then reject."""
    path = config_path("codex", env)
    original = write(path, 'model = "o3"\nmcp_servers = { o = { command = "x" } }  # mine\n')
    with pytest.raises(CannotEditFaithfully) as info:
        apply_setup("codex", COMMAND)
    assert path.read_bytes() == original
    manual = info.value.manual
    assert manual is not None and "line 2" in manual and "add" in manual
    fixed = original.decode().replace('"x" } }', '"x" }, ' + _hint_pair(manual) + " }")
    assert tomllib.loads(fixed)["mcp_servers"] == {"o": {"command": "x"}, "vaultd": entry_for("codex")}


def _locations(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    return {**env, "VAULTD_SOCKET": str(tmp_path / "sock" / "v.sock")}


@pytest.mark.parametrize("host", ALL_HOSTS)
def test_non_default_locations_are_carried_in_the_entry(host: str, env: dict[str, str], tmp_path: Path) -> None:
    """Regression: with VAULTD_HOME and VAULTD_SOCKET set, the entry had no env, so a host starting
    servers with an environment of its own reached (and autostarted) a daemon with no vaults."""
    custom = _locations(env, tmp_path)
    path = config_path(host, custom)
    original = write(path, EXISTING_FOR[host]) if host in EXISTING_FOR else None
    plan = apply_setup(host, COMMAND, env=custom)
    written = servers_of(host, load(host, path))["vaultd"]
    assert written["env"] == {"VAULTD_HOME": env["VAULTD_HOME"], "VAULTD_SOCKET": custom["VAULTD_SOCKET"]}
    assert written["command"] == COMMAND
    assert any("VAULTD_HOME=" in n and "VAULTD_SOCKET=" in n for n in plan.notes), plan.notes
    if host == "codex":
        assert "env = {" in path.read_text(), "one table edit: env stays inline"
    assert apply_setup(host, COMMAND, env=custom).action is Action.NONE
    undo_setup(host, env=custom)
    assert (path.read_bytes() if path.exists() else None) == original


EXISTING_FOR = {"codex": '[mcp_servers.other]\ncommand = "x"\n', "gemini": '{"theme": "x"}\n'}


def test_default_locations_write_no_env(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    for environ in ({"HOME": str(home)}, {"HOME": str(home), "VAULTD_HOME": str(home / ".local/share/vaultd")}):
        plan = plan_setup("cursor", COMMAND, env=environ)
        assert plan.after == {"command": COMMAND, "args": ["mcp", "--tools", "core"]}
        assert not any("VAULTD_" in n for n in plan.notes), plan.notes


def test_a_project_file_names_the_command_on_path_and_no_machine_path(env: dict[str, str], tmp_path: Path) -> None:
    """Regression: ``setup claude --project`` wrote this machine's absolute venv path into .mcp.json,
    a file shared through the repository."""
    project = tmp_path / "repo"
    project.mkdir()
    custom = {**_locations(env, tmp_path), "PATH": "/nonexistent"}
    plan = apply_setup("claude", COMMAND, project=project, env=custom)
    data = json.loads((project / ".mcp.json").read_text())
    assert data["mcpServers"]["vaultd"] == {"type": "stdio", "command": "vaultctl", "args": ["mcp", "--tools", "core"]}
    text = (project / ".mcp.json").read_text()
    assert str(tmp_path) not in text and COMMAND not in text
    assert any("PATH" in n and "not on PATH here" in n for n in plan.notes), plan.notes
    assert any("VAULTD_HOME=" in n and "not written into a shared file" in n for n in plan.notes), plan.notes


def test_toml_entry_with_sub_table_is_refused(env: dict[str, str]) -> None:
    path = config_path("codex", env)
    original = write(path, '[mcp_servers.vaultd]\ncommand = "old"\n\n[mcp_servers.vaultd.env]\nK = "v"\n')
    with pytest.raises(CannotEditFaithfully):
        apply_setup("codex", COMMAND)
    assert path.read_bytes() == original


# -- Claude Code's own places ----------------------------------------------------------------------


def test_claude_config_dir_is_honoured(env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    plan = apply_setup("claude", COMMAND)
    assert plan.path == tmp_path / "claude-config" / ".claude.json"
    assert json.loads(plan.path.read_text())["mcpServers"]["vaultd"]["type"] == "stdio"
    assert not (Path(env["HOME"]) / ".claude.json").exists()


def test_claude_project_file(env: dict[str, str], tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    original = write(project / ".mcp.json", '{\n  "mcpServers": {\n    "db": {"command": "db"}\n  }\n}\n')
    plan = apply_setup("claude", COMMAND, project=project)
    assert plan.path == project / ".mcp.json" and plan.action is Action.ADD
    assert not (Path(env["HOME"]) / ".claude.json").exists()
    with pytest.raises(NoRecord):
        undo_setup("claude")  # the user file was never touched
    undo_setup("claude", project=project)
    assert (project / ".mcp.json").read_bytes() == original


def test_project_option_errors(env: dict[str, str], tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        plan_setup("cursor", COMMAND, project=tmp_path)
    with pytest.raises(SetupError) as info:
        plan_setup("claude", COMMAND, project=tmp_path / "missing")
    assert info.value.code is ErrorCode.NOT_FOUND


def test_usage_errors(env: dict[str, str]) -> None:
    with pytest.raises(UsageError) as info:
        plan_setup("vim", COMMAND)
    assert info.value.code is ErrorCode.INVALID_PARAMS and "claude" in info.value.message
    with pytest.raises(UsageError):
        plan_setup("cursor", "vaultctl")


# -- undo refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ALL_HOSTS)
def test_undo_refused_after_user_edited_the_entry(host: str, env: dict[str, str]) -> None:
    path = config_path(host, env)
    apply_setup(host, COMMAND)
    edited = write(path, path.read_text().replace(COMMAND, "/home/me/my-vaultctl"))
    with pytest.raises(EntryChanged) as info:
        undo_setup(host)
    assert info.value.code is ErrorCode.CONFLICT
    assert str(path) in info.value.message
    assert path.read_bytes() == edited
    assert len(records(env)) == 1, "the record stays for a later decision"


def test_undo_refused_when_a_restorable_entry_was_removed(env: dict[str, str]) -> None:
    path = config_path("cursor", env)
    write(path, '{"mcpServers": {"vaultd": {"command": "mine"}}}')
    apply_setup("cursor", COMMAND)
    gone = write(path, '{"mcpServers": {}}')
    with pytest.raises(EntryChanged):
        undo_setup("cursor")
    assert path.read_bytes() == gone


def test_undo_when_entry_already_removed_by_hand_is_a_no_op(env: dict[str, str]) -> None:
    path = config_path("gemini", env)
    write(path, '{"a": 1}')
    apply_setup("gemini", COMMAND)
    by_hand = write(path, '{"a": 1, "mcpServers": {}}')
    plan = undo_setup("gemini")
    assert plan.action is Action.NONE and plan.notes
    assert path.read_bytes() == by_hand and records(env) == []


def test_undo_without_record(env: dict[str, str]) -> None:
    path = config_path("cursor", env)
    write(path, '{"mcpServers": {"vaultd": {"command": "x"}}}')
    with pytest.raises(NoRecord) as info:
        undo_setup("cursor")
    assert info.value.code is ErrorCode.NOT_FOUND and str(path) in info.value.message


def test_undo_dry_run_writes_nothing(env: dict[str, str]) -> None:
    path = config_path("cursor", env)
    write(path, '{"mcpServers": {}}')
    apply_setup("cursor", COMMAND)
    applied = state(path)
    plan = undo_setup("cursor", dry_run=True)
    assert plan.action is Action.REMOVE and not plan.applied and plan.mode is Mode.UNDO
    assert state(path) == applied and len(records(env)) == 1


def test_user_entry_equal_to_ours_is_left_alone(env: dict[str, str]) -> None:
    path = config_path("cursor", env)
    write(path, json.dumps({"mcpServers": {"vaultd": entry_for("cursor")}}))
    first = state(path)
    assert apply_setup("cursor", COMMAND).action is Action.NONE
    assert state(path) == first and records(env) == []


# -- refusals that leave the file alone ------------------------------------------------------------

SECRET_ENTRY = '"leaky": {"command": "x", "env": {"API_KEY": "' + SECRET + '"}}'
MALFORMED_JSON = {
    "truncated": '{"mcpServers": {' + SECRET_ENTRY,
    "line-comment": '{\n  // my servers\n  "mcpServers": {' + SECRET_ENTRY + "}\n}",
    "block-comment": '{"mcpServers": {' + SECRET_ENTRY + "} /* " + SECRET + " */}",
    "trailing-comma": '{"mcpServers": {' + SECRET_ENTRY + ",}}",
    "trailing-comma-array": '{"mcpServers": {' + SECRET_ENTRY + '}, "x": [1,]}',
    "top-array": '[{"mcpServers": {' + SECRET_ENTRY + "}}]",
    "top-string": '"' + SECRET + '"',
    "servers-array": '{"mcpServers": [{' + SECRET_ENTRY + "}]}",
    "servers-string": '{"mcpServers": "' + SECRET + '"}',
    "nan": '{"mcpServers": {' + SECRET_ENTRY + '}, "x": NaN}',
    "duplicate-servers": '{"mcpServers": {' + SECRET_ENTRY + '}, "mcpServers": {}}',
    "duplicate-entry": '{"mcpServers": {"vaultd": {}, "vaultd": {"command": "' + SECRET + '"}}}',
    "empty": "",
    "whitespace": "  \n",
    "single-quotes": "{'mcpServers': {}, 'k': '" + SECRET + "'}",
}


@pytest.mark.parametrize("attempt", [plan_setup, apply_setup], ids=["plan", "apply"])
@pytest.mark.parametrize("variant", sorted(MALFORMED_JSON))
def test_malformed_json_refused(variant: str, attempt: Callable[[str, str], object], env: dict[str, str]) -> None:
    path = config_path("claude", env)
    original = write(path, MALFORMED_JSON[variant])
    with pytest.raises(MalformedConfig) as info:
        attempt("claude", COMMAND)
    assert info.value.code is ErrorCode.VALIDATION
    assert str(path) in info.value.message
    assert SECRET not in str(info.value) and SECRET not in repr(info.value.__cause__)
    assert info.value.manual is not None and COMMAND in info.value.manual
    if "comment" in variant or "trailing-comma" in variant:
        assert "JSONC" in info.value.message
    assert path.read_bytes() == original and records(env) == []


def test_non_utf8_refused(env: dict[str, str]) -> None:
    path = config_path("gemini", env)
    original = write(path, b'{"k": "\xff\xfe"}')
    with pytest.raises(MalformedConfig):
        apply_setup("gemini", COMMAND)
    assert path.read_bytes() == original


MALFORMED_TOML = {
    "bad-syntax": 'model = "o3\n[mcp_servers.x]\nenv = { K = "' + SECRET + '" }\n',
    "duplicate-key": 'k = "' + SECRET + '"\nk = "' + SECRET + '"\n',
    "servers-not-table": 'mcp_servers = "' + SECRET + '"\n',
    "servers-array-of-tables": '[[mcp_servers]]\ncommand = "' + SECRET + '"\n',
    "bad-character": "[mcp_servers.x]\n" + SECRET + " = ~\n",
}


@pytest.mark.parametrize("variant", sorted(MALFORMED_TOML))
def test_malformed_toml_refused(variant: str, env: dict[str, str]) -> None:
    path = config_path("codex", env)
    original = write(path, MALFORMED_TOML[variant])
    with pytest.raises(MalformedConfig) as info:
        apply_setup("codex", COMMAND)
    assert info.value.code is ErrorCode.VALIDATION
    assert SECRET not in str(info.value)
    assert path.read_bytes() == original and records(env) == []


def test_symlinked_file_refused(env: dict[str, str], tmp_path: Path) -> None:
    path = config_path("cursor", env)
    target = tmp_path / "dotfiles" / "mcp.json"
    original = write(target, '{"mcpServers": {' + SECRET_ENTRY + "}}")
    path.parent.mkdir(parents=True)
    path.symlink_to(target)
    with pytest.raises(UnsafeFile) as info:
        apply_setup("cursor", COMMAND)
    assert info.value.code is ErrorCode.POLICY and "symbolic link" in info.value.message
    assert SECRET not in str(info.value)
    assert path.is_symlink() and target.read_bytes() == original


def test_dangling_symlink_refused(env: dict[str, str], tmp_path: Path) -> None:
    path = config_path("cursor", env)
    path.parent.mkdir(parents=True)
    path.symlink_to(tmp_path / "nowhere.json")
    with pytest.raises(UnsafeFile):
        apply_setup("cursor", COMMAND)
    assert path.is_symlink() and not (tmp_path / "nowhere.json").exists()


@pytest.mark.timeout(10)
def test_fifo_refused_without_blocking(env: dict[str, str]) -> None:
    path = config_path("gemini", env)
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    with pytest.raises(UnsafeFile) as info:
        apply_setup("gemini", COMMAND)
    assert info.value.code is ErrorCode.POLICY
    assert stat.S_ISFIFO(os.lstat(path).st_mode)


def test_directory_refused(env: dict[str, str]) -> None:
    path = config_path("codex", env)
    path.mkdir(parents=True)
    with pytest.raises(UnsafeFile):
        apply_setup("codex", COMMAND)
    assert path.is_dir()


def test_hard_linked_file_refused(env: dict[str, str], tmp_path: Path) -> None:
    path = config_path("cursor", env)
    original = write(path, '{"mcpServers": {}}')
    os.link(path, tmp_path / "other-name.json")
    with pytest.raises(UnsafeFile):
        apply_setup("cursor", COMMAND)
    assert path.read_bytes() == original


def test_oversized_file_refused(env: dict[str, str]) -> None:
    path = config_path("claude", env)
    original = write(path, '{"pad": "' + "x" * MAX_FILE_BYTES + '"}')
    with pytest.raises(FileTooLarge) as info:
        apply_setup("claude", COMMAND)
    assert info.value.code is ErrorCode.LIMIT
    assert path.stat().st_size == len(original)


def test_unreadable_file_refused(env: dict[str, str]) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads everything")
    path = config_path("cursor", env)
    write(path, "{}", 0o000)
    with pytest.raises(UnsafeFile) as info:
        apply_setup("cursor", COMMAND)
    assert info.value.code is ErrorCode.POLICY


def test_file_changed_between_read_and_rename(tmp_path: Path) -> None:
    path = tmp_path / "host" / "f.json"
    write(path, "{}")
    snap = files.read(path)
    assert snap is not None
    os.utime(path, ns=(0, 0))  # the host wrote it meanwhile
    with pytest.raises(FileChanged) as info:
        files.write(path, b"{ }", before=snap)
    assert info.value.code is ErrorCode.CONFLICT
    assert path.read_bytes() == b"{}" and [p.name for p in path.parent.iterdir()] == ["f.json"]


# -- secrets stay out of what setup shows -----------------------------------------------------------


def test_diff_masks_neighbouring_secrets(env: dict[str, str]) -> None:
    path = config_path("claude", env)
    write(
        path,
        '{\n  "mcpServers": {\n    "gh": {\n      "command": "gh",\n      "env": {\n'
        f'        "GITHUB_TOKEN": "{SECRET}"\n      }}\n    }}\n  }}\n}}\n'.replace("}}", "}"),
    )
    plan = plan_setup("claude", COMMAND)
    assert SECRET not in plan.diff and COMMAND in plan.diff
    compact = config_path("cursor", env)
    write(compact, '{"mcpServers":{"x":{"args":["--key","' + SECRET + '"]}}}')
    assert SECRET not in plan_setup("cursor", COMMAND).diff


def test_replaced_entry_secrets_are_masked_in_plan(env: dict[str, str]) -> None:
    path = config_path("cursor", env)
    write(path, '{"mcpServers": {"vaultd": {"command": "x", "env": {"VAULT_TOKEN": "' + SECRET + '"}}}}')
    plan = apply_setup("cursor", COMMAND)
    assert plan.before == {"command": "x", "env": {"VAULT_TOKEN": "***"}}
    assert SECRET not in plan.diff and SECRET not in json.dumps(plan.to_dict())
    undone = undo_setup("cursor")
    assert SECRET not in json.dumps(undone.to_dict())
    assert SECRET in path.read_text(), "undo restores the real value"


# -- records --------------------------------------------------------------------------------------


def test_record_home_follows_xdg(env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VAULTD_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    plan = apply_setup("cursor", COMMAND)
    assert plan.record is not None and plan.record.parent == tmp_path / "xdg" / "vaultd" / "setup"
    monkeypatch.delenv("XDG_DATA_HOME")
    plan = apply_setup("gemini", COMMAND)
    assert plan.record is not None
    assert plan.record.parent == Path(env["HOME"]) / ".local" / "share" / "vaultd" / "setup"


def test_corrupt_record_is_reported(env: dict[str, str]) -> None:
    plan = apply_setup("cursor", COMMAND)
    assert plan.record is not None
    plan.record.write_text("{not json")
    with pytest.raises(MalformedConfig) as info:
        undo_setup("cursor")
    assert str(plan.record) in info.value.message


# -- setup all -------------------------------------------------------------------------------------


def test_setup_all_skips_hosts_that_are_not_installed(env: dict[str, str]) -> None:
    home = Path(env["HOME"])
    (home / ".cursor").mkdir()
    (home / ".codex").mkdir()

    dry = {o.host: o for o in setup_all(Mode.PLAN, COMMAND)}
    assert dry["cursor"].status is Status.DONE and dry["codex"].status is Status.DONE
    for name in ("claude", "gemini", "windsurf"):
        assert dry[name].status is Status.SKIPPED and dry[name].note
    assert sorted(p.name for p in home.iterdir()) == [".codex", ".cursor"]

    applied = {o.host: o for o in setup_all(Mode.APPLY, COMMAND)}
    assert applied["cursor"].plan is not None and applied["cursor"].plan.applied
    assert sorted(p.name for p in home.iterdir()) == [".codex", ".cursor"]
    assert (home / ".codex" / "config.toml").exists()

    undone = {o.host: o for o in setup_all(Mode.UNDO, COMMAND)}
    assert undone["cursor"].status is Status.DONE and undone["claude"].status is Status.SKIPPED
    assert not (home / ".cursor" / "mcp.json").exists()
    assert records(env) == []


def test_setup_all_reports_one_failure_and_goes_on(env: dict[str, str]) -> None:
    home = Path(env["HOME"])
    write(home / ".cursor" / "mcp.json", "{ // jsonc\n}")
    (home / ".gemini").mkdir()
    outcomes = {o.host: o for o in setup_all(Mode.APPLY, COMMAND)}
    assert outcomes["cursor"].status is Status.FAILED
    assert outcomes["cursor"].error is not None and outcomes["cursor"].error.code is ErrorCode.VALIDATION
    assert outcomes["gemini"].status is Status.DONE
    assert json.dumps([o.to_dict() for o in outcomes.values()])


def test_naming_an_uninstalled_host_sets_it_up(env: dict[str, str]) -> None:
    plan = run("windsurf", Mode.APPLY, COMMAND)
    assert plan.applied and plan.path == Path(env["HOME"]) / ".codeium" / "windsurf" / "mcp_config.json"
    assert stat.S_IMODE((Path(env["HOME"]) / ".codeium").stat().st_mode) == 0o700


# -- generated JSON ----------------------------------------------------------------------------------

_keys = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=8)
_scalars = st.none() | st.booleans() | st.integers(-(10**12), 10**12) | st.text(max_size=12)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3),
    max_leaves=8,
)
_servers = st.dictionaries(_keys.filter(lambda k: k != "vaultd"), st.dictionaries(_keys, _values, max_size=2), max_size=3)


@st.composite
def _documents(draw: st.DrawFn) -> str:
    doc = draw(st.dictionaries(_keys.filter(lambda k: k != "mcpServers"), _values, max_size=5))
    servers = draw(st.none() | _servers | st.just({"vaultd": {"command": "old"}}))
    if servers is not None:
        items = list(doc.items())
        items.insert(draw(st.integers(0, len(items))), ("mcpServers", servers))
        doc = dict(items)
    indent = draw(st.none() | st.integers(0, 4) | st.sampled_from(["\t", " \t"]))
    item_sep = draw(st.sampled_from([",", ", ", " , "]))
    key_sep = draw(st.sampled_from([":", ": ", " : "]))
    text = json.dumps(
        doc,
        indent=indent,
        separators=(item_sep.rstrip() if indent is not None else item_sep, key_sep),
        ensure_ascii=draw(st.booleans()),
        sort_keys=draw(st.booleans()),
    )
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return text + draw(st.sampled_from(["", "\n", "\r\n", "  \n"]))


@pytest.fixture
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        yield Path(folder)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_documents(), host=st.sampled_from(JSON_HOSTS))
def test_generated_json_round_trip(text: str, host: str, scratch: Path) -> None:
    with tempfile.TemporaryDirectory(dir=scratch) as folder:
        env = {"HOME": f"{folder}/home", "VAULTD_HOME": f"{folder}/vaultd"}
        path = HOSTS[host].config_path(env)
        original = write(path, text)
        apply_setup(host, COMMAND, env=env)
        before = json.loads(text)
        after = json.loads(path.read_text(encoding="utf-8"))
        assert after == {**before, "mcpServers": {**before.get("mcpServers", {}), "vaultd": entry_for(host, env=env)}}
        assert apply_setup(host, COMMAND, env=env).action is Action.NONE
        undo_setup(host, env=env)
        assert path.read_bytes() == original


_bare = st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,6}", fullmatch=True)
_toml_scalars = st.booleans() | st.integers(-(10**9), 10**9) | st.text(st.characters(codec="utf-8"), max_size=10)
_toml_values = _toml_scalars | st.lists(_toml_scalars, max_size=3)
_toml_tables = st.dictionaries(_bare, _toml_values | st.dictionaries(_bare, _toml_values, max_size=2), max_size=3)


@st.composite
def _toml_documents(draw: st.DrawFn) -> str:
    import tomlkit

    doc: dict[str, Any] = draw(st.dictionaries(_bare.filter(lambda k: k != "mcp_servers"), _toml_values, max_size=3))
    servers = draw(st.none() | st.dictionaries(_bare, _toml_tables, max_size=3))
    if servers is not None and draw(st.booleans()):
        servers["vaultd"] = draw(st.dictionaries(_bare, _toml_values, max_size=3))  # sub-tables: refused
    if servers is not None:
        doc["mcp_servers"] = servers
    doc.update(draw(st.dictionaries(_bare.filter(lambda k: k not in doc), _toml_tables, max_size=2)))
    text = tomlkit.dumps(doc)
    if draw(st.booleans()):
        text = "# settings\n" + text + "# the end\n"
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return text if draw(st.booleans()) else text.rstrip("\r\n")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_toml_documents())
def test_generated_toml_round_trip(text: str, scratch: Path) -> None:
    with tempfile.TemporaryDirectory(dir=scratch) as folder:
        env = {"HOME": f"{folder}/home", "VAULTD_HOME": f"{folder}/vaultd"}
        path = HOSTS["codex"].config_path(env)
        original = write(path, text)
        before = tomllib.loads(text)
        apply_setup("codex", COMMAND, env=env)
        servers = {**before.get("mcp_servers", {}), "vaultd": entry_for("codex", env=env)}
        assert tomllib.loads(path.read_text(encoding="utf-8")) == {**before, "mcp_servers": servers}
        assert apply_setup("codex", COMMAND, env=env).action is Action.NONE
        undo_setup("codex", env=env)
        assert path.read_bytes() == original


# -- boundaries ------------------------------------------------------------------------------------


def test_setup_imports_nothing_from_the_daemon() -> None:
    for module in (REPO / "vaultctl" / "setup").glob("*.py"):
        tree = ast.parse(module.read_text(), filename=str(module))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] != "vaultd", f"{module.name} imports {name}"


def test_importing_setup_loads_no_toml_library() -> None:
    code = "import sys, vaultctl.setup; print(sorted(m for m in ('tomlkit', 'tomllib') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("args", "probed"),
    [
        (["mcp"], ["mcp"]),
        (["mcp", "--tools", "core"], ["mcp", "--tools", "core,daemon_status"]),
        (["mcp", "--tools=read"], ["mcp", "--tools=read,daemon_status"]),
    ],
)
def test_the_doctor_probe_asks_daemon_status_whatever_the_entry_offers(args: list[str], probed: list[str]) -> None:
    from vaultctl.setup.probe import with_status_tool

    assert with_status_tool(args) == probed


@pytest.mark.parametrize(
    ("host", "where"),
    [("kimi", ".kimi/mcp.json"), ("qwen", ".qwen/settings.json"), ("antigravity", ".gemini/antigravity/mcp_config.json")],
)
def test_the_newer_hosts_get_their_documented_file_and_undo_restores_it_byte_for_byte(env: dict[str, str], host: str, where: str) -> None:
    path = Path(env["HOME"]) / where
    path.parent.mkdir(parents=True)
    before = b'{\n  "mcpServers": {\n    "other": {"command": "x"}\n  },\n  "theme": "dark"\n}\n'
    path.write_bytes(before)
    assert config_path(host, env) == path
    shown = plan_setup(host, COMMAND, env=env)
    assert path.read_bytes() == before, "a dry run writes nothing"
    apply_setup(host, COMMAND, env=env, tools="all")
    data = json.loads(path.read_text())
    assert data["mcpServers"]["other"] == {"command": "x"} and data["theme"] == "dark"
    assert data["mcpServers"]["vaultd"]["args"] == ["mcp", "--tools", "all"]
    assert shown.after is not None and shown.after["args"] == ["mcp", "--tools", "core"]
    undo_setup(host, env=env)
    assert path.read_bytes() == before


def test_qwen_code_has_a_project_file_naming_the_command_on_path(env: dict[str, str], tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    apply_setup("qwen", COMMAND, project=project, env=env)
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["vaultd"]
    assert entry == {"command": "vaultctl", "args": ["mcp", "--tools", "core"]}
    undo_setup("qwen", project=project, env=env)
    assert not (project / ".mcp.json").exists()
