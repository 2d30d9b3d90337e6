"""Agents propose, people decide: the gate, proposals and agent undo, through the official MCP SDK
client against ``vaultctl mcp`` and a real daemon, with the person on the real ``vaultctl``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from protocol.errors import ErrorCode
from protocol.methods.common import Channel, Empty
from protocol.methods.gate import AgentPolicyChange, Gate
from protocol.methods.proposals import (
    PROPOSAL_APPLY,
    PROPOSAL_LIST,
    PROPOSAL_REJECT,
    PROPOSAL_SHOW,
    ProposalListParams,
    ProposalRef,
    ProposalRejectParams,
)
from protocol.methods.receipts import Proposed
from protocol.methods.service import DAEMON_STOP, DOCTOR, DoctorParams
from protocol.methods.vaults import VAULT_ADD, VAULT_LIST, VAULT_REMOVE, VAULT_SET, VaultAddParams, VaultRemoveParams, VaultSetParams
from protocol.methods.writes import DELETE, DeleteParams
from tests.support.agent import agent, ok
from tests.support.harness import Daemon, Home, register, snapshot
from tests.support.mcp_results import tool_error
from tests.support.typed import TypedClients, previewed, refused

if TYPE_CHECKING:
    from pathlib import Path

    from protocol.methods.common import Params
    from protocol.methods.spec import MethodSpec

NOTES = {
    "Alpha.md": "# Alpha\n\nFirst note.\n",
    "Beta.md": "# Beta\n\nSecond note, see [[Alpha]].\n",
    "Gamma.md": "# Gamma\n\nA note nothing links to.\n",
}


def _write_vault(root: Path) -> None:
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.fixture
def vault(daemon: Daemon, home: Home) -> Path:
    root = home.root / "vault"
    _write_vault(root)
    register(home, root)
    return root


def notes(root: Path) -> dict[str, bytes]:
    """Every file but the vault's operation log, which records each operation (undo too)."""
    return {k: v for k, v in snapshot(root).items() if k != "log.md"}


def _json(cli: Any, *args: str) -> Any:
    result = cli(*args, "--json")
    assert result.code == 0, (args, result.err)
    return result.json()


async def _propose_delete(client: Any, target: str) -> dict[str, Any]:
    preview = ok(await client.call_tool("note_delete", {"target": target, "reason": "tidying up"}))
    assert preview["outcome"] == "preview"
    assert [w["code"] for w in preview["warnings"]][:1] == ["G01"], "the preview says confirming only proposes"
    return ok(
        await client.call_tool(
            "note_delete", {"target": target, "reason": "tidying up", "confirm": True, "fingerprint": preview["fingerprint"]}
        )
    )


async def test_an_agents_delete_is_proposed_applied_by_a_person_and_undone(vault: Path, home: Home, cli: Any) -> None:
    before = notes(vault)
    async with agent(home) as client:
        proposed = await _propose_delete(client, "Gamma")
        assert proposed["outcome"] == "proposed"
        pid = proposed["proposal"]
        assert sorted(c["path"] for c in proposed["changes"]) == [".trash/Gamma.md", "Gamma.md"]
        assert notes(vault) == before, "a proposal changes no note"
        listed = ok(await client.call_tool("proposal_list", {}))
        assert listed["pending"] == 1 and [p["id"] for p in listed["proposals"]] == [pid]
        shown = ok(await client.call_tool("proposal_show", {"id": pid}))
        assert shown["state"] == "pending" and shown["reason"] == "tidying up" and shown["proposer"] == "mcp:vaultctl-mcp"
        removed = next(d for d in shown["diffs"] if d["path"] == "Gamma.md")
        assert removed["action"] == "delete" and "-A note nothing links to." in removed["diff"]
        tools = {t.name for t in (await client.list_tools()).tools}
        assert "proposal_apply" not in tools and "proposal_reject" not in tools, "only a person applies or rejects"

        # The person: sees it waiting, reviews it, applies it (two commands).
        status = cli("status")
        assert "1 agent proposal(s) wait for you" in status.out, status.out
        table = cli("proposals")
        assert table.code == 0 and pid in table.out and "note.delete" in table.out and "Gamma.md" in table.out
        review = cli("proposals", "show", pid)
        assert review.code == 0 and "-A note nothing links to." in review.out and f"vaultctl proposals apply {pid}" in review.out
        applied = _json(cli, "proposals", "apply", pid)
        assert applied["outcome"] == "applied"
        assert not (vault / "Gamma.md").exists() and (vault / ".trash" / "Gamma.md").exists()

        after = ok(await client.call_tool("proposal_show", {"id": pid}))
        assert after["state"] == "applied" and after["applied_op"] == applied["op_id"] and after["decided_by"] == "cli:vaultctl"
        op = next(o for o in _json(cli, "ops")["ops"] if o["op_id"] == applied["op_id"])
        assert op["channel"] == "cli" and op["proposal"] == pid and op["proposed_by"] == "mcp:vaultctl-mcp", "both are named"

        # The agent cannot undo what a person applied; the person can.
        refused = tool_error(await client.call_tool("op_undo", {"op_id": applied["op_id"]}))
        assert refused["code"] == "POLICY" and refused["issues"][0]["code"] == "G02"
    assert (vault / ".trash" / "Gamma.md").exists()
    undone = cli("undo", applied["op_id"])
    assert undone.code == 0, undone.err
    assert notes(vault) == before


async def test_a_proposal_whose_note_changed_goes_stale_and_writes_nothing(vault: Path, home: Home, cli: Any) -> None:
    async with agent(home) as client:
        pid = (await _propose_delete(client, "Gamma"))["proposal"]
    (vault / "Gamma.md").write_text("# Gamma\n\nEdited by hand meanwhile.\n")
    edited = notes(vault)
    result = cli("proposals", "apply", pid)
    assert result.code != 0 and "stale" in result.err and "Gamma.md" in result.err, result.err
    assert "G03" in result.err
    assert notes(vault) == edited, "nothing was written"
    assert _json(cli, "proposals", "show", pid)["state"] == "stale"
    again = cli("proposals", "apply", pid)
    assert again.code != 0 and "is stale, not pending" in again.err


async def test_an_agent_cannot_apply_reject_or_undo_what_is_not_its_own(
    vault: Path, home: Home, cli: Any, daemon: Daemon, typed_clients: TypedClients
) -> None:
    made = _json(cli, "new", "Person Note", "--title", "Person Note")
    async with agent(home) as client:
        pid = (await _propose_delete(client, "Gamma"))["proposal"]
        not_its_own = tool_error(await client.call_tool("op_undo", {"op_id": made["op_id"]}))
        assert not_its_own["code"] == "POLICY"
        assert "did not make" in not_its_own["message"]
        # Its own work it may undo (default undo_own: apply), while its files are unchanged.
        own = ok(await client.call_tool("note_create", {"path": "From Agent", "body": "By the agent.\n"}))
        assert own["outcome"] == "applied"
        back = ok(await client.call_tool("op_undo", {"op_id": own["op_id"]}))
        assert back["outcome"] == "applied" and not (vault / "From Agent.md").exists()
    assert (vault / "Person Note.md").exists()

    # The socket methods themselves refuse an agent, whatever client speaks them.
    socket_agent = typed_clients.open(home, Channel.MCP)
    with refused(ErrorCode.POLICY):
        socket_agent.call(PROPOSAL_APPLY, ProposalRef(id=pid))
    with refused(ErrorCode.POLICY):
        socket_agent.call(PROPOSAL_REJECT, ProposalRejectParams(id=pid, note="no"))
    assert _json(cli, "proposals", "show", pid)["state"] == "pending"

    # Another agent session may not withdraw it; the one that made it may not after a person decided.
    async with agent(home) as other:
        err = tool_error(await other.call_tool("proposal_withdraw", {"id": pid}))
        assert err["code"] == "POLICY" and "only the agent session" in err["message"]
    rejected = _json(cli, "proposals", "reject", pid, "--note", "keep it")
    assert rejected["state"] == "rejected" and rejected["note"] == "keep it"
    assert (vault / "Gamma.md").exists()


async def test_the_proposing_session_can_withdraw_and_poll(vault: Path, home: Home, cli: Any) -> None:
    async with agent(home) as client:
        pid = (await _propose_delete(client, "Gamma"))["proposal"]
        withdrawn = ok(await client.call_tool("proposal_withdraw", {"id": pid}))
        assert withdrawn["state"] == "withdrawn" and withdrawn["decided_by"] == "mcp:vaultctl-mcp"
        assert ok(await client.call_tool("proposal_list", {}))["pending"] == 0
        every = ok(await client.call_tool("proposal_list", {"all": True}))
        assert [(p["id"], p["state"]) for p in every["proposals"]] == [(pid, "withdrawn")]
    result = cli("proposals", "apply", pid)
    assert result.code != 0 and "withdrawn" in result.err


async def test_one_agent_session_undoes_as_a_unit(vault: Path, home: Home, cli: Any) -> None:
    before = notes(vault)
    async with agent(home, env={"VAULTD_SESSION": "host-session-1"}) as client:
        ok(await client.call_tool("note_create", {"path": "Draft", "body": "One.\n"}))
        ok(await client.call_tool("note_append", {"target": "Draft", "section": "Log", "markdown": "Two.\n"}))
        last = ok(await client.call_tool("note_append", {"target": "Alpha", "section": "Log", "markdown": "Agent line.\n"}))
    ops = _json(cli, "ops")["ops"]
    assert {o["session"] for o in ops[:3]} == {"host-session-1"}
    # A new shim process naming the same host session is the same agent session.
    async with agent(home, env={"VAULTD_SESSION": "host-session-1"}) as client:
        undone = ok(await client.call_tool("op_undo", {"op_id": last["op_id"], "session": True}))
        assert undone["outcome"] == "applied"
        assert sorted(c["path"] for c in undone["changes"]) == ["Alpha.md", "Draft.md"]
    assert notes(vault) == before, "every change of the session is reversed, in one operation"


async def test_session_undo_refuses_when_a_person_edited_in_between(vault: Path, home: Home, cli: Any) -> None:
    async with agent(home, env={"VAULTD_SESSION": "s2"}) as client:
        ok(await client.call_tool("note_append", {"target": "Alpha", "section": "Log", "markdown": "Agent one.\n"}))
        ok(await client.call_tool("note_append", {"target": "Beta", "section": "Log", "markdown": "Agent two.\n"}))
        edited = _json(cli, "append", "Alpha", "--section", "Log", "--markdown", "Person line.")
        assert edited["outcome"] == "applied"
        err = tool_error(await client.call_tool("op_undo", {"op_id": edited["op_id"], "session": True}))
        assert err["code"] == "POLICY", "a person's operation is not the session's"
        mine = _json(cli, "ops")["ops"][1]
        assert mine["session"] == "s2"
        err = tool_error(await client.call_tool("op_undo", {"op_id": mine["op_id"], "session": True}))
        assert err["code"] == "CONFLICT" and "Alpha.md" in err["message"]
    assert "Person line." in (vault / "Alpha.md").read_text()


async def test_an_org_vault_holds_every_agent_write(daemon: Daemon, home: Home, cli: Any) -> None:
    root = home.root / "org"
    _write_vault(root)
    assert cli("vault", "add", "team", str(root), "--kind", "org").code == 0
    before = notes(root)
    async with agent(home) as client:
        held = ok(await client.call_tool("note_create", {"vault": "team", "path": "Agent Idea", "body": "Hmm.\n"}))
        assert held["outcome"] == "proposed" and held["changes"][0]["path"] == "Agent Idea.md"
    assert notes(root) == before
    applied = _json(cli, "proposals", "apply", held["proposal"], "--vault", "team")
    assert applied["outcome"] == "applied"
    assert "Hmm." in (root / "Agent Idea.md").read_text()


async def test_a_refusing_policy_stores_nothing(home: Home, cli: Any) -> None:
    root = home.root / "vault"
    _write_vault(root)
    config = {
        "version": 1,
        "vaults": [{"id": "v", "path": str(root.resolve()), "agents": {"delete": "refuse", "create": "propose", "wide_files": 1}}],
    }
    home.home.mkdir(mode=0o700, exist_ok=True)
    (home.home / "config.json").write_text(json.dumps(config))
    daemon = Daemon(home)
    try:
        await _refused_and_held(home, root)
    finally:
        daemon.stop()


async def _refused_and_held(home: Home, root: Path) -> None:
    async with agent(home) as client:
        err = tool_error(await client.call_tool("note_delete", {"target": "Gamma"}))
        assert err["code"] == "POLICY" and err["issues"][0]["code"] == "G02", err
        created = ok(await client.call_tool("note_create", {"path": "New", "body": "x\n"}))
        assert created["outcome"] == "proposed"
        # Two files changed is 'wide' here (wide_files 1): an append stays apply, a move would not.
        moved = ok(await client.call_tool("note_move", {"target": "Alpha", "to": "Renamed"}))
        assert moved["outcome"] == "preview" and moved["warnings"][0]["code"] == "G01"
    kept = sorted(p.name for p in (root / ".vaultd" / "proposals").iterdir())
    assert len(kept) == 1 and kept[0] == created["proposal"] + ".json", "the refused delete stored nothing"


def test_bad_and_tampered_proposals_are_refused_and_reported(
    vault: Path, home: Home, cli: Any, daemon: Daemon, typed_clients: TypedClients
) -> None:
    person = typed_clients.open(home, Channel.CLI)
    with refused(ErrorCode.NOT_FOUND):
        person.call(PROPOSAL_SHOW, ProposalRef(id="p20260101000000-00000000"))
    with refused(ErrorCode.INVALID_PARAMS):
        person.call(PROPOSAL_SHOW, ProposalRef(id="../../etc/passwd"))

    socket_agent = typed_clients.open(home, Channel.MCP, client_name="t", session="s")
    preview = previewed(socket_agent.call(DELETE, DeleteParams(target="Gamma")))
    proposed = socket_agent.call(DELETE, DeleteParams(target="Gamma", confirm=True, fingerprint=preview.fingerprint))
    assert isinstance(proposed, Proposed), proposed
    pid = proposed.proposal
    path = vault / ".vaultd" / "proposals" / f"{pid}.json"
    data = path.read_bytes()
    path.write_bytes(data.replace(b"Gamma.md", b"Alpha.md", 1))
    with refused(ErrorCode.POLICY) as tampered:
        person.call(PROPOSAL_SHOW, ProposalRef(id=pid))
    assert "seal" in tampered.data.message
    with refused(ErrorCode.POLICY):
        person.call(PROPOSAL_APPLY, ProposalRef(id=pid))
    listed = person.call(PROPOSAL_LIST, ProposalListParams())
    assert listed.proposals == []
    assert [r.name for r in listed.refused] == [path.name]
    doctor = cli("doctor")
    assert path.name in doctor.out
    assert "never applied" in doctor.out
    assert path.exists(), "nothing used, nothing deleted"
    assert (vault / "Gamma.md").exists(), "nothing used, nothing deleted"
    assert (vault / "Alpha.md").exists(), "nothing used, nothing deleted"


def test_an_agent_channel_reaches_only_the_mcp_tools(
    vault: Path, home: Home, cli: Any, daemon: Daemon, typed_clients: TypedClients, tmp_path: Path
) -> None:
    """Whatever client speaks for an agent, the daemon answers it the MCP tools' methods only:
    no registering a vault with a looser policy, no unregistering one, no stopping the daemon."""
    other = tmp_path / "other"
    other.mkdir()
    socket_agent = typed_clients.open(home, Channel.MCP)
    attempts: list[tuple[MethodSpec[Any, Any], Params]] = [
        (VAULT_ADD, VaultAddParams(id="loose", path=str(other))),
        (VAULT_REMOVE, VaultRemoveParams(id="v")),
        (VAULT_SET, VaultSetParams(id="v", agents=AgentPolicyChange(delete=Gate.APPLY))),
        (DAEMON_STOP, Empty()),
        (DOCTOR, DoctorParams()),
        (PROPOSAL_APPLY, ProposalRef(id="p20260101000000-00000000")),
    ]
    for spec, params in attempts:
        with refused(ErrorCode.POLICY) as refusal:
            socket_agent.call(spec, params)
        assert "not open to agents" in refusal.data.message, spec.name
    assert socket_agent.call(VAULT_LIST, Empty()).vaults[0].entry.id == "v", "its tools still answer"
    assert [v["entry"]["id"] for v in _json(cli, "vault", "list")["vaults"]] == ["v"]
    assert daemon.proc.poll() is None
