"""vaultd's own state is not a note, and a connection is who it said it was: the operation log and
vaultd's folders refuse every write method, for agents (the official MCP SDK client through
``vaultctl mcp``) and for people (``vaultctl``); a claim's verdict is gated on its header as
parsed, whatever YAML spelling the agent chose; a second ``hello`` changes no channel."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.agent import agent, ok
from tests.support.harness import Daemon, Home, RawClient, registered_vault, snapshot
from tests.support.mcp_results import tool_error

if TYPE_CHECKING:
    from pathlib import Path

NOTES = {
    "Alpha.md": "# Alpha\n\nFirst note.\n",
    "Page.md": "# Page\n\n## Findings\n\nJournals recover writes.\n",
}


@pytest.fixture
def vault(daemon: Daemon, home: Home) -> Path:
    return registered_vault(home, NOTES)


def _refused_p05(err: dict[str, Any]) -> None:
    assert err["code"] == "POLICY", err
    assert [i["code"] for i in err["issues"]][:1] == ["P05"], err


async def _two_step(client: Any, tool: str, args: dict[str, Any]) -> Any:
    """Call a tool, and confirm its preview when it gives one; the last result, raw."""
    first = await client.call_tool(tool, args)
    if first.is_error or first.structured_content.get("outcome") != "preview":
        return first
    return await client.call_tool(tool, {**args, "confirm": True, "fingerprint": first.structured_content["fingerprint"]})


async def test_no_write_method_lets_an_agent_change_the_operation_log(vault: Path, home: Home, cli: Any) -> None:
    async with agent(home) as client:
        made = ok(await client.call_tool("note_append", {"target": "Alpha", "section": "Log", "markdown": "Agent line.\n"}))
        assert made["log"]["line"].endswith("(vaultd:agent)")
        log = vault / "log.md"
        before = log.read_bytes()
        mark = " (vaultd:agent)"
        attempts: list[tuple[str, dict[str, Any]]] = [
            # strip its attribution from its own line, or break the header so nothing is logged again
            ("note_patch", {"target": "log.md", "old": mark, "new": ""}),
            ("note_patch", {"target": "log", "old": "# vaultd operation log", "new": "# my notes"}),
            ("note_append", {"target": "log.md", "section": "More", "markdown": "2020-01-01 00:00  EXTRACT  -  x  —  y\n"}),
            ("note_set_frontmatter", {"target": "log.md", "set": {"title": "mine"}}),
            ("note_link", {"source": "log.md", "target": "Alpha"}),
            ("note_move", {"target": "log.md", "to": "elsewhere"}),
            ("note_delete", {"target": "log.md"}),
            ("note_merge", {"keep": "Alpha", "absorb": "log.md"}),
            ("note_merge", {"keep": "log.md", "absorb": "Alpha"}),
            ("note_supersede", {"old": "log.md", "new": "Alpha"}),
            # a forged log anywhere: vaultd reads any file starting with its header as a log
            ("note_patch", {"target": "Alpha", "old": "# Alpha\n", "new": "# vaultd operation log\n"}),
        ]
        for tool, args in attempts:
            result = await _two_step(client, tool, args)
            assert result.is_error, (tool, args, result.structured_content)
            _refused_p05(tool_error(result))
        assert log.read_bytes() == before, "the log is as vaultd wrote it"
        assert (vault / "Alpha.md").read_text().startswith("# Alpha\n") and not (vault / "elsewhere.md").exists()
        # Its own events still go to the log, marked as its own.
        event = {"event": {"type": "EXTRACT", "source": "agent", "note": "an event of its own"}}
        appended = ok(await client.call_tool("log_append", event))
        assert appended["line"].endswith("(vaultd:agent)")


async def test_an_agent_cannot_create_the_log_before_vaultd_does(daemon: Daemon, home: Home, cli: Any) -> None:
    root = home.root / "fresh"
    root.mkdir()
    (root / "Alpha.md").write_text("# Alpha\n")
    assert cli("vault", "add", "f", str(root)).code == 0
    assert not (root / "log.md").exists()
    forged = "# vaultd operation log\n2020-01-01 00:00  EXTRACT  -  me  —  nothing happened\n"
    async with agent(home) as client:
        for path, body in (("log", forged), ("log", "my own header, so vaultd never appends\n"), ("LOG", forged)):
            err = tool_error(await _two_step(client, "note_create", {"vault": "f", "path": path, "body": body}))
            _refused_p05(err)
            assert "log_path" in err["message"], err
        # nor move a note onto its path, in any spelling of it
        for to in ("log", "Log"):
            _refused_p05(tool_error(await _two_step(client, "note_move", {"vault": "f", "target": "Alpha", "to": to})))
        assert not (root / "log.md").exists() and not (root / "LOG.md").exists()
        made = ok(await client.call_tool("note_create", {"vault": "f", "path": "Beta", "body": "x\n"}))
        assert made["log"]["appended"] is True
    assert (root / "log.md").read_text().startswith("# vaultd operation log\n")


def test_a_person_is_refused_too_and_told_the_setting_to_change(vault: Path, cli: Any) -> None:
    assert cli("append", "Alpha", "--section", "Log", "--markdown", "A line.").code == 0
    before = snapshot(vault)
    patched = cli("patch", "log.md", "--old", "# vaultd operation log", "--new", "# diary")
    assert patched.code != 0 and "P05" in patched.err, patched.err
    assert "--log-path" in patched.err and "log_path" in patched.err, "the refusal names the setting"
    deleted = cli("delete", "log.md")
    assert deleted.code != 0 and "P05" in deleted.err, deleted.err
    moved = cli("move", "log.md", "Diary")
    assert moved.code != 0 and "P05" in moved.err, moved.err
    assert snapshot(vault) == before


async def test_a_verdict_is_gated_on_the_parsed_header_not_its_spelling(vault: Path, home: Home, cli: Any) -> None:
    async with agent(home) as client:
        one = ok(await client.call_tool("source_capture", {"items": [{"text": "first\n", "origin": "https://a.example/1"}]}))
        src = one["detail"]["sources"][0]["note"]
        added = ok(await client.call_tool("claim_add", {"page": "Page", "claim": "Journals recover writes", "support": [src]}))
        claim = added["detail"]["claim"]
        text = (vault / claim).read_text()
        assert "ledger: claim\n" in text and "state: proposed\n" in text
        # The same claim, accepted, in a new note whose header spells the key with a YAML escape.
        body = text.replace("ledger: claim\n", '"\\x6cedger": claim\n').replace("state: proposed\n", "state: accepted\n")
        assert b"ledger" not in body.encode()
        before = snapshot(vault)
        sneaky = ok(await client.call_tool("note_create", {"path": "Sneaky", "body": body}))
        assert sneaky["outcome"] == "proposed", "an escaped key is the same key: accepting is a person's"
        assert snapshot(vault) == before


def test_a_second_hello_changes_no_channel(vault: Path, home: Home, cli: Any) -> None:
    raw = RawClient(home.socket)
    raw.request("hello", {"client": "agent", "version": "1", "channel": "mcp", "session": "s"})
    again = raw.request("hello", {"client": "vaultctl", "version": "1", "channel": "cli"})
    assert again["error"]["code"] == -32600 and "hello again" in again["error"]["message"], again
    assert "mcp" in again["error"]["message"]
    # Still the agent: a person's method stays closed, and writes are marked as the agent's.
    reply = raw.request("proposal.list", {})
    assert "result" in reply
    refused = raw.request("vault.set", {"id": "v", "agents": {"delete": "apply"}})
    assert refused["error"]["data"]["code"] == "POLICY", refused
    made = raw.call("note.create", {"path": "By Agent", "body": "x\n"})
    assert made["log"]["line"].endswith("(vaultd:agent)"), made
    ops = cli("ops", "--json").json()["ops"]
    assert ops[0]["channel"] == "mcp"


def test_hellos_pipelined_before_the_first_is_answered_open_one_channel(vault: Path, home: Home) -> None:
    raw = RawClient(home.socket)
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "hello", "params": {"client": "a", "version": "1", "channel": "mcp"}},
        {"jsonrpc": "2.0", "id": 2, "method": "hello", "params": {"client": "b", "version": "1", "channel": "cli"}},
        {"jsonrpc": "2.0", "id": 3, "method": "hello", "params": {"client": "c", "version": "1", "channel": "editor"}},
    ]
    raw.send_bytes(b"".join(json.dumps(f).encode() + b"\n" for f in frames))
    replies = {m["id"]: m for m in (raw.recv_message() for _ in frames)}
    opened = [i for i, m in replies.items() if "result" in m]
    assert opened == [1], replies
    reply = raw.request("vault.set", {"id": "v", "agents": {"delete": "apply"}})
    assert reply["error"]["data"]["code"] == "POLICY", "the connection is the agent's, as its first hello said"


def test_an_undo_cannot_put_a_note_back_at_the_log_path(daemon: Daemon, home: Home, cli: Any) -> None:
    """The vault is registered again with its log at a path a deleted note had: undoing that delete
    would put the note where vaultd's log goes (and vaultd would never log again). The check of
    every plan's paths refuses the undo, as it refuses every write method there."""
    root = home.root / "moved-log"
    root.mkdir()
    assert cli("vault", "add", "m", str(root)).code == 0
    assert cli("new", "Journal", "--body", "-", input="my journal\n").code == 0
    preview = cli("delete", "Journal", "--json").json()
    deleted = cli("delete", "Journal", "--confirm", "--fingerprint", preview["fingerprint"], "--json").json()
    assert deleted["outcome"] == "applied" and not (root / "Journal.md").exists()
    fp = cli("vault", "remove", "m", "--json").json()["fingerprint"]
    assert cli("vault", "remove", "m", "--confirm", "--fingerprint", fp).code == 0
    assert cli("vault", "add", "m", str(root), "--log-path", "Journal.md").code == 0
    undone = cli("undo", deleted["op_id"])
    assert undone.code != 0 and "P05" in undone.err and "log_path" in undone.err, (undone.out, undone.err)
    assert not (root / "Journal.md").exists()
    made = cli("new", "Next", "--json").json()
    assert made["log"]["appended"] is True
    assert (root / "Journal.md").read_text().startswith("# vaultd operation log\n")
