"""Tool families: one MCP tool for several methods, derived from their specs (no daemon needed).

The generator must refuse what would make a family lie (members that read and write, or destroy
and do not; one argument name for two things), list each family once where its members were, and
decode a call to the member its selector names, refusing an argument that member does not take.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import pytest

from protocol.methods.reads import IssuesParams
from protocol.table import METHODS
from vaultctl.mcp.budget import fit
from vaultctl.mcp.errors import McpError, RpcCode
from vaultctl.mcp.families import FAMILIES, Family, FamilyConflict, family_of, family_schema
from vaultctl.mcp.tools import ToolCatalogue, _family_definition, _input_schema
from vaultctl.mcp.toolsets import resolve

CATALOGUE = ToolCatalogue()
MCP_SPECS = {s.name: s for s in METHODS.values() if s.mcp}


def _raw(arguments: dict[str, Any]) -> msgspec.Raw:
    return msgspec.Raw(msgspec.json.encode(arguments))


def _definition(name: str) -> dict[str, Any]:
    return next(t for t in CATALOGUE.definitions(None, structured=True) if t["name"] == name)


def _refused(name: str, arguments: dict[str, Any]) -> McpError:
    with pytest.raises(McpError) as caught:
        CATALOGUE.decode(name, _raw(arguments))
    assert caught.value.code is RpcCode.INVALID_PARAMS
    assert caught.value.data["code"] == "INVALID_PARAMS"
    return caught.value


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_every_family_is_of_mcp_methods_with_one_key_each_and_hints_true_of_all(family: Family) -> None:
    specs = [MCP_SPECS[m] for m in family.methods]  # KeyError: a member that is no MCP method
    keys = [family.key(s) for s in specs]
    assert len(set(keys)) == len(keys), keys
    assert len({(s.read_only, s.destructive) for s in specs}) == 1
    hints = _definition(family.name)["annotations"]
    assert hints.get("readOnlyHint", False) is specs[0].read_only
    if not specs[0].read_only:
        assert hints["destructiveHint"] is specs[0].destructive
        assert hints.get("idempotentHint", False) is all(s.idempotent for s in specs)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_a_family_schema_is_its_members_arguments_and_a_required_selector(family: Family) -> None:
    schema = _definition(family.name)["inputSchema"]
    specs = [MCP_SPECS[m] for m in family.methods]
    members = {family.key(s): _input_schema(s, CATALOGUE.shared) for s in specs}
    assert schema["properties"][family.selector] == {"enum": list(members)}
    assert schema["required"][0] == family.selector
    union = {name for m in members.values() for name in m.get("properties", {})}
    assert set(schema["properties"]) == union | {family.selector}
    every = set.intersection(*(set(m.get("required", ())) for m in members.values()))
    assert set(schema["required"]) == every | {family.selector}
    description = _definition(family.name)["description"]
    assert description.startswith(family.line) and all(f"{key}(" in description for key in members)


@pytest.mark.parametrize("family", [f for f in FAMILIES if f.same], ids=lambda f: f.name)
def test_every_declared_same_argument_really_differs_across_members(family: Family) -> None:
    """A stale ``same`` entry would give an argument a family wording it no longer needs."""
    members = [_input_schema(MCP_SPECS[m], CATALOGUE.shared) for m in family.methods]
    for name in family.same:
        variants = {repr(m["properties"][name]) for m in members if name in m.get("properties", {})}
        assert len(variants) > 1, (family.name, name)


@pytest.mark.parametrize(
    ("methods", "same", "words"),
    [
        (("graph.neighbors", "spec.graph"), {"direction": "Which way."}, "different types"),  # two enums: declaring is not enough
        (("graph.neighbors", "graph.path"), {}, "described differently"),  # `target`: where a walk starts, where a path ends
        (("wikify.suggest", "wikify.propose"), {}, "all read, or all write alike"),
        (("work.start", "work.cancel"), {}, "all read, or all write alike"),  # cancel destroys, start does not
        (("base.list", "base.query"), {}, "the family's selector"),  # base.query has a `view` of its own
    ],
)
def test_the_generator_refuses_a_family_that_would_merge_two_meanings(methods: tuple[str, ...], same: dict[str, str], words: str) -> None:
    family = Family("trial", "view", "A trial.", methods, same=same)
    specs = [MCP_SPECS[m] for m in methods]
    with pytest.raises(FamilyConflict, match=words):
        _family_definition(family, specs, ToolCatalogue(specs).shared)


def test_a_declared_wording_merges_an_argument_the_members_describe_differently() -> None:
    family = Family("trial", "view", "A trial.", ("graph.neighbors", "graph.path"), same={"target": "A note.", "direction": "Which way."})
    specs = [MCP_SPECS[m] for m in family.methods]
    schema = family_schema(family, {family.key(s): _input_schema(s, {}) for s in specs})
    assert schema["properties"]["target"] == {"description": "A note.", "type": "string"}
    assert schema["properties"]["direction"]["description"] == "Which way."
    assert schema["required"] == ["view", "target"]  # both members require it; source only path does


def test_the_listing_names_each_family_once_where_its_first_member_was() -> None:
    names = CATALOGUE.names
    assert len(names) == len(set(names))
    expected: list[str] = []
    for spec in MCP_SPECS.values():
        family = family_of(spec.name)
        name = family.name if family is not None else spec.tool_name
        if name not in expected:
            expected.append(name)
    assert names == expected
    assert not {s.tool_name for s in MCP_SPECS.values() if family_of(s.name)} & set(names)


def test_a_family_call_reaches_the_member_its_selector_names() -> None:
    for family in FAMILIES:
        for method in family.methods:
            spec = MCP_SPECS[method]
            name, fixed = CATALOGUE.call_of(spec)
            assert (name, fixed) == (family.name, {family.selector: family.key(spec)})
            required = {f.encode_name: _value(method, f.encode_name, f.type) for f in msgspec.structs.fields(spec.params) if f.required}
            call = CATALOGUE.decode(name, _raw({**fixed, **required}))
            assert call.spec is spec and call.carry == fixed
            assert isinstance(call.params, spec.params)


_IDS = {"proposal.show": "p20260101000000-0000abcd", "work": "w20260101000000-0000abcd", "checkout": "c20260101000000-0000abcd"}


def _value(method: str, name: str, tp: Any) -> Any:
    """A value of a required argument that its own checks accept."""
    if name == "op_id":
        return "20260101T000000-0000abcd"
    if name == "id":
        return _IDS.get(method) or _IDS.get(method.split(".")[0], "goal")
    info = msgspec.inspect.type_info(tp)
    while isinstance(info, msgspec.inspect.Metadata):
        info = info.type
    return ["Alpha"] if isinstance(info, msgspec.inspect.ListType) else "Alpha"


def test_a_member_is_also_reached_by_its_own_tool_name() -> None:
    call = CATALOGUE.decode("graph_path", _raw({"source": "A", "target": "B"}))
    assert call.spec is METHODS["graph.path"] and call.carry == {}


def test_an_argument_of_another_member_is_refused_naming_the_members_arguments() -> None:
    refused = _refused("graph", {"view": "path", "source": "A", "target": "B", "hops": 2})
    assert "hops" in refused.message and "path" in refused.message
    assert "source, target" in refused.message, refused.message  # the arguments path does take
    assert refused.data["issues"][0]["path"] == "$.arguments.hops"


@pytest.mark.parametrize("arguments", [{}, {"view": "nowhere"}, {"view": 3}, {"view": None}])
def test_a_family_call_needs_a_member(arguments: dict[str, Any]) -> None:
    refused = _refused("graph", arguments)
    assert "neighbors, path" in refused.message
    assert refused.data["issues"][0]["path"] == "$.arguments.view"


def test_a_members_own_checks_still_name_the_field() -> None:
    refused = _refused("graph", {"view": "hubs", "limit": "ten"})
    assert refused.data["issues"][0]["path"] == "$.arguments.limit" and "graph (view hubs)" in refused.message


def test_a_hidden_or_preview_only_argument_is_refused_in_a_family_too() -> None:
    assert "log" not in _definition("daily_write")["inputSchema"]["properties"]
    _refused("daily_write", {"action": "append", "markdown": "x", "log": {"type": "LEARN"}})
    revert = _definition("op_reverse")
    assert "dry_run" in revert["inputSchema"]["properties"]  # undo takes it
    refused = _refused("op_reverse", {"action": "revert", "op_id": "20260101T000000-0000abcd", "dry_run": True})
    assert "dry_run" in refused.message


@pytest.mark.parametrize("choice", ["graph_path", "graph", "core,graph_nav"])
def test_naming_a_family_or_any_member_offers_the_whole_family(choice: str) -> None:
    chosen = {s.name for s in resolve(choice)}
    graph = next(f for f in FAMILIES if f.name == "graph")
    assert set(graph.methods) <= chosen
    assert "graph" in ToolCatalogue(resolve(choice)).names


def test_a_fitted_page_of_a_family_member_says_how_to_go_on_through_the_family() -> None:
    """A result cut to its budget names the arguments of the next call (``next``); through a
    family, they must carry the selector, or the next call would not reach the same member."""
    spec = METHODS["vault.issues"]
    name, fixed = CATALOGUE.call_of(spec)

    def page(limit: int) -> bytes:
        issues = [{"path": f"n/{i:04}.md", "code": "F01", "message": "malformed frontmatter " * 4} for i in range(limit)]
        return msgspec.json.encode({"issues": issues, "total": 500, "next_cursor": f"after-{limit}"})

    call = CATALOGUE.decode(name, _raw({**fixed, "limit": 400}))

    def ask(smaller: object) -> bytes:
        assert isinstance(smaller, IssuesParams)
        return page(smaller.limit)

    fitted = fit(call.spec, call.params, page(400), 4096, ask, call.carry)
    assert fitted.raw is not None
    following = msgspec.json.decode(fitted.raw)["fitted"]["next"]
    assert following == {"view": "issues", "cursor": following["cursor"], "limit": following["limit"]}
    again = CATALOGUE.decode(name, _raw(following))
    assert again.spec is spec and isinstance(again.params, IssuesParams) and again.params.cursor == following["cursor"]


@pytest.mark.parametrize("toolset", ["core", "read", "write", "all"])
def test_descriptions_name_a_method_as_an_agent_calls_it(toolset: str) -> None:
    """``protocol/`` says ``op.list`` or ``file.read``; an agent sees no tool of that name, so the
    listing and the instructions say the tool (and a family's selector) that reaches it."""
    catalogue = ToolCatalogue(resolve(toolset))
    text = msgspec.json.encode(catalogue.definitions(None, structured=True)).decode() + catalogue.instructions("")
    dotted = sorted({m for m in MCP_SPECS if re.search(rf"\b{re.escape(m)}\b", text)})
    assert dotted == [], dotted
    if toolset == "all":  # each form appears: a tool alone, a family's member
        assert "task_list gave it" in text
        assert "work action=start gives it" in text
        assert "vault_info view=operations" in text
        name, fixed = catalogue.call_of(METHODS["op.list"])
        assert (name, fixed) == ("vault_info", {"view": "operations"})
