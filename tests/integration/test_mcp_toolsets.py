"""``vaultctl mcp --tools``: which tools one shim offers, through the official SDK client and raw.

The sets are derived from the method table (``read``, ``write``, ``all``) or named once (``core``),
so these tests hold for tools added later: every MCP method is in exactly one of ``read`` and
``write``, and any of them is reachable by its name.
"""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from protocol.table import METHODS
from tests.integration.test_mcp_raw import ShimProcess
from tests.support.harness import REPO, Daemon, Home
from vaultctl.mcp.families import family_of
from vaultctl.mcp.tools import ToolCatalogue
from vaultctl.mcp.toolsets import CORE, resolve

if TYPE_CHECKING:
    from pathlib import Path

MCP_NAMES = [s.tool_name for s in METHODS.values() if s.mcp]
TOOLS = {s.tool_name: s for s in METHODS.values() if s.mcp}


def _listed(choice: str) -> list[str]:
    """The tool names ``tools/list`` shows for ``choice``: a family's once, where its first member is."""
    return ToolCatalogue(resolve(choice)).names


async def _listed_by_shim(home: Home, *args: str) -> list[str]:
    server = StdioServerParameters(command=sys.executable, args=["-m", "vaultctl.main", "mcp", *args], env=home.env, cwd=str(REPO))
    async with Client(server, read_timeout_seconds=60) as client:
        return [t.name for t in (await client.list_tools()).tools]


@pytest.mark.parametrize(
    ("args", "choice"),
    [((), "all"), (("--tools", "all"), "all"), (("--tools", "core"), "core"), (("--tools=read",), "read"), (("--tools", "write"), "write")],
)
async def test_each_toolset_lists_its_tools_in_table_order(daemon: Daemon, home: Home, args: tuple[str, ...], choice: str) -> None:
    assert await _listed_by_shim(home, *args) == _listed(choice)


async def test_a_member_named_in_tools_offers_its_family(daemon: Daemon, home: Home) -> None:
    assert await _listed_by_shim(home, "--tools", "graph_path,note_read") == ["note_read", "graph"]
    assert await _listed_by_shim(home, "--tools", "note_read,graph") == ["note_read", "graph"]


def test_read_and_write_list_every_tool_once_and_core_its_families_whole() -> None:
    every = _listed("all")
    assert set(_listed("read")).isdisjoint(_listed("write")) and sorted(_listed("read") + _listed("write")) == sorted(every)
    assert "daily_write" in _listed("core"), "a family a core tool is in comes whole"
    assert not set(every) & {s.tool_name for s in METHODS.values() if s.mcp and family_of(s.name)}, "a member is listed as its family"


def test_read_and_write_split_every_tool_and_core_names_only_real_tools() -> None:
    read = {s.tool_name for s in resolve("read")}
    write = {s.tool_name for s in resolve("write")}
    assert not read & write and read | write == set(MCP_NAMES)
    assert all(not s.read_only for s in resolve("write")) and all(s.read_only for s in resolve("read"))
    assert {s.tool_name for s in resolve("core")} <= set(MCP_NAMES)
    assert {"note_search", "note_read", "note_create"} <= {s.tool_name for s in resolve("core")}
    chosen = [s.tool_name for s in resolve("core,graph_path")]
    assert chosen == [n for n in MCP_NAMES if n in chosen], "in table order, each once"
    assert set(CORE) <= set(chosen) and {"graph_neighbors", "graph_path", "daily_prepend"} <= set(chosen)


async def test_a_tool_outside_the_set_is_reachable_by_name_only(daemon: Daemon, home: Home, sample_vault: Path, cli: Any) -> None:
    """A tool the set leaves out is refused as unknown (the toolset is what the user chose to offer);
    naming it in ``--tools`` offers it."""
    assert cli("vault", "add", "sample", str(sample_vault)).code == 0
    outside = next(n for n in MCP_NAMES if n not in CORE and TOOLS[n].read_only and n != "vault_list")
    core = ShimProcess(home, args=["--tools", "core"])
    named = ShimProcess(home, args=["--tools", f"core,{outside}"])
    try:
        core.initialize()
        refused = core.call(outside, {})
        assert refused["error"]["code"] == -32602 and outside in refused["error"]["message"]
        assert "--tools" in refused["error"]["message"]
        named.initialize()
        served = named.call(outside, {})["result"]
        assert served["isError"] is False, served
    finally:
        assert core.close() == 0 and named.close() == 0


@pytest.mark.parametrize("value", ["nonsense", "core,nonsense", ",", "note.read"])
def test_an_unknown_toolset_fails_at_once_and_says_what_there_is(home: Home, value: str) -> None:
    """A host shows a server that exits as failed, with its stderr: better than an agent quietly
    missing the tools its user meant to give it."""
    done = subprocess.run(
        [sys.executable, "-m", "vaultctl.main", "mcp", "--tools", value],
        env=home.env,
        cwd=REPO,
        input=b"",
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == b""
    err = done.stderr.decode()
    assert "core, read, write, all" in err and "note_search" in err
