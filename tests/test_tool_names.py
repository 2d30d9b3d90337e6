"""Every MCP tool that vaultd's messages and the agent guides name is one ``tools/list`` offers.

A tool family (:mod:`vaultctl.mcp.families`) lists one tool for several methods; a call by a
member's own tool name (``log_tail``) is still answered, but an agent never sees that name listed,
so a message or a guide that tells it to call one sends it looking for a tool it does not have.
The hidden names are derived from the families, so a family declared later is covered at once.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from protocol.methods.gate import AgentPolicy
from protocol.table import METHODS
from vaultctl.mcp.families import FAMILIES
from vaultctl.mcp.tools import ToolCatalogue

REPO = Path(__file__).resolve().parents[1]
SOURCES = ("vaultd", "vaultctl", "protocol")
GUIDES = ("docs/mcp.md", "docs/agents.md")
_NAME = re.compile(r"(?<![\w.])[a-z]+(?:_[a-z]+)+(?![\w])")

LISTED = set(ToolCatalogue().names)
HIDDEN = {METHODS[m].tool_name for f in FAMILIES for m in f.methods} - LISTED
POLICY_CLASSES = set(AgentPolicy.__struct_fields__)
"""Words of the agent policy (``file_read``: reading a file that is not a note), which a message
may name as the policy does ("its policy says file_read: refuse") though a member's tool has the
same spelling."""


def _hidden_in(text: str) -> list[str]:
    return [w for w in _NAME.findall(text) if w in HIDDEN and w not in POLICY_CLASSES]


def _messages(path: Path) -> list[tuple[int, str]]:
    """The string literals of a module that are sentences (a space in them), and the constant
    parts of its f-strings; docstrings left out (they are for the code's readers)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and " " in node.value and id(node) not in docstrings
    ]


def test_the_families_hide_member_names_and_the_scan_sees_tool_names() -> None:
    assert HIDDEN, "the families hide no member's name: nothing to check"
    assert {"log_tail", "work_finish", "graph_path"} <= HIDDEN
    assert {"log_read", "work", "work_cancel", "note_read"} <= LISTED
    assert _hidden_in("read its lines with log_tail or log_grep") == ["log_tail", "log_grep"]
    assert _hidden_in("read its lines with log_read (view tail or grep); see log.tail") == []
    assert _hidden_in("(its policy says file_read: refuse)") == []


@pytest.mark.parametrize("top", SOURCES)
def test_no_message_names_a_tool_that_tools_list_does_not_offer(top: str) -> None:
    found = [
        f"{path.relative_to(REPO)}:{line}: {name} in {text!r}"
        for path in sorted((REPO / top).rglob("*.py"))
        for line, text in _messages(path)
        for name in _hidden_in(text)
    ]
    assert not found, "name the family and its selector instead:\n" + "\n".join(found)


@pytest.mark.parametrize("guide", GUIDES)
def test_the_agent_guides_name_only_tools_that_tools_list_offers(guide: str) -> None:
    lines = (REPO / guide).read_text(encoding="utf-8").splitlines()
    found = [f"{guide}:{n}: {name}" for n, line in enumerate(lines, 1) for name in _hidden_in(line)]
    assert not found, "name the family and its selector instead:\n" + "\n".join(found)
    assert any(w in LISTED for line in lines for w in _NAME.findall(line)), f"{guide} names no listed tool: the scan is blind"


def test_the_protocol_reference_names_each_methods_tool_as_tools_list_offers_it() -> None:
    lines = [line for line in (REPO / "docs/reference/methods.md").read_text(encoding="utf-8").splitlines() if "MCP tool:" in line]
    assert len(lines) == len(METHODS), "a method without its MCP tool line"
    found = [name for line in lines for name in _hidden_in(line)]
    assert not found, found
    assert "MCP tool: `status` (view `daemon`)." in "\n".join(lines)
