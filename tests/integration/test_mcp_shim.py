"""`vaultctl mcp` driven by the official MCP SDK client, in both session models, against a real daemon.

The tool list is generated from the method table, so these tests iterate over the table too:
a method added with ``mcp=True`` is checked (and, when it is read-only and needs no arguments,
smoke-called) with no change here.
"""

from __future__ import annotations

import json
import sys
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TextIO

import jsonschema  # type: ignore[import-untyped]
import msgspec
import msgspec.inspect
import pytest
from mcp.client import Client, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPDeprecationWarning

from protocol.schema import gist
from protocol.table import METHODS, MethodSpec
from tests.support.harness import REPO, Daemon, Home, register
from tests.support.mcp_results import tool_error
from vaultctl.mcp.families import family_of
from vaultctl.mcp.tools import ToolCatalogue, as_called
from vaultctl.mcp.versions import HANDSHAKE_VERSIONS, LATEST_HANDSHAKE, STATELESS_VERSIONS

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator
    from pathlib import Path

    from mcp.types import CallToolResult, Tool

MCP_SPECS = [spec for spec in METHODS.values() if spec.mcp]
CATALOGUE = ToolCatalogue()
SHIM = [sys.executable, "-m", "vaultctl.main", "mcp"]


def _server(home: Home) -> StdioServerParameters:
    return StdioServerParameters(command=SHIM[0], args=SHIM[1:], env=home.env, cwd=str(REPO))


@asynccontextmanager
async def _client(home: Home, mode: str) -> AsyncIterator[Client]:
    """The SDK's high-level client: ``mode="legacy"`` runs the initialize handshake, ``mode="auto"``
    probes ``server/discover`` first and adopts the stateless revision when the server offers it."""
    async with Client(_server(home), mode=mode, read_timeout_seconds=60) as client:
        yield client


@pytest.fixture
def errlog(home: Home) -> Iterator[TextIO]:
    with open(home.root / "mcp-session.err", "w") as fh:
        yield fh


@pytest.fixture
def registered(daemon: Daemon, sample_vault: Path) -> str:
    """The sample vault registered as ``sample`` (personal, so it is the default vault)."""
    register(daemon.home, sample_vault, "sample")
    return "sample"


ONE_OF_REQUIRED = {"base.query": "a Base as path or as yaml"}
"""Methods whose params need one of several optional fields, which a schema's required list cannot say."""
MAX_INSTRUCTIONS_BYTES = 2048  #: the full toolset's instructions: the preamble and the shared arguments' descriptions


def _needs_no_arguments(spec: MethodSpec[Any, Any]) -> bool:
    if spec.name in ONE_OF_REQUIRED:
        return False
    info = msgspec.inspect.type_info(spec.params)
    assert isinstance(info, msgspec.inspect.StructType)
    return not any(f.required for f in info.fields)


def _check_tool_list(tools: list[Tool]) -> None:
    assert [t.name for t in tools] == CATALOGUE.names, "every mcp method, in table order, a family's once"
    assert [s for t in tools for s in CATALOGUE.methods_of(t.name)] == sorted(MCP_SPECS, key=_by_family_order)
    for tool in tools:
        specs = CATALOGUE.methods_of(tool.name)
        # each member's gist, a method it names said as an agent calls it (``as_called``)
        assert tool.description and all(as_called(gist(s.summary)) in tool.description for s in specs)
        if len(specs) == 1:
            assert tool.description.startswith(as_called(gist(specs[0].summary)))
        if any(s.two_step for s in specs):  # how to confirm is said once, in the instructions
            assert "Two-step." in tool.description
        spec = specs[0]
        assert {(s.read_only, s.destructive) for s in specs} == {(spec.read_only, spec.destructive)}
        schema = tool.input_schema
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and "additionalProperties" not in schema, "the daemon refuses unknown keys"
        assert "$ref" not in schema, "the root is inlined"
        assert "log" not in schema["properties"], "the log override is the CLI's"
        assert "fresh" not in schema["properties"], "every agent call is fresh"
        assert '"title": "' not in json.dumps(schema), "no class names such as Proposed[NoDetail]"
        assert tool.output_schema is None and tool.title is None, "what no host shows a model is not sent"
        ann = tool.annotations
        assert ann is not None
        # A hint is left out where the spec's default and every host read it alike (false for
        # readOnlyHint and idempotentHint); destructiveHint and openWorldHint are always said.
        assert (bool(ann.read_only_hint), ann.open_world_hint) == (spec.read_only, False)
        if spec.read_only:  # the other two hints are meaningless for a read (MCP ToolAnnotations)
            assert (ann.read_only_hint, ann.destructive_hint, ann.idempotent_hint) == (True, None, None)
        else:
            idempotent = all(s.idempotent for s in specs)
            assert (ann.read_only_hint, ann.destructive_hint, bool(ann.idempotent_hint)) == (None, spec.destructive, idempotent)


def _by_family_order(spec: MethodSpec[Any, Any]) -> int:
    """Where ``spec`` is listed: with its family, where the family's first member is in the table."""
    order = [s.name for s in MCP_SPECS]
    family = family_of(spec.name)
    if family is None:
        return order.index(spec.name) * 100
    first = min(order.index(m) for m in family.methods)
    return first * 100 + family.methods.index(spec.name)


def _ok(result: CallToolResult, tool: str) -> dict[str, Any]:
    assert not result.is_error, f"{tool}: {result.content}"
    assert isinstance(result.structured_content, dict)
    text = result.content[0]
    assert text.type == "text" and text.text.startswith("{")
    return result.structured_content


async def test_handshake_mode_initializes_lists_and_calls(daemon: Daemon, home: Home) -> None:
    async with _client(home, "legacy") as client:
        assert client.protocol_version == LATEST_HANDSHAKE
        assert client.session.initialize_result is not None
        assert client.server_info is not None and client.server_info.name == "vaultd"
        assert client.instructions and len(client.instructions.encode()) < MAX_INSTRUCTIONS_BYTES
        assert "confirm=true" in client.instructions and "fingerprint" in client.instructions
        assert client.server_capabilities.tools is not None
        tools = (await client.list_tools()).tools
        _check_tool_list(tools)
        status = _ok(await client.call_tool("daemon_status", {}), "daemon_status")
        assert status["pid"] == daemon.proc.pid
        assert _ok(await client.call_tool("vault_list", {}), "vault_list") == {"vaults": []}
        with pytest.warns(MCPDeprecationWarning, match="ping"):  # gone in 2026-07-28, still served here
            await client.send_ping()


async def test_auto_mode_discovers_the_stateless_revision(daemon: Daemon, home: Home) -> None:
    async with _client(home, "auto") as client:
        assert client.protocol_version == STATELESS_VERSIONS[-1]
        discovered = client.session.discover_result
        assert discovered is not None and client.session.initialize_result is None
        assert discovered.supported_versions == list(STATELESS_VERSIONS)
        assert client.server_info is not None and client.server_info.name == "vaultd"  # the _meta stamp
        assert client.instructions and len(client.instructions.encode()) < MAX_INSTRUCTIONS_BYTES
        listing = await client.list_tools()
        assert listing.ttl_ms and listing.ttl_ms > 0 and listing.cache_scope == "private"
        _check_tool_list(listing.tools)
        status = _ok(await client.call_tool("daemon_status", {}), "daemon_status")
        assert status["pid"] == daemon.proc.pid


async def test_a_raw_client_session_over_stdio_client(daemon: Daemon, home: Home, errlog: TextIO) -> None:
    """The lower-level pieces a host might use directly: stdio_client plus ClientSession."""
    async with stdio_client(_server(home), errlog=errlog) as (read, write), ClientSession(read, write, read_timeout_seconds=60) as session:
        init = await session.initialize()
        assert init.protocol_version in HANDSHAKE_VERSIONS
        result = await session.call_tool("vault_list", {})
        assert result.structured_content == {"vaults": []}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_vault_argument_is_an_enum_of_registered_vaults(registered: str, home: Home, mode: str) -> None:
    async with _client(home, mode) as client:
        tools = (await client.list_tools()).tools
        with_vault = [t for t in tools if "vault" in (t.input_schema.get("properties") or {})]
        assert with_vault
        for tool in with_vault:
            prop = tool.input_schema["properties"]["vault"]
            assert prop["enum"] == [registered]
            required = tool.input_schema.get("required") or []
            assert prop.get("default") == (None if "vault" in required else registered)
        listed = _ok(await client.call_tool("vault_list", {}), "vault_list")
        assert [v["entry"]["id"] for v in listed["vaults"]] == [registered]


async def test_every_read_only_tool_without_arguments_answers(registered: str, home: Home) -> None:
    """A smoke call per tool, in one session; each structuredContent must decode into the method's
    result type and encode back to itself, so a result that drifts from its Struct fails here."""
    smoke = [s for s in MCP_SPECS if s.read_only and _needs_no_arguments(s)]
    assert {"daemon_status", "vault_list"} <= {s.tool_name for s in smoke}
    failures = []
    async with _client(home, "auto") as client:
        for spec in smoke:
            name, selector = CATALOGUE.call_of(spec)
            result = await client.call_tool(name, selector)
            if result.is_error or not isinstance(result.structured_content, dict):
                failures.append(f"{spec.tool_name}: {result.content}")
                continue
            try:
                typed = msgspec.convert(result.structured_content, spec.result)
            except msgspec.ValidationError as exc:
                failures.append(f"{spec.tool_name}: {exc}")
                continue
            if msgspec.to_builtins(typed) != result.structured_content:
                failures.append(f"{spec.tool_name}: keys its result type does not declare")
    assert not failures, "\n".join(failures)


async def test_a_daemon_refusal_is_a_tool_error_with_the_stable_code(registered: str, home: Home) -> None:
    async with _client(home, "auto") as client:
        result = await client.call_tool("note_read", {"target": "surely-no-such-note-anywhere"})
        assert tool_error(result)["code"] == "NOT_FOUND"
        assert "NOT_FOUND" in result.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_reads_and_writes_through_mcp(registered: str, home: Home, sample_vault: Path, mode: str, cli: Any) -> None:
    """search, read, create, patch, then move and delete as two calls each (preview, confirm), which the
    default agent policy turns into proposals that a person applies from the CLI."""
    async with _client(home, mode) as client:
        hits = _ok(await client.call_tool("note_search", {"query": "alpha plan"}), "note_search")["hits"]
        assert hits[0]["path"] == "projects/alpha/Alpha Plan.md"
        read = _ok(await client.call_tool("note_read", {"target": "Alpha Plan", "section": "Goals"}), "note_read")
        assert read["body"].startswith("## Goals")

        made = _ok(await client.call_tool("note_create", {"path": f"agents/{mode}", "body": "# From an agent\n"}), "note_create")
        assert made["outcome"] == "applied" and made["log"]["line"].endswith("(vaultd:agent)")
        path = f"agents/{mode}.md"
        assert (sample_vault / path).read_text().endswith("# From an agent\n")
        sha = made["changes"][0]["after_sha"]
        patched = _ok(
            await client.call_tool(
                "note_patch", {"target": path, "old": "From an agent", "new": "Edited by an agent", "expected_sha": sha}
            ),
            "note_patch",
        )
        assert patched["outcome"] == "applied"
        stale = await client.call_tool("note_patch", {"target": path, "old": "Edited", "new": "x", "expected_sha": sha})
        assert tool_error(stale)["code"] == "CONFLICT"

        preview = _ok(await client.call_tool("note_move", {"target": path, "to": f"agents/moved-{mode}"}), "note_move")
        assert preview["outcome"] == "preview" and (sample_vault / path).exists()
        moved = _ok(
            await client.call_tool(
                "note_move", {"target": path, "to": f"agents/moved-{mode}", "confirm": True, "fingerprint": preview["fingerprint"]}
            ),
            "note_move",
        )
        # A personal vault's default agent policy holds a move for a person: the confirm proposes it.
        assert moved["outcome"] == "proposed" and (sample_vault / path).exists()
        applied = cli("proposals", "apply", moved["proposal"], "--json")
        assert applied.code == 0, applied.err
        assert (
            applied.json()["outcome"] == "applied"
            and (sample_vault / f"agents/moved-{mode}.md").exists()
            and not (sample_vault / path).exists()
        )

        gone = _ok(await client.call_tool("note_delete", {"target": f"agents/moved-{mode}.md"}), "note_delete")
        assert gone["outcome"] == "preview"
        done = _ok(
            await client.call_tool(
                "note_delete", {"target": f"agents/moved-{mode}.md", "confirm": True, "fingerprint": gone["fingerprint"]}
            ),
            "note_delete",
        )
        assert done["outcome"] == "proposed" and (sample_vault / f"agents/moved-{mode}.md").exists()
        applied = cli("proposals", "apply", done["proposal"], "--json")
        assert applied.code == 0, applied.err
        assert applied.json()["outcome"] == "applied" and not (sample_vault / f"agents/moved-{mode}.md").exists()
        assert (sample_vault / ".trash" / f"agents/moved-{mode}.md").exists()

        bad = await client.call_tool("note_create", {"path": "../escape"})
        assert tool_error(bad)["code"] == "VALIDATION"


async def test_a_cli_only_vault_refuses_agent_writes(daemon: Daemon, home: Home, tmp_path: Path, cli: Any) -> None:
    (tmp_path / "v").mkdir()
    assert cli("vault", "add", "private", str(tmp_path / "v"), "--write", "cli").code == 0
    async with _client(home, "auto") as client:
        refused = await client.call_tool("note_create", {"vault": "private", "path": "x"})
        assert tool_error(refused)["code"] == "POLICY"
        assert _ok(await client.call_tool("note_list", {"vault": "private"}), "note_list")["total"] == 0
    assert not (tmp_path / "v" / "x.md").exists()


async def test_every_agent_read_sees_the_changes_made_before_it(registered: str, home: Home, sample_vault: Path) -> None:
    """No tool offers ``fresh``: the shim asks it of every call, so a burst of edits a person saves
    just before the agent's call is all in its answer (without it, the watcher's batch may still
    be on its way). A call that sends ``fresh`` itself, as an entry of an earlier release may, is
    served alike."""
    async with _client(home, "legacy") as client:
        before = _ok(await client.call_tool("vault_stats", {}), "vault_stats")["notes"]
        for round_ in range(3):
            burst = [sample_vault / "burst" / f"r{round_} n{i:03d}.md" for i in range(200)]
            burst[0].parent.mkdir(exist_ok=True)
            for path in burst:
                path.write_text(f"# {path.stem}\n\nburstword{round_}\n")
            stats = _ok(await client.call_tool("vault_stats", {}), "vault_stats")
            assert stats["notes"] == before + 200 * (round_ + 1)
            last = _ok(await client.call_tool("note_read", {"target": f"burst/r{round_} n199"}), "note_read")
            assert f"burstword{round_}" in last["body"]
        explicit = _ok(await client.call_tool("note_list", {"folder": "burst", "fresh": True, "limit": 1}), "note_list")
        assert len(explicit["notes"]) == 1
