"""A vault's project registry (the log's project ids), through the real vaultctl and a real daemon:
declared on the vault, enforced on log.append and on every write's log event, for people and
agents alike, and absent by default."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.methods import writes
from protocol.methods.common import Channel
from protocol.methods.writes import CreateParams, LogEvent, LogType
from tests.support.harness import Daemon, Home, register, snapshot
from tests.support.typed import TypedClients, refused

if TYPE_CHECKING:
    from pathlib import Path


def ok(cli: Any, *args: str) -> Any:
    result = cli(*args, "--json")
    assert result.code == 0, (args, result.out, result.err)
    return result.json()


def error_codes(result: Any) -> list[str]:
    return [line.split()[1] for line in result.err.splitlines() if line.startswith("  error ")]


@pytest.fixture
def root(daemon: Daemon, home: Home) -> Path:
    root = home.root / "vault"
    root.mkdir()
    (root / "Kept.md").write_text("# Kept\n")
    register(home, root)
    return root


def declare(cli: Any, *args: str) -> dict[str, Any]:
    preview = ok(cli, "vault", "set", "v", *args)
    ok(cli, "vault", "set", "v", *args, "--confirm", "--fingerprint", preview["fingerprint"])
    return preview  # type: ignore[no-any-return]


def event(project: str) -> str:
    return json.dumps({"type": "ROUTE", "project": project, "source": "test", "note": "filed"})


def test_without_a_registry_any_project_goes(root: Path, cli: Any) -> None:
    assert ok(cli, "log", "append", "LEARN", "test", "noted", "--project", "anything")["appended"]
    assert ok(cli, "new", "A.md", "--log", event("whatever"))


def test_a_declared_registry_refuses_other_projects_with_v18_naming_the_declared(
    root: Path, home: Home, cli: Any, typed_clients: TypedClients
) -> None:
    preview = declare(cli, "--project", "vaultd", "--project", "house-move")
    assert [(c["setting"], c["loosens"]) for c in preview["changes"]] == [("projects", False)]
    assert ok(cli, "vault", "list")["vaults"][0]["entry"]["projects"] == ["vaultd", "house-move"]
    log_before = (root / "log.md").read_bytes() if (root / "log.md").exists() else b""

    bad = cli("log", "append", "LEARN", "test", "noted", "--project", "vaultdd")
    assert bad.code == 1, (bad.out, bad.err)
    assert error_codes(bad) == ["V18"]
    assert "house-move, vaultd" in bad.err and "vaultdd" not in bad.err
    before = snapshot(root)
    bad = cli("new", "B.md", "--log", event("other"))  # a write's own event: the whole write is refused
    assert error_codes(bad) == ["V18"], (bad.out, bad.err)
    agent = typed_clients.open(home, Channel.MCP, client_name="claude-code", session="s1")
    own = LogEvent(type=LogType.ROUTE, project="invented", source="agent", note="filed")
    with refused(ErrorCode.VALIDATION, IssueCode.V18):
        agent.call(writes.CREATE, CreateParams(path="C.md", body="# C\n", log=own))
    assert snapshot(root) == before
    assert ((root / "log.md").read_bytes() if (root / "log.md").exists() else b"") == log_before

    assert "  LEARN  vaultd  " in ok(cli, "log", "append", "LEARN", "test", "noted", "--project", "vaultd")["line"]
    assert ok(cli, "log", "append", "LEARN", "test", "noted")["appended"]  # "-": no project, always fine
    assert ok(cli, "new", "B.md", "--log", event("house-move"))
    assert (root / "B.md").exists()

    # Dropping the registry lets any project through again: shown as loosening.
    dropped = declare(cli, "--no-projects")
    assert [(c["setting"], c["loosens"]) for c in dropped["changes"]] == [("projects", True)]
    assert ok(cli, "log", "append", "LEARN", "test", "noted", "--project", "vaultdd")["appended"]


def test_a_registry_declared_when_the_vault_is_added(root: Path, home: Home, cli: Any) -> None:
    other = home.root / "other"
    other.mkdir()
    ok(cli, "vault", "add", "w", str(other), "--project", "alpha")
    assert ok(cli, "vault", "list")["vaults"][1]["entry"]["projects"] == ["alpha"]
    bad = cli("log", "append", "LEARN", "test", "noted", "--project", "beta", "--vault", "w")
    assert error_codes(bad) == ["V18"] and "alpha" in bad.err, (bad.out, bad.err)
    assert ok(cli, "log", "append", "LEARN", "test", "noted", "--project", "alpha", "--vault", "w")["appended"]
    assert ok(cli, "log", "append", "LEARN", "test", "noted", "--project", "beta", "--vault", "v")["appended"]  # v keeps none
