"""The guard hook as setup installs it answers the host: the command is taken from the settings
file exactly as written and run the way Claude Code runs a hook (through a shell, the payload on
stdin, the host's own environment), against a real daemon with a registered vault."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.harness import REPO, Daemon, Home, vaultctl


def _hook(command: str, payload: dict[str, Any], user: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    # A host's environment: nothing of this shell's vaultd variables (the command carries them).
    env = {"HOME": str(user), "PATH": "/usr/bin:/bin", "VAULTD_NO_AUTOSTART": "1"}
    return subprocess.run(
        ["/bin/sh", "-c", command], input=json.dumps(payload), env=env, capture_output=True, text=True, cwd=cwd, timeout=60
    )


def _payload(event: str, cwd: Path, **fields: Any) -> dict[str, Any]:
    """The fields Claude Code documents for every hook input, and the event's own."""
    return {
        "session_id": "8f3c2a1e-guard-test",
        "transcript_path": str(cwd / "transcript.jsonl"),
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": event,
        **fields,
    }


def test_the_installed_claude_hook_refuses_an_edit_in_a_vault_and_allows_one_outside() -> None:
    home = Home.create()
    try:
        daemon = Daemon(home)
        try:
            vault = home.root / "v"
            vault.mkdir()
            note = vault / "Note.md"
            note.write_text("# Note\n\nbody\n")
            assert vaultctl(home, "vault", "add", "mine", str(vault)).code == 0
            user = home.root / "user"
            setup_env = {**home.env, "HOME": str(user), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
            applied = subprocess.run(
                [sys.executable, "-m", "vaultctl.main", "setup", "claude", "--apply", "--json"],
                env=setup_env,
                capture_output=True,
                text=True,
                cwd=REPO,
                timeout=60,
            )
            assert applied.returncode == 0, applied.stderr
            settings = json.loads((user / ".claude" / "settings.json").read_text())
            [group] = settings["hooks"]["PreToolUse"]
            assert "Edit" in group["matcher"].split("|")
            [hook] = group["hooks"]
            command = hook["command"]

            inside = _hook(
                command,
                _payload(
                    "PreToolUse",
                    vault,
                    tool_name="Edit",
                    tool_input={"file_path": str(note), "old_string": "body", "new_string": "changed", "replace_all": False},
                    tool_use_id="toolu_01guard",
                ),
                user,
                vault,
            )
            assert inside.returncode == 2, (inside.returncode, inside.stdout, inside.stderr)
            assert inside.stderr.strip() and "Usage:" not in inside.stderr, inside.stderr
            assert inside.stdout == ""
            assert note.read_text() == "# Note\n\nbody\n"

            elsewhere = home.root / "scratch"
            elsewhere.mkdir()
            outside = _hook(
                command,
                _payload(
                    "PreToolUse",
                    elsewhere,
                    tool_name="Write",
                    tool_input={"file_path": str(elsewhere / "todo.txt"), "content": "x\n"},
                    tool_use_id="toolu_02guard",
                ),
                user,
                elsewhere,
            )
            assert (outside.returncode, outside.stdout, outside.stderr) == (0, "", "")

            [start] = settings["hooks"]["SessionStart"]
            session = _hook(start["hooks"][0]["command"], _payload("SessionStart", vault, source="startup"), user, vault)
            assert session.returncode == 0, session.stderr
            if session.stdout.strip():
                assert json.loads(session.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        finally:
            daemon.stop()
    finally:
        home.cleanup()
