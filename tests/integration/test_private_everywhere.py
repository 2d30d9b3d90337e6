"""private_paths hold in every reply an agent gets, not only in the methods that filter by path.

Regressions, each through the official MCP SDK client against ``vaultctl mcp`` and a real daemon:
an operation a person made that links to a private note was listed to agents with its summary;
``note_read`` of the operation log returned the lines ``log_tail`` hides; a sync conflict on a
private note became a proposal whose list and show carried both versions; a private note sharing a
name with a visible one made the visible one's links "ambiguous" to agents, in links, lint and stats.
Then the property: a private name drawn at random never appears in any reply of any tool.
"""

from __future__ import annotations

import json
import string
from typing import TYPE_CHECKING, Any

import anyio
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.shared.exceptions import MCPError

from protocol.methods.git import VAULT_SYNC, SyncParams
from protocol.methods.git_settings import GitMode
from protocol.methods.proposals import PROPOSAL_SHOW, ProposalRef
from protocol.methods.vaults import VAULT_ADD, Kind, VaultAddParams
from protocol.methods.writes import PATCH, PatchParams
from tests.support import gitrepo
from tests.support.agent import agent, ok
from tests.support.gitrepo import git
from tests.support.harness import Daemon, Home, register, vaultctl
from tests.support.mcp_results import tool_error

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.typed import TypedClient, TypedClients

PUBLIC = {
    "Pointer.md": "# Pointer\n\nSee [[Plans]] for the work plans.\n",
    "work/Plans.md": "# Plans\n\nWork plans about travel.\n",
    "Public Note.md": "# Public Note\n\nShared text.\n",
}
DIARY = {"diary/Plans.md": "# Plans\n\nPrivate plans.\n", "diary/Secret.md": "# Secret\n\nKept to myself.\n"}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.fixture
def vault(daemon: Daemon, home: Home) -> Path:
    root = home.root / "vault"
    _write(root, {**PUBLIC, **DIARY})
    register(home, root, private_paths=["diary/**"])
    return root


async def test_an_operation_linking_to_a_private_note_is_not_listed_to_agents(vault: Path, home: Home, cli: Any) -> None:
    linked = cli("link", "Public Note", "diary/Secret.md", "--one-way", "--json")
    assert linked.code == 0, linked.err
    assert any("Public Note.md" in o["paths"] for o in cli("ops", "--json").json()["ops"])
    async with agent(home) as client:
        ops = ok(await client.call_tool("op_list", {}))["ops"]
        assert "diary" not in json.dumps(ops) and "Secret" not in json.dumps(ops)


async def test_an_agent_reads_the_log_through_log_tail_when_anything_is_private(vault: Path, home: Home, cli: Any) -> None:
    assert cli("new", "diary/2026-02-02", "--json").code == 0
    assert cli("new", "shared", "--json").code == 0
    assert "diary/2026-02-02" in cli("show", "log", "--json").json()["body"]  # a person reads it whole
    async with agent(home) as client:
        refused = tool_error(await client.call_tool("note_read", {"target": "log"}))
        assert refused["code"] == "POLICY" and "log_read (view tail or grep)" in refused["message"], refused
        tail = ok(await client.call_tool("log_read", {"view": "tail", "limit": 50}))["lines"]
        assert any("shared.md" in line for line in tail) and "diary" not in json.dumps(tail)


async def test_a_private_twin_leaves_the_visible_note_resolved_for_agents(vault: Path, home: Home, cli: Any) -> None:
    # A person sees two notes named Plans: the link is ambiguous to them.
    pointer = cli("links", "Pointer", "--json").json()
    assert pointer["out"][0]["status"] == "ambiguous"
    async with agent(home) as client:
        links = ok(await client.call_tool("note_links", {"target": "Pointer"}))
        assert [(o["status"], o.get("resolved")) for o in links["out"]] == [("resolved", "work/Plans.md")]
        into = ok(await client.call_tool("note_links", {"target": "work/Plans.md"}))
        assert [i["path"] for i in into["incoming"]] == ["Pointer.md"]
        stats = ok(await client.call_tool("vault_stats", {}))
        assert stats["ambiguous_links"] == 0
        lint = ok(await client.call_tool("vault_lint", {}))
        codes = {f["code"] for f in lint["findings"]}
        assert not codes & {"L02", "L07"}, lint["findings"]
        assert "diary" not in json.dumps([links, into, stats, lint])


def _machine(name: str) -> tuple[Home, Daemon]:
    home = Home.create()
    return home, Daemon(home)


def test_a_sync_conflict_on_a_private_note_is_no_proposal_an_agent_sees(tmp_path: Path, typed_clients: TypedClients) -> None:
    seed = gitrepo.init(tmp_path / "seed", {**PUBLIC, **DIARY})
    origin = gitrepo.bare(tmp_path / "org.git")
    git(seed, "push", "-q", str(origin), "main")
    (ha, da), (hb, db) = _machine("Ada Lovelace"), _machine("Grace Hopper")
    try:
        sides: list[TypedClient] = []
        for home, name in ((ha, "ada"), (hb, "grace")):
            repo = gitrepo.clone(origin, tmp_path / name, name.title())
            client = typed_clients.open(home, timeout=60)
            client.call(
                VAULT_ADD,
                VaultAddParams(
                    id="team", path=str(repo), kind=Kind.ORG, git=GitMode.CHECKPOINT, remote=str(origin), private_paths=["diary/**"]
                ),
            )
            sides.append(client)
        a, b = sides
        a.call(PATCH, PatchParams(vault="team", target="diary/Secret.md", old="Kept to myself.", new="Ada's secret words."))
        b.call(PATCH, PatchParams(vault="team", target="diary/Secret.md", old="Kept to myself.", new="Grace's secret words."))
        assert a.call(VAULT_SYNC, SyncParams(vault="team")).pushed
        [conflict] = b.call(VAULT_SYNC, SyncParams(vault="team")).conflicts
        assert conflict.proposal is not None
        shown = b.call(PROPOSAL_SHOW, ProposalRef(vault="team", id=conflict.proposal))  # a person sees both sides
        assert "secret words" in msgspec.json.encode(shown).decode()

        async def as_agent() -> None:
            async with agent(hb) as client:
                listed = ok(await client.call_tool("proposal_list", {"all": True}))
                assert listed["proposals"] == [] and listed["pending"] == 0, listed
                refused = tool_error(await client.call_tool("proposal_show", {"id": conflict.proposal}))
                assert refused["code"] == "NOT_FOUND"
                assert "secret words" not in json.dumps([listed, refused])

        anyio.run(as_agent)
        for client in sides:
            client.close()
    finally:
        for home, daemon in ((ha, da), (hb, db)):
            daemon.stop()
            home.cleanup()


# -- the property: a drawn private name never reaches an agent -------------------------------------

_LETTERS = st.text(alphabet=string.ascii_lowercase, min_size=6, max_size=10)

#: Arguments for a tool's required fields, by field name; a tool needing others is called with these.
_ARGS: dict[str, Any] = {
    "target": "Pointer",
    "source": "Pointer",
    "query": "plans",
    "pattern": "plans|Secret|diary",
    "path": "agent note",
    "body": "# agent note\n",
    "markdown": "more",
    "section": "More",
    "old": "See",
    "new": "Look at",
    "to": "moved by agent",
    "keep": "Pointer",
    "absorb": "Public Note",
    "id": "p20260101000000-0000abcd",
    "text": "plans",
    "event": {"type": "TASK", "source": "agent", "note": "looked around"},
    "set": {"status": "seen"},
    "note": "Pointer",
    "question": "what are the plans",
}


def _fill(schema: dict[str, Any]) -> dict[str, Any] | None:
    args: dict[str, Any] = {}
    for name in schema.get("required", []):
        if name not in _ARGS:
            return None
        args[name] = _ARGS[name]
    return args


async def _sweep(home: Home) -> tuple[list[str], int]:
    """Every tool called once with what its required fields need: each reply's text, and how many
    tools could be called."""
    replies: list[str] = []
    called = 0
    async with agent(home) as client:
        tools = (await client.list_tools()).tools
        for tool in tools:
            args = _fill(tool.input_schema)
            if args is None:
                continue
            called += 1
            try:
                result = await client.call_tool(tool.name, args)
            except MCPError as exc:  # arguments the shim refuses before the daemon: the refusal is a reply too
                replies.append(f"{exc} {exc.error}")
                continue
            replies.append(json.dumps(result.structured_content))
            replies.extend(getattr(part, "text", "") for part in result.content)
    return replies, called


@pytest.mark.timeout(600)
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(folder=_LETTERS, stem=_LETTERS)
def test_a_drawn_private_name_appears_in_no_reply_of_any_tool(folder: str, stem: str) -> None:
    folder, stem = f"zq{folder}", f"Zx{stem}"
    home = Home.create()
    daemon = Daemon(home)
    try:
        root = home.root / "vault"
        _write(root, {**PUBLIC, f"{folder}/{stem}.md": f"# {stem}\n\nSee [[Pointer]].\n"})

        def cli(*args: str) -> None:
            done = vaultctl(home, *args)
            assert done.code == 0, (args, done.err)

        cli("vault", "add", "v", str(root), "--private", f"{folder}/**")
        # People's operations that name the private note in what they record.
        cli("new", f"{folder}/{stem} two")
        cli("link", f"{folder}/{stem}.md", "Public Note", "--one-way")
        cli("append", f"{folder}/{stem}.md", "--section", "More", "--markdown", f"about [[{stem} two]]")
        cli("log", "append", "TASK", "person", f"filed [[{stem}]] under {folder}")
        replies, called = anyio.run(_sweep, home)
        assert called >= 20, called  # the sweep reaches most tools, or it proves little
        blob = "\n".join(replies)
        assert folder not in blob and stem not in blob
    finally:
        daemon.stop()
        home.cleanup()


async def test_a_commit_whose_subject_names_a_private_note_is_not_in_an_agents_history(daemon: Daemon, home: Home, cli: Any) -> None:
    root = gitrepo.init(home.root / "vault", {**PUBLIC, **DIARY})
    added = cli("vault", "add", "v", str(root), "--private", "diary/**", "--git", "checkpoint", "--json")
    assert added.code == 0, added.err
    assert cli("patch", "Public Note", "--old", "Shared text.", "--new", "Shared text, edited.", "--json").code == 0
    assert cli("link", "Public Note", "diary/Secret.md", "--one-way", "--json").code == 0
    subjects = [e["subject"] for e in cli("history", "Public Note", "--json").json()["entries"]]
    assert any("Secret" in s or "diary" in s for s in subjects), subjects  # a person sees what the commit says
    async with agent(home) as client:
        history = ok(await client.call_tool("note_history", {"target": "Public Note"}))
        assert history["entries"], "the commits naming only visible notes are still listed"
        assert "diary" not in json.dumps(history) and "Secret" not in json.dumps(history)
