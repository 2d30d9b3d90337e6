"""A vaultctl started inside an agent host's environment speaks on the agent's channel: what it
does is the agent's, attributed and gated as the agent's, whatever command it typed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.support.harness import registered_vault
from vaultctl.client import AGENT_MARKERS, agent_host

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home


@pytest.fixture
def vault(daemon: Daemon, home: Home) -> Path:
    return registered_vault(home, {})


@pytest.mark.parametrize(("key", "value"), [(k, "1") for k, _ in AGENT_MARKERS])
def test_each_hosts_marker_makes_a_vaultctl_the_agents(key: str, value: str, vault: Path, cli: Any) -> None:
    made = cli("new", "inbox/From Shell", "--json", env={key: value})
    ops = cli("ops", "--json").json()["ops"]
    if made.code == 0:
        op = next(o for o in ops if o["op_id"] == made.json()["op_id"])
        assert op["channel"] == "mcp", "attributed to the agent, not the person"
    else:
        assert all(o["channel"] != "cli" or o["op"] != "note.create" for o in ops), made.err
    person = cli("new", "inbox/From Person", "--json")
    assert person.code == 0
    mine = next(o for o in cli("ops", "--json").json()["ops"] if o["op_id"] == person.json()["op_id"])
    assert mine["channel"] == "cli"


def test_markers_read() -> None:
    assert agent_host({"CLAUDECODE": "1"}) == "Claude Code"
    assert agent_host({"GEMINI_CLI": "1"}) == "Gemini CLI"
    assert agent_host({"CODEX_SANDBOX": "seatbelt"}) == "Codex"
    assert agent_host({"CLAUDECODE": "0", "PATH": "/bin"}) is None
    assert agent_host({}) is None
