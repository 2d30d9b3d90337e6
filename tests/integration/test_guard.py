"""The agent-host guard end to end: the real ``vaultctl guard`` fed the payloads Claude Code, Codex
and Gemini CLI send, against a real daemon (and, stopped, against the registry file)."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.harness import register

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home

EXIT_BLOCK = 2


@pytest.fixture
def vault(daemon: Daemon, home: Home) -> Path:
    root = home.root / "vault"
    root.mkdir()
    (root / "Alpha.md").write_text("# Alpha\n")
    register(home, root)
    return root


def _claude(tool: str, tool_input: dict[str, Any], cwd: Path | str = "/") -> str:
    return json.dumps(
        {
            "session_id": "s1",
            "transcript_path": "/t.jsonl",
            "cwd": str(cwd),
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
        }
    )


def _set_policy(cli: Any, *args: str) -> None:
    preview = cli("vault", "policy", "v", *args, "--json")
    assert preview.code == 0, preview.err
    done = cli("vault", "policy", "v", *args, "--confirm", "--fingerprint", preview.json()["fingerprint"], "--json")
    assert done.code == 0 and done.json()["outcome"] == "applied", done.err


def test_an_edit_in_a_vault_is_refused_with_the_tool_to_use_and_one_outside_goes_through(vault: Path, cli: Any, tmp_path: Path) -> None:
    before = (vault / "Alpha.md").read_bytes()
    refused = cli("guard", input=_claude("Edit", {"file_path": str(vault / "Alpha.md"), "old_string": "Alpha", "new_string": "Beta"}))
    assert refused.code == EXIT_BLOCK and refused.out == ""
    assert "vault 'v'" in refused.err and "note_patch" in refused.err and "Edit" in refused.err
    allowed = cli("guard", input=_claude("Write", {"file_path": str(tmp_path / "elsewhere.md"), "content": "x"}))
    assert (allowed.code, allowed.out, allowed.err) == (0, "", "")
    new_note = cli("guard", input=_claude("Write", {"file_path": "New.md", "content": "x"}, cwd=vault))
    assert new_note.code == EXIT_BLOCK, "a relative path is resolved against the session's folder"
    assert (vault / "Alpha.md").read_bytes() == before and not (vault / "New.md").exists()


def test_each_hosts_edit_and_shell_tools_are_read(vault: Path, cli: Any) -> None:
    patch = f"*** Begin Patch\n*** Update File: {vault}/Alpha.md\n@@\n-# Alpha\n+# A\n*** End Patch\n"
    payloads = [
        _claude("apply_patch", {"command": patch}),  # Codex
        _claude("Bash", {"command": "sed -i 's/Alpha/A/' Alpha.md"}, cwd=vault),
        _claude("MultiEdit", {"file_path": str(vault / "Alpha.md"), "edits": []}),
        json.dumps(
            {"hook_event_name": "BeforeTool", "cwd": "/", "tool_name": "write_file", "tool_input": {"file_path": str(vault / "x.md")}}
        ),
        json.dumps(
            {
                "hook_event_name": "BeforeTool",
                "cwd": "/",
                "tool_name": "run_shell_command",
                "tool_input": {"command": f"rm {vault}/Alpha.md"},
            }
        ),
    ]
    for payload in payloads:
        result = cli("guard", input=payload)
        assert result.code == EXIT_BLOCK, (payload, result.err)
    harmless = [
        _claude("Bash", {"command": "ls -la && grep -r Alpha ."}, cwd=vault),
        _claude("Read", {"file_path": str(vault / "Alpha.md")}),
    ]
    for payload in harmless:
        assert cli("guard", input=payload).code == 0


def test_vaultctl_acting_as_the_user_is_refused_to_the_agents_shell(vault: Path, cli: Any) -> None:
    refused = cli("guard", input=_claude("Bash", {"command": "vaultctl proposals apply p20260101000000-00000000"}))
    assert refused.code == EXIT_BLOCK and "acts as your user" in refused.err
    assert cli("guard", input=_claude("Bash", {"command": "vaultctl search alpha --json"})).code == 0


def test_the_runtime_folder_is_refused_even_when_the_user_turns_the_guard_off(vault: Path, cli: Any) -> None:
    _set_policy(cli, "--no-guard")
    assert cli("guard", input=_claude("Edit", {"file_path": str(vault / "Alpha.md")})).code == 0
    assert cli("guard", input=_claude("Bash", {"command": "vaultctl proposals apply p1"})).code == 0, "no vault is guarded"
    journal = cli("guard", input=_claude("Write", {"file_path": str(vault / ".vaultd" / "journal" / "x.json")}))
    assert journal.code == EXIT_BLOCK and "state folder" in journal.err


def test_a_link_into_a_vault_is_judged_as_the_vault(vault: Path, cli: Any, tmp_path: Path) -> None:
    link = tmp_path / "shortcut"
    link.symlink_to(vault)
    assert cli("guard", input=_claude("Write", {"file_path": str(link / "Alpha.md")})).code == EXIT_BLOCK


def test_without_a_daemon_the_registry_file_decides(vault: Path, cli: Any, daemon: Daemon) -> None:
    daemon.stop()
    payload = _claude("Edit", {"file_path": str(vault / "Alpha.md")})
    refused = cli("guard", input=payload, env={"VAULTD_NO_AUTOSTART": "1"})
    assert refused.code == EXIT_BLOCK and "note_patch" in refused.err
    assert cli("guard", input=_claude("Edit", {"file_path": "/elsewhere.md"}), env={"VAULTD_NO_AUTOSTART": "1"}).code == 0


def test_a_payload_that_is_not_json_is_refused(vault: Path, cli: Any) -> None:
    result = cli("guard", input="{not json")
    assert result.code == EXIT_BLOCK and "not JSON" in result.err


def test_session_start_says_nothing_until_the_user_turns_it_on(vault: Path, cli: Any) -> None:
    start = json.dumps({"session_id": "s", "transcript_path": "/t", "cwd": "/", "hook_event_name": "SessionStart", "source": "startup"})
    silent = cli("guard", input=start)
    assert (silent.code, silent.out, silent.err) == (0, "", "")
    _set_policy(cli, "--session-context")
    told = cli("guard", input=start)
    assert told.code == 0
    context = json.loads(told.out)["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart"
    text = context["additionalContext"]
    assert "vault 'v'" in text and "1 notes" in text and "note_patch" in text and "move" in text
    assert len(text) <= 2000


def test_the_hook_reaches_the_daemon_named_in_its_environment_only(vault: Path, cli: Any, home: Home) -> None:
    """A hook runs with the host's environment; the home it names is the one asked."""
    other = {"VAULTD_HOME": str(home.root / "other-home"), "VAULTD_SOCKET": str(home.root / "o.sock"), "VAULTD_NO_AUTOSTART": "1"}
    result = cli("guard", input=_claude("Edit", {"file_path": str(vault / "Alpha.md")}), env=other)
    assert (result.code, result.err) == (0, ""), "no vault is registered in that home"
    assert not os.path.exists(home.root / "o.sock")
    (home.root / "other-home").mkdir()
    (home.root / "other-home" / "config.json").write_text("{broken")
    broken = cli("guard", input=_claude("Edit", {"file_path": str(vault / "Alpha.md")}), env=other)
    assert broken.code == 2 and "could not be read" in broken.err, "said, not silent, and refused: the guard fails closed"
