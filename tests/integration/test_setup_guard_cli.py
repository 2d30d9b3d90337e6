"""vaultctl setup installs the guard's hooks through the real entry point: dry run, apply, apply
again, undo, in a temp HOME, for the hosts whose hooks can refuse an edit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.harness import REPO

HOOK_FILES = {
    "claude": ".claude/settings.json",
    "codex": ".codex/hooks.json",
    "gemini": ".gemini/settings.json",
}
ENTRY_FILES = {"claude": ".claude.json", "codex": ".codex/config.toml", "gemini": ".gemini/settings.json"}
EVENTS = {
    "claude": ("PreToolUse", "SessionStart", "UserPromptSubmit", "Stop"),
    "codex": ("PreToolUse", "SessionStart"),
    "gemini": ("BeforeTool", "SessionStart"),
}
MINE = {"matcher": "Bash", "hooks": [{"type": "command", "command": "/home/me/bin/audit.sh --strict"}]}


def _existing(host: str, variant: str) -> str | None:
    first = EVENTS[host][0]
    return {
        "absent": None,
        "empty-object": "{}",
        "no-hooks": '{\n    "model": "m",\n    "theme": "dark"\n}\n',
        "user-hooks": json.dumps({"a": [1, 2], "hooks": {first: [MINE], "Stop": [MINE]}}, indent=2) + "\n",
        "crlf-user-hooks": '{\r\n  "hooks": {\r\n    "' + first + '": [\r\n      ' + json.dumps(MINE) + "\r\n    ],\r\n"
        '    "SessionStart": []\r\n  }\r\n}\r\n',
    }[variant]


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


def _load(path: Path) -> Any:
    return json.loads(path.read_bytes().decode("utf-8"))


@pytest.mark.parametrize("variant", ["absent", "empty-object", "no-hooks", "user-hooks", "crlf-user-hooks"])
@pytest.mark.parametrize("host", sorted(HOOK_FILES))
def test_apply_appends_the_guard_and_undo_is_byte_identical(tmp_path: Path, host: str, variant: str) -> None:
    target = tmp_path / HOOK_FILES[host]
    target.parent.mkdir(parents=True, exist_ok=True)
    text = _existing(host, variant)
    if text is not None:
        target.write_bytes(text.encode())
    before = target.read_bytes() if text is not None else None

    if variant == "user-hooks":
        dry = _run(tmp_path, host)
        assert dry.returncode == 0, dry.stderr
        assert f"{host} guard hooks: {target}" in dry.stdout and "would add" in dry.stdout
        assert target.read_bytes() == before

    applied = _run(tmp_path, host, "--apply", "--json")
    assert applied.returncode == 0, applied.stderr
    guard = json.loads(applied.stdout)["guard"]
    assert guard["applied"] is True and guard["path"] == str(target)
    hooks = _load(target)["hooks"]
    earlier = {} if text is None else json.loads(text).get("hooks", {})
    vaultctl = str((Path(sys.executable).parent / "vaultctl").resolve())
    for event in EVENTS[host]:
        *theirs, ours = hooks[event]
        assert theirs == earlier.get(event, []), "the user's groups stay, in order, before the guard's"
        assert ours["hooks"][0]["command"].endswith(f"{vaultctl} guard")
    if variant == "crlf-user-hooks":
        assert b"\n" not in target.read_bytes().replace(b"\r\n", b"")

    mtime = target.stat().st_mtime_ns
    again = _run(tmp_path, host, "--apply", "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["guard"]["action"] == "none"
    assert target.stat().st_mtime_ns == mtime

    undone = _run(tmp_path, host, "--undo")
    assert undone.returncode == 0, undone.stderr
    assert (target.read_bytes() if target.exists() else None) == before
    assert not (tmp_path / "vd" / "setup").exists() or not any((tmp_path / "vd" / "setup").iterdir())


@pytest.mark.parametrize("host", sorted(HOOK_FILES))
def test_a_file_setup_cannot_edit_is_refused_and_no_guard_sets_up_the_entry_alone(tmp_path: Path, host: str) -> None:
    target = tmp_path / HOOK_FILES[host]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"")
    refused = _run(tmp_path, host, "--apply")
    assert refused.returncode == 1, refused.stdout
    manual = refused.stderr.split("add this by hand:\n", 1)[1].rsplit("\nvaultctl", 1)[0]
    by_hand = json.loads(manual[: manual.rindex("}") + 1])
    assert [g["hooks"][0]["command"].split()[-1] for e in EVENTS[host] for g in by_hand["hooks"][e]] == ["guard"] * len(EVENTS[host])
    assert target.read_bytes() == b""
    entry = tmp_path / ENTRY_FILES[host]
    if host == "gemini":
        # One file holds both: its text to add by hand has both, and --no-guard would not help.
        assert by_hand["mcpServers"]["vaultd"]["args"] == ["mcp", "--tools", "core"]
        return
    assert "--no-guard" in refused.stderr
    assert not entry.exists(), "nothing is written when either change is refused"
    # The host's sandbox settings live in the guard's file for Claude Code: leave them out too.
    alone = _run(tmp_path, host, "--apply", "--no-guard", "--no-sandbox", "--json")
    assert alone.returncode == 0, alone.stderr
    assert json.loads(alone.stdout)["guard"] is None
    assert entry.exists() and target.read_bytes() == b""


def test_undo_with_no_guard_is_a_usage_error(tmp_path: Path) -> None:
    out = _run(tmp_path, "claude", "--undo", "--no-guard")
    assert out.returncode == 2 and "--no-guard" in out.stderr


def test_a_changed_guard_group_stops_undo(tmp_path: Path) -> None:
    assert _run(tmp_path, "codex", "--apply").returncode == 0
    target = tmp_path / HOOK_FILES["codex"]
    edited = target.read_text().replace('"Bash|apply_patch"', '"Bash"')
    target.write_text(edited)
    out = _run(tmp_path, "codex", "--undo")
    assert out.returncode == 75, out.stderr  # CONFLICT
    assert target.read_text() == edited and (tmp_path / ENTRY_FILES["codex"]).exists()


def test_doctor_has_a_guard_row_per_host(tmp_path: Path) -> None:
    from tests.support.harness import Daemon, Home

    home = Home.create()
    try:
        daemon = Daemon(home)
        try:
            user = home.root / "user"
            env = {**home.env, "HOME": str(user), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}

            def vaultctl(*args: str) -> subprocess.CompletedProcess[str]:
                return subprocess.run(
                    [sys.executable, "-m", "vaultctl.main", *args], env=env, capture_output=True, text=True, cwd=REPO, timeout=120
                )

            assert vaultctl("setup", "claude", "--apply").returncode == 0
            assert vaultctl("setup", "codex", "--apply", "--no-guard").returncode == 0
            doctor = vaultctl("doctor", "--json")
            rows = {f["check"]: f for f in json.loads(doctor.stdout)["findings"] if f["check"].startswith("guard:")}
            assert rows["guard:claude"]["level"] == "ok" and "PreToolUse, SessionStart" in rows["guard:claude"]["finding"]
            assert rows["guard:codex"]["level"] == "warn" and "no guard hook" in rows["guard:codex"]["finding"]
            assert "guard:gemini" not in rows, "a host setup never touched gets no row"
        finally:
            daemon.stop()
    finally:
        home.cleanup()
