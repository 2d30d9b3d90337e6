"""private_paths: notes agents cannot see or write, checked through the official MCP SDK client
against ``vaultctl mcp`` and a real daemon, with the CLI (a person's channel) seeing them all."""

from __future__ import annotations

import json
import sys
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from protocol.methods.writes import LOG_APPEND, LOG_TAIL, MOVE, LogAppendParams, LogEvent, LogTailParams, LogType, MoveParams
from tests.support.harness import REPO, Daemon, Home, register, snapshot
from tests.support.mcp_results import tool_error
from tests.support.typed import TypedClient, two_step

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from mcp.types import CallToolResult

SHIM = [sys.executable, "-m", "vaultctl.main", "mcp"]

WORD = "zanzibarquux"  #: appears only in private notes
DIARY = {
    "diary/2026-01-01.md": (
        f"---\naliases: [crush]\ntags: [feelings]\n---\n# Dear Diary\n\nMy {WORD} secret."
        " #heartbreak\n\nSee [[Public Note]].\n\n## Secret Heading\n\nMore.\n"
    ),
    "diary/Plans.md": f"# Plans\n\nPrivate plans, {WORD}.\n",
    "diary/broken.md": "---\ntitle: [unclosed\n---\n# Broken\n",
}
PUBLIC = {
    "Public Note.md": "# Public Note\n\nShared text about travel.\n",
    "Pointer.md": "# Pointer\n\nSee [[2026-01-01]], [[2026-01-01#Secret Heading]] and [[2026-01-01#No Such]].\nTypo: [[Dear Diry]].\n",
    "work/Plans.md": "# Plans\n\nWork plans about travel.\n",
}


@pytest.fixture
def vault(daemon: Daemon, home: Home) -> Path:
    root = home.root / "vault"
    for rel, text in {**DIARY, **PUBLIC}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "diary" / "binary.md").write_bytes(b"\xff\xfe not utf-8")
    # Spelled otherwise than the folder on purpose: the glob matches on the normalized key.
    added = register(home, root, private_paths=["Diary/**"])
    assert added["entry"]["private_paths"] == ["Diary/**"]
    return root


@asynccontextmanager
async def agent(home: Home) -> AsyncIterator[Client]:
    server = StdioServerParameters(command=SHIM[0], args=SHIM[1:], env=home.env, cwd=str(REPO))
    async with Client(server, mode="auto", read_timeout_seconds=60) as client:
        yield client


def _ok(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def _error(result: CallToolResult) -> dict[str, Any]:
    return tool_error(result)


def _cli_json(cli: Any, *args: str) -> Any:
    result = cli(*args, "--json")
    assert result.code == 0, result.err
    return result.json()


async def test_agents_read_nothing_private(vault: Path, home: Home, cli: Any) -> None:
    seen: list[Any] = []
    async with agent(home) as client:

        async def call(tool: str, args: dict[str, Any]) -> dict[str, Any]:
            out = _ok(await client.call_tool(tool, args))
            seen.append(out)
            return out

        assert (await call("note_search", {"query": WORD}))["hits"] == []
        assert [h["path"] for h in (await call("note_search", {"query": "plans"}))["hits"]] == ["work/Plans.md"]
        listed = await call("note_list", {"limit": 500})
        assert {n["path"] for n in listed["notes"]} == set(PUBLIC) and listed["total"] == len(PUBLIC)
        assert (await call("note_list", {"folder": "diary"}))["total"] == 0

        # A private note is refused exactly like a name nothing has (the message echoes only the input).
        for tool in ("note_read", "note_links"):
            unknown = _error(await client.call_tool(tool, {"target": "nothing-here"}))
            for target in [
                "diary/2026-01-01.md",
                "diary/2026-01-01",
                "DIARY/2026-01-01.md",
                "2026-01-01",
                "crush",
                "Dear Diary",
                "diary/broken.md",
                "diary/binary.md",
            ]:
                refused = _error(await client.call_tool(tool, {"target": target}))
                assert {**refused, "message": refused["message"].replace(repr(target), "T")} == {
                    **unknown,
                    "message": unknown["message"].replace("'nothing-here'", "T"),
                }, (tool, target)
        # A name a private note shares with a public one names only the public one here.
        assert (await call("note_read", {"target": "Plans"}))["path"] == "work/Plans.md"

        public = await call("note_links", {"target": "Public Note"})
        assert public["incoming"] == []  # the diary links here; agents do not learn that
        pointer = await call("note_links", {"target": "Pointer"})
        statuses = [(o["target"], o.get("anchor"), o["status"], o.get("resolved")) for o in pointer["out"]]
        assert statuses[:3] == [
            ("2026-01-01", None, "resolved", None),
            ("2026-01-01", "Secret Heading", "resolved", None),
            ("2026-01-01", "No Such", "resolved", None),
        ]  # anchors not checked
        assert [d["target"] for d in pointer["dead"]] == ["Dear Diry"]
        assert pointer["dead"][0].get("suggestion") is None  # "Dear Diary" is a private title

        tags = {t["tag"] for t in (await call("vault_tags", {}))["tags"]}
        assert not tags & {"feelings", "heartbreak"}
        stats = await call("vault_stats", {})
        assert stats["notes"] == len(PUBLIC) and "diary" not in stats["by_folder"]
        assert stats["dead_links"] == 1 and stats["skipped"] == 0 and stats["issues"] == 0
        issues = await call("vault_issues", {})
        assert issues["total"] == 0

    blob = json.dumps(seen)
    for private in (WORD, "diary/", "Dear Diary", "heartbreak", "crush", "feelings"):
        assert private not in blob, private


async def test_agents_cannot_write_or_probe_private_paths(vault: Path, home: Home) -> None:
    before = snapshot(vault)
    async with agent(home) as client:
        for path in ["diary/new", "diary/2026-01-01", "DIARY/Plans", "diary/deeper/x"]:
            refused = _error(await client.call_tool("note_create", {"path": path, "body": "# x\n"}))
            assert refused["code"] == "POLICY" and [i["code"] for i in refused["issues"]] == ["P04"], refused
            assert "2026" not in json.dumps(refused) and "Plans" not in json.dumps(refused)
        for tool, args in [
            ("note_patch", {"target": "diary/2026-01-01.md", "old": "secret", "new": "x"}),
            ("note_append", {"target": "crush", "section": "More", "markdown": "x"}),
            ("note_delete", {"target": "diary/Plans.md"}),
            ("note_move", {"target": "diary/Plans.md", "to": "Plans leaked"}),
            ("note_merge", {"keep": "Pointer", "absorb": "diary/2026-01-01"}),
            ("note_link", {"source": "Pointer", "target": "diary/Plans.md"}),
        ]:
            assert _error(await client.call_tool(tool, args))["code"] == "NOT_FOUND", tool
        into = _error(await client.call_tool("note_move", {"target": "Pointer", "to": "diary/Pointer"}))
        assert into["code"] == "POLICY"
        # Moving a note a private note links to would rewrite that private note: refused, unnamed.
        linked = _error(await client.call_tool("note_move", {"target": "Public Note", "to": "Public Moved"}))
        assert linked["code"] == "POLICY" and "diary" not in json.dumps(linked)
        # Deleting it would break the private note's link: counted, not named.
        deleting = _error(await client.call_tool("note_delete", {"target": "Public Note"}))
        assert deleting["code"] == "VALIDATION" and [i["code"] for i in deleting["issues"]] == ["V03"]
        assert "diary" not in json.dumps(deleting) and "path" not in deleting["issues"][0]
        preview = _ok(await client.call_tool("note_delete", {"target": "Public Note", "leave_broken_links": True}))
        assert preview["detail"]["backlinks"] == [] and "diary" not in json.dumps(preview)
    assert snapshot(vault) == before


async def test_operations_on_private_notes_are_not_listed_to_agents(vault: Path, home: Home, cli: Any) -> None:
    assert cli("new", "diary/2026-02-02", "--json").code == 0
    assert cli("new", "shared", "--json").code == 0
    # Both in one second: op ids order by the second only, so compare without order.
    assert sorted(o["paths"] for o in _cli_json(cli, "ops")["ops"]) == [["diary/2026-02-02.md"], ["shared.md"]]
    async with agent(home) as client:
        ops = _ok(await client.call_tool("op_list", {}))["ops"]
        assert [o["paths"] for o in ops] == [["shared.md"]]
        assert "diary" not in json.dumps(ops)


async def test_people_see_and_write_everything(vault: Path, home: Home, cli: Any) -> None:
    hits = _cli_json(cli, "search", WORD)["hits"]
    assert {h["path"] for h in hits} == {"diary/2026-01-01.md", "diary/Plans.md"}
    listed = _cli_json(cli, "list", "--limit", "500")
    assert {"diary/2026-01-01.md", "diary/Plans.md", "diary/broken.md"} <= {n["path"] for n in listed["notes"]}
    shown = _cli_json(cli, "show", "crush")
    assert shown["path"] == "diary/2026-01-01.md" and WORD in shown["body"]
    assert cli("show", "Plans", "--json").code == 1  # ambiguous for a person, who sees both
    public = _cli_json(cli, "links", "Public Note")
    assert [i["path"] for i in public["incoming"]] == ["diary/2026-01-01.md"]
    pointer = _cli_json(cli, "links", "Pointer")
    assert pointer["out"][0]["resolved"] == "diary/2026-01-01.md"
    assert {d.get("anchor") for d in pointer["dead"]} >= {"No Such"}
    assert {"feelings", "heartbreak"} <= {t["tag"] for t in _cli_json(cli, "tags")["tags"]}
    stats = _cli_json(cli, "stats")
    assert stats["by_folder"]["diary"] == 3 and stats["skipped"] == 1
    assert {i["path"] for i in _cli_json(cli, "issues")["issues"]} >= {"diary/broken.md", "diary/binary.md"}
    made = cli("new", "diary/2026-01-02", "--json")
    assert made.code == 0, made.err
    assert (vault / "diary" / "2026-01-02.md").is_file()


async def test_the_event_log_shows_agents_no_line_naming_a_private_note(vault: Path, home: Home, cli: Any, typed: TypedClient) -> None:
    """Regression: log_tail and log_grep handed agents every line, and the lines of people's
    operations name the notes they wrote (paths with spaces and moves out of a private folder too)."""
    assert cli("new", "diary/2026-03-03 evening", "--json").code == 0
    assert cli("new", "shared", "--json").code == 0
    assert cli("new", "diary/to publish", "--json").code == 0
    two_step(typed, MOVE, MoveParams(vault="v", target="diary/to publish", to="published"))
    typed.call(
        LOG_APPEND, LogAppendParams(vault="v", event=LogEvent(type=LogType.TASK, source="user", note="asked about [[diary/Plans]] again"))
    )
    everything = typed.call(LOG_TAIL, LogTailParams(vault="v", limit=200)).lines
    assert any("diary/2026-03-03 evening.md" in ln for ln in everything)
    assert any("diary/to publish.md" in ln for ln in everything)
    assert any("[[diary/Plans]]" in ln for ln in everything)
    async with agent(home) as client:
        tail = _ok(await client.call_tool("log_tail", {"limit": 200}))
        grep = _ok(await client.call_tool("log_grep", {"pattern": "evening|publish|Plans|shared", "limit": 200}))
        for seen in (tail["lines"], grep["lines"]):
            assert seen, "the agent still sees the lines naming only public notes"
            assert any("shared.md" in ln for ln in seen)
            assert "diary" not in json.dumps(seen).casefold()
        # The limit counts what the agent may see: the private lines do not crowd the others out.
        one = _ok(await client.call_tool("log_tail", {"limit": 1}))["lines"]
        assert len(one) == 1 and "diary" not in one[0].casefold()
        bad = _error(await client.call_tool("log_grep", {"pattern": "(a)"}))
        assert bad["code"] == "INVALID_PARAMS"


async def test_a_private_log_is_absent_for_agents(daemon: Daemon, home: Home, cli: Any, typed: TypedClient) -> None:
    root = home.root / "vault"
    (root / "journal").mkdir(parents=True)
    (root / "Note.md").write_text("# Note\n")
    added = cli("vault", "add", "v", str(root), "--private", "journal/**", "--log-path", "journal/ops.md", "--json")
    assert added.code == 0, added.err
    assert cli("new", "public idea", "--json").code == 0
    assert any("public idea.md" in ln for ln in typed.call(LOG_TAIL, LogTailParams(vault="v")).lines)
    async with agent(home) as client:
        assert _ok(await client.call_tool("log_tail", {}))["lines"] == []
        assert _ok(await client.call_tool("log_grep", {"pattern": "idea"}))["lines"] == []
        assert _error(await client.call_tool("log_grep", {"pattern": "(a)"}))["code"] == "INVALID_PARAMS"
