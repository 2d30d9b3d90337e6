"""Tool families through the official MCP SDK client, ``vaultctl mcp`` and a real daemon: each
selector reaches its method, an argument of another member is refused as INVALID_PARAMS naming the
member's own, and ``--tools`` with one member's old name offers the whole family."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import msgspec
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from protocol.table import METHODS
from tests.support.agent import agent, ok
from tests.support.harness import REPO, Daemon, Home, registered_vault
from tests.support.mcp_results import tool_error
from vaultctl.mcp.families import FAMILIES
from vaultctl.mcp.tools import ToolCatalogue

if TYPE_CHECKING:
    from pathlib import Path

    from mcp.types import CallToolResult

CATALOGUE = ToolCatalogue()
NOTES = {
    "Alpha.md": "---\ntags: [plan]\n---\n# Alpha\n\nSee [[Beta]] and [[Gamma]].\n\n## Log\n\n- started\n",
    "Beta.md": "# Beta\n\nBack to [[Alpha]].\n",
    "Gamma.md": "# Gamma\n\nAlso [[Beta]].\n",
    "Page.md": "# Page\n\nThe journal recovers every write.\n",
    "Board.base": "views:\n  - type: table\n    name: All\n",
    "img/dot.txt": "a text file that is not a note\n",
}
READ_ARGS: dict[str, dict[str, Any]] = {
    "note.history": {"target": "Alpha"},
    "note.diff": {"target": "Alpha"},
    "file.read": {"target": "img/dot.txt"},
    "base.query": {"path": "Board.base"},
    "log.grep": {"pattern": "note"},
    "graph.neighbors": {"target": "Alpha"},
    "graph.path": {"source": "Gamma", "target": "Alpha"},
    "graph.nav": {"target": "Alpha"},
    "spec.get": {"id": "goal"},
    "spec.graph": {"id": "goal"},
    "source.evidence": {"target": "Page"},
    "session.show": {},
}
"""Arguments that reach real things (or, for a spec, what is not there: the daemon's refusal, the
same whichever name the call uses)."""
REFUSED = {"note.history", "note.diff", "spec.get", "spec.graph"}  #: no git, no spec source
VOLATILE = ("uptime", "seen", "connections", "last", "started", "took", "elapsed")  #: keys of a live daemon's clock


@pytest.fixture
def vault(daemon: Daemon, home: Home) -> Path:
    return registered_vault(home, NOTES)


def _body(result: CallToolResult) -> dict[str, Any]:
    item = result.content[0]
    assert item.type == "text"
    body = json.loads(item.text)
    assert isinstance(body, dict)
    return body


def _steady(node: Any) -> Any:
    """``node`` without the values a second call a moment later may change (times, counters)."""
    if isinstance(node, dict):
        return {k: _steady(v) for k, v in node.items() if not any(word in k for word in VOLATILE)}
    if isinstance(node, list):
        return [_steady(v) for v in node]
    return node


async def test_each_read_selector_reaches_its_method(vault: Path, home: Home) -> None:
    """Every read member answers through its family what its own name answers, and a success is
    its method's result type (decoded and encoded back, no key more or less)."""
    reads = [METHODS[m] for f in FAMILIES for m in f.methods if METHODS[m].read_only]
    assert len(reads) >= 20
    failures = []
    refused = set()
    async with agent(home) as client:
        ok(await client.call_tool("log_append", {"event": {"type": "LEARN", "source": "test", "note": "a note for the grep"}}))
        for spec in reads:
            name, selector = CATALOGUE.call_of(spec)
            args = READ_ARGS.get(spec.name, {})
            family = await client.call_tool(name, {**selector, **args})
            own = await client.call_tool(spec.tool_name, args)
            if _steady(_body(family)) != _steady(_body(own)) or family.is_error != own.is_error:
                failures.append(f"{spec.name}: {_body(family)} != {_body(own)}")
                continue
            if family.is_error:
                refused.add(spec.name)
            else:
                typed = msgspec.json.decode(json.dumps(_body(family)), type=spec.result)
                if _steady(msgspec.to_builtins(typed)) != _steady(_body(family)):
                    failures.append(f"{spec.name}: not its result type: {_body(family)}")
    assert not failures, "\n".join(failures)
    assert refused == REFUSED, "every other member answered a result of its own type"


async def test_each_write_selector_reaches_its_method(vault: Path, home: Home) -> None:
    """Every write member's receipt names its own method; the family's steps work in sequence."""
    async with agent(home) as client:
        appended = ok(await client.call_tool("daily_write", {"action": "append", "markdown": "- one", "date": "2026-01-05"}))
        prepended = ok(await client.call_tool("daily_write", {"action": "prepend", "markdown": "- zero", "date": "2026-01-05"}))
        assert (appended["op"], prepended["op"]) == ("daily.append", "daily.prepend")
        assert (appended["outcome"], prepended["outcome"]) == ("applied", "applied")
        body = ok(await client.call_tool("daily_read", {"date": "2026-01-05"}))["note"]["body"]
        assert body.index("- zero") < body.index("- one"), body

        work = ok(await client.call_tool("work", {"action": "start", "what": "tidy the notes", "notes": ["Beta.md"]}))
        ok(await client.call_tool("work", {"action": "progress", "id": work["id"], "line": "half way"}))
        done = ok(await client.call_tool("work", {"action": "finish", "id": work["id"]}))
        assert done["id"] == work["id"] and done["state"] != work["state"], done

        made = ok(await client.call_tool("checkout", {"action": "make", "notes": ["Gamma"], "name": "to drop"}))
        dropped = ok(await client.call_tool("checkout", {"action": "cancel", "id": made["id"]}))
        assert dropped["id"] == made["id"] and dropped["state"] == "cancelled", dropped
        other = ok(await client.call_tool("checkout", {"action": "make", "notes": ["Gamma"]}))
        back = ok(await client.call_tool("checkout", {"action": "return", "id": other["id"], "reason": "nothing changed"}))
        assert back["id"] == other["id"], back

        linked = ok(await client.call_tool("note_relate", {"action": "link", "source": "Gamma", "target": "Page", "relation": "supports"}))
        superseded = ok(await client.call_tool("note_relate", {"action": "supersede", "old": "Beta", "new": "Gamma"}))
        assert (linked["op"], superseded["op"]) == ("note.link", "note.supersede")

        captured = ok(await client.call_tool("source_capture", {"items": [{"text": "first\n", "origin": "https://a.example/1"}]}))
        source = captured["detail"]["sources"][0]["note"]
        added = ok(
            await client.call_tool("claim_write", {"action": "add", "page": "Page", "claim": "Journals recover", "support": [source]})
        )
        updated = ok(await client.call_tool("claim_write", {"action": "update", "target": added["detail"]["claim"], "risk": "medium"}))
        assert (added["op"], updated["op"]) == ("claim.add", "claim.update")

        undone = ok(await client.call_tool("op_reverse", {"action": "undo", "op_id": prepended["op_id"], "dry_run": True}))
        assert undone["op"] == "op.undo" and undone["outcome"] == "dry_run", undone
        reverted = await client.call_tool("op_reverse", {"action": "revert", "op_id": appended["op_id"]})
        own = await client.call_tool("op_revert", {"op_id": appended["op_id"]})
        assert _body(reverted) == _body(own)


async def test_an_argument_of_another_member_is_invalid_and_names_the_members_own(vault: Path, home: Home) -> None:
    async with agent(home) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("graph", {"view": "path", "source": "Gamma", "target": "Alpha", "hops": 2})
        assert caught.value.error.code == -32602
        message = caught.value.error.message
        assert "hops" in message and "source, target" in message, message
        with pytest.raises(MCPError) as unnamed:
            await client.call_tool("graph", {"target": "Alpha"})
        assert unnamed.value.error.code == -32602 and "neighbors, path" in unnamed.value.error.message
        refused = tool_error(await client.call_tool("graph", {"view": "nav", "target": "Nowhere at all"}))
        assert refused["code"] == "NOT_FOUND", refused  # a right call the daemon refuses is a tool error, as ever


async def test_naming_one_member_offers_the_whole_family(vault: Path, home: Home) -> None:
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "vaultctl.main", "mcp", "--tools", "graph_path"], env=home.env, cwd=str(REPO)
    )
    async with Client(server, read_timeout_seconds=60) as client:
        tools = (await client.list_tools()).tools
        assert [t.name for t in tools] == ["graph"]
        assert tools[0].input_schema["properties"]["view"]["enum"] == ["neighbors", "path", "nav", "hubs", "mocs", "communities"]
        hubs = ok(await client.call_tool("graph", {"view": "hubs", "limit": 2}))
        assert len(hubs["hubs"]) <= 2, hubs
        path = ok(await client.call_tool("graph_path", {"source": "Gamma", "target": "Alpha"}))
        assert path == ok(await client.call_tool("graph", {"view": "path", "source": "Gamma", "target": "Alpha"}))
