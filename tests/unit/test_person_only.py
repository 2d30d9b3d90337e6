"""An argument its params mark as a person's only (``PERSON_ONLY``) is offered by no MCP tool and
refused in an agent's call as any unknown argument, in every method that has one; the CLI keeps it."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from protocol.methods.memory import MemoryCandidatesParams
from protocol.schema import field_help, person_only_fields
from protocol.table import METHODS
from vaultctl.mcp.errors import McpError, RpcCode
from vaultctl.mcp.tools import ToolCatalogue

CATALOGUE = ToolCatalogue()
MARKED = {s.name: person_only_fields(s.params) for s in METHODS.values() if s.mcp and person_only_fields(s.params)}


def test_the_memory_paths_are_marked() -> None:
    assert MARKED == {"memory.candidates": ("path",), "memory.import": ("path",)}


@pytest.mark.parametrize("method", sorted(MARKED))
def test_a_person_only_argument_is_in_no_tool_schema_and_refused_as_unknown(method: str) -> None:
    spec = METHODS[method]
    tool, chosen = CATALOGUE.call_of(spec)
    definition = next(t for t in CATALOGUE.definitions(None, structured=True) if t["name"] == tool)
    required = {name: "mem-0123456789abcdef" for name in definition["inputSchema"].get("required", ()) if name not in chosen}
    CATALOGUE.decode(tool, msgspec.Raw(msgspec.json.encode({**chosen, **required})))  # the call without it is fine
    for name in MARKED[method]:
        assert name not in definition["inputSchema"]["properties"], definition
        arguments: dict[str, Any] = {**chosen, **required, name: "/somewhere/else"}
        with pytest.raises(McpError) as caught:
            CATALOGUE.decode(tool, msgspec.Raw(msgspec.json.encode(arguments)))
        assert caught.value.code is RpcCode.INVALID_PARAMS
        assert caught.value.data["issues"][0]["path"] == f"$.arguments.{name}"


def test_the_cli_keeps_its_help() -> None:
    assert "a person's call only" in field_help(MemoryCandidatesParams, "path")
