"""An agent's capture, claims and retrieval through the official MCP SDK client and ``vaultctl mcp``:
what it may capture (its own content, files inside the vault) and what it may not (any file
outside the vault, the vault's own machinery, private notes), and a claim's verdict held for a person."""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.agent import agent, ok
from tests.support.harness import Daemon, Home, registered_vault, snapshot
from tests.support.mcp_results import tool_error

if TYPE_CHECKING:
    from pathlib import Path

NOTES = {
    "Page.md": "# Page\n\n## Findings\n\nThe zanzibar journal recovers every write after a crash.\n",
    "Diary/secret.md": "# Secret\n\nPrivate text.\n",
    "inbox/paper.txt": "A paper in the inbox.\n",
}


@pytest.fixture
def vault(daemon: Daemon, home: Home) -> Path:
    return registered_vault(home, NOTES, private_paths=["Diary/**"])


def _files(root: Path) -> dict[str, bytes]:
    return {k: v for k, v in snapshot(root).items() if k != "log.md"}


async def test_an_agent_cannot_have_the_daemon_read_files_outside_the_vault(vault: Path, home: Home) -> None:
    ssh = home.root / "user" / ".ssh"
    ssh.mkdir(parents=True)
    key = ssh / "id_rsa"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n")
    (vault / "link-to-key").symlink_to(key)
    (vault / "inbox" / "folder-link").symlink_to(ssh)
    before = _files(vault)
    async with agent(home) as client:
        err = tool_error(await client.call_tool("source_capture", {"items": [{"path": str(key)}]}))
        assert err["code"] == "POLICY" and err["issues"][0]["code"] == "P20", err
        assert "BEGIN" not in json.dumps(err)
        for rel in ("link-to-key", "inbox/folder-link/id_rsa", "../user/.ssh/id_rsa", ".vaultd/lock", ".git/config", ".obsidian/app.json"):
            err = tool_error(await client.call_tool("source_capture", {"items": [{"vault_path": rel}]}))
            assert err["code"] in ("POLICY", "INVALID_PARAMS", "NOT_FOUND"), (rel, err)
        private = tool_error(await client.call_tool("source_capture", {"items": [{"vault_path": "Diary/secret.md"}]}))
        missing = tool_error(await client.call_tool("source_capture", {"items": [{"vault_path": "Diary/none.md"}]}))
        assert private["code"] == missing["code"] == "NOT_FOUND", "a private file is as absent as a missing one"
        assert private["message"].replace("secret", "none") == missing["message"]
        # Content the agent sends is screened like a note: a private key is never written.
        pasted = base64.b64encode(key.read_bytes()).decode()
        err = tool_error(await client.call_tool("source_capture", {"items": [{"data": pasted, "name": "key.txt"}]}))
        assert err["code"] == "VALIDATION" and err["issues"][0]["code"] == "V06", err
    assert _files(vault) == before, "nothing was written"


async def test_an_agent_captures_its_content_and_inbox_files(vault: Path, home: Home, cli: Any) -> None:
    inbox_before = (vault / "inbox/paper.txt").read_bytes()
    async with agent(home) as client:
        sent = ok(
            await client.call_tool(
                "source_capture", {"items": [{"text": "Notes the agent fetched itself.\n", "origin": "https://example.com/x"}]}
            )
        )
        assert sent["outcome"] == "applied"
        inbox = ok(await client.call_tool("source_capture", {"items": [{"vault_path": "inbox/paper.txt"}], "note": "Page"}))
        assert inbox["outcome"] == "applied" and inbox["detail"]["sources"][0]["note"] == "sources/paper.md"
        listed = ok(await client.call_tool("source_list", {}))
        assert {s["origin"] for s in listed["sources"]} == {"https://example.com/x", "inbox/paper.txt"}
    assert (vault / "inbox/paper.txt").read_bytes() == inbox_before, "capture never changes its input"


async def test_an_agents_claim_verdict_is_held_for_a_person(vault: Path, home: Home, cli: Any) -> None:
    async with agent(home) as client:
        one = ok(await client.call_tool("source_capture", {"items": [{"text": "first\n", "origin": "https://a.example/1"}]}))
        src = one["detail"]["sources"][0]["note"]
        added = ok(await client.call_tool("claim_add", {"page": "Page", "claim": "Journals recover writes", "support": [src]}))
        assert added["outcome"] == "applied", "a proposed claim is the agent's to record"
        claim = added["detail"]["claim"]
        accept = ok(await client.call_tool("claim_update", {"target": claim, "state": "accepted", "reason": "well sourced"}))
        assert accept["outcome"] == "proposed", "accepting is a verdict: a person's by default"
        sneaky = ok(await client.call_tool("note_set_frontmatter", {"target": claim, "set": {"state": "accepted"}}))
        assert sneaky["outcome"] == "proposed", "the same verdict through a frontmatter edit is held too"
        invented = tool_error(await client.call_tool("claim_add", {"page": "Page", "claim": "Made up", "support": ["Nonexistent Paper"]}))
        assert invented["code"] == "VALIDATION" and invented["issues"][0]["code"] == "V23"
    assert "state: proposed" in (vault / claim).read_text()
    applied = cli("proposals", "apply", accept["proposal"], "--json")
    assert applied.code == 0, applied.err
    assert "state: accepted" in (vault / claim).read_text()


async def test_an_org_vault_holds_an_agents_capture(daemon: Daemon, home: Home, cli: Any) -> None:
    root = home.root / "org"
    (root / "x").mkdir(parents=True)
    (root / "x" / "Note.md").write_text("# Note\n")
    assert cli("vault", "add", "team", str(root), "--kind", "org").code == 0
    async with agent(home) as client:
        held = ok(await client.call_tool("source_capture", {"vault": "team", "items": [{"text": "shared\n"}]}))
        assert held["outcome"] == "proposed"
    assert not (root / "sources").exists()
    applied = cli("proposals", "apply", held["proposal"], "--vault", "team", "--json")
    assert applied.code == 0, applied.err
    assert (root / "sources").is_dir()


async def test_an_agent_retrieves_citable_passages_but_nothing_private(vault: Path, home: Home) -> None:
    async with agent(home) as client:
        found = ok(await client.call_tool("note_retrieve", {"query": "how does the zanzibar journal recover", "limit": 5}))
        top = found["passages"][0]
        assert top["citation"] == "Page.md#Findings" and (top["line_start"], top["line_end"]) == (3, 5)
        assert "recovers every write" in top["text"]
        hidden = ok(await client.call_tool("note_retrieve", {"query": "private text"}))
        assert all(not p["path"].startswith("Diary/") for p in hidden["passages"])
