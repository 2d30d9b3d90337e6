"""vault set and vault policy: a person changes a vault's policies from the CLI, sees every loosened
setting first, confirms with the fingerprint, and the daemon applies it live (an agent session
already open feels it on its next call)."""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING, Any

import msgspec
import pytest

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.methods.common import Channel
from protocol.methods.gate import AgentPolicyChange, Gate
from protocol.methods.vaults import VAULT_ADD, VAULT_SET, PiiPolicy, VaultAddParams, VaultSetParams
from tests.support.agent import agent, ok
from tests.support.mcp_results import tool_error
from tests.support.typed import TypedClients, refused

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home

EXIT_REFUSED, EXIT_USAGE, EXIT_CONFLICT = 1, 2, 75


@pytest.fixture
def vault(daemon: Daemon, home: Home, cli: Any) -> Path:
    root = home.root / "vault"
    root.mkdir()
    for name in ("Alpha", "Beta", "Gamma"):
        (root / f"{name}.md").write_text(f"# {name}\n")
    assert cli("vault", "add", "v", str(root)).code == 0
    return root


def _config(home: Home) -> dict[str, Any]:
    entry: dict[str, Any] = json.loads((home.home / "config.json").read_text())["vaults"][0]
    return entry


def _confirm_line(text: str) -> list[str]:
    line = text.strip().splitlines()[-1].strip()
    assert line.startswith("vaultctl vault ") and "--confirm --fingerprint" in line, text
    return shlex.split(line)[1:]


def test_the_preview_marks_what_loosens_and_prints_the_command_that_confirms_it(vault: Path, home: Home, cli: Any) -> None:
    before = _config(home)
    preview = cli("vault", "policy", "v", "delete=apply", "create=propose", "--no-guard")
    assert preview.code == 0, preview.err
    rows = {line.split()[0]: line for line in preview.out.splitlines() if line.startswith("agents.")}
    assert set(rows) == {"agents.create", "agents.delete", "agents.guard"}
    assert rows["agents.delete"].endswith("LOOSENS") and rows["agents.guard"].endswith("LOOSENS")
    assert not rows["agents.create"].endswith("LOOSENS")
    assert "2 loosened (agents.delete, agents.guard)" in preview.out
    assert _config(home) == before, "a preview changes nothing"
    done = cli(*_confirm_line(preview.out))
    assert done.code == 0 and "in effect now" in done.out, done.err
    agents = _config(home)["agents"]
    assert agents["delete"] == "apply" and agents["create"] == "propose" and agents["guard"] is False
    shown = cli("vault", "policy", "v")
    assert "delete           apply    propose" in shown.out and "guard            off" in shown.out


async def test_a_change_applies_live_to_an_agent_session_already_open(vault: Path, home: Home, cli: Any) -> None:
    async with agent(home) as client:
        preview = ok(await client.call_tool("note_delete", {"target": "Gamma"}))
        held = ok(await client.call_tool("note_delete", {"target": "Gamma", "confirm": True, "fingerprint": preview["fingerprint"]}))
        assert held["outcome"] == "proposed" and (vault / "Gamma.md").exists()

        assert cli(*_confirm_line(cli("vault", "policy", "v", "delete=apply", "create=refuse").out)).code == 0

        preview = ok(await client.call_tool("note_delete", {"target": "Beta"}))
        done = ok(await client.call_tool("note_delete", {"target": "Beta", "confirm": True, "fingerprint": preview["fingerprint"]}))
        assert done["outcome"] == "applied" and not (vault / "Beta.md").exists()
        refused = tool_error(await client.call_tool("note_create", {"path": "Delta", "body": "x"}))
        assert refused["code"] == "POLICY" and refused["issues"][0]["code"] == "G02"
        assert not (vault / "Delta.md").exists()


def test_a_write_policy_change_binds_the_cli_at_once(vault: Path, cli: Any) -> None:
    assert cli(*_confirm_line(cli("vault", "set", "v", "--write", "none").out)).code == 0
    refused = cli("append", "Alpha", "--section", "Notes", "--markdown", "more")
    assert refused.code == EXIT_REFUSED and "P01" in refused.err
    back = cli("vault", "set", "v", "--write", "mcp")
    assert back.out.splitlines()[2].split() == ["write", "none", "mcp", "LOOSENS"]
    assert cli(*_confirm_line(back.out)).code == 0
    assert cli("append", "Alpha", "--section", "Notes", "--markdown", "more").code == 0


def test_a_stale_or_foreign_fingerprint_changes_nothing(vault: Path, home: Home, cli: Any) -> None:
    first = cli("vault", "set", "v", "--deny-path", "secret/**", "--json").json()
    other = cli("vault", "set", "v", "--private", "diary/**")
    assert cli(*_confirm_line(other.out)).code == 0
    stale = cli("vault", "set", "v", "--deny-path", "secret/**", "--confirm", "--fingerprint", first["fingerprint"])
    assert stale.code == EXIT_CONFLICT and "preview again" in stale.err
    borrowed = cli(
        "vault",
        "set",
        "v",
        "--deny-path",
        "other/**",
        "--confirm",
        "--fingerprint",
        cli("vault", "set", "v", "--deny-path", "secret/**", "--json").json()["fingerprint"],
    )
    assert borrowed.code == EXIT_CONFLICT, "a fingerprint confirms only the change it previewed"
    assert _config(home)["deny_paths"] == []
    assert _config(home)["private_paths"] == ["diary/**"]


def test_a_pii_policy_that_cannot_screen_is_refused_on_add_and_on_set(
    vault: Path, home: Home, cli: Any, typed_clients: TypedClients, tmp_path: Path
) -> None:
    bad = '{"patterns": [{"name": "runaway", "regex": "(a+)+$"}]}'
    by_cli = cli("vault", "set", "v", "--pii", bad)
    assert by_cli.code == EXIT_REFUSED
    assert "P03" in by_cli.err
    assert _config(home)["pii"] is None
    other = tmp_path / "other"
    other.mkdir()
    person = typed_clients.open(home, Channel.CLI)
    with refused(ErrorCode.VALIDATION, IssueCode.P03):
        person.call(VAULT_ADD, VaultAddParams(id="w", path=str(other), pii=msgspec.json.decode(bad, type=PiiPolicy)))
    assert [v["entry"]["id"] for v in cli("vault", "list", "--json").json()["vaults"]] == ["v"]


def test_bad_input_is_refused_with_a_reason(vault: Path, cli: Any) -> None:
    assert cli("vault", "policy", "v", "move=always").code == EXIT_USAGE
    assert cli("vault", "policy", "v", "teleport=apply").code == EXIT_USAGE
    assert cli("vault", "set", "v", "--pii", "{nope").code == EXIT_USAGE
    unknown = cli("vault", "policy", "nosuch", "move=apply")
    assert unknown.code == EXIT_REFUSED and "no vault 'nosuch'" in unknown.err
    too_many = cli("vault", "set", "v", *[a for n in range(65) for a in ("--deny-path", f"d{n}/**")])
    assert too_many.code == EXIT_USAGE and "64" in too_many.err
    at_bound = cli("vault", "set", "v", *[a for n in range(64) for a in ("--deny-path", f"d{n}/**")], "--json")
    assert at_bound.code == 0 and len(at_bound.json()["entry"]["deny_paths"]) == 64
    nothing = cli("vault", "set", "v")
    assert nothing.code == 0 and "nothing to change" in nothing.out


def test_agents_cannot_change_a_policy_whatever_client_they_speak_through(vault: Path, home: Home, typed_clients: TypedClients) -> None:
    socket_agent = typed_clients.open(home, Channel.MCP)
    with refused(ErrorCode.POLICY):
        socket_agent.call(VAULT_SET, VaultSetParams(id="v", agents=AgentPolicyChange(delete=Gate.APPLY)))
    assert _config(home)["agents"] is None
