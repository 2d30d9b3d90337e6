"""The tools' input schemas: compact, valid, and still the contract the daemon decodes against."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import jsonschema  # type: ignore[import-untyped]
import msgspec
import pytest

from protocol.schema import compact_schema, first_sentence, gist, plain_text
from protocol.table import METHODS
from vaultctl.mcp.tools import NOT_OFFERED, ToolCatalogue

MCP_SPECS = [s for s in METHODS.values() if s.mcp]
BOUNDS = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems", "minLength", "maxLength", "pattern"}


def _walk(node: Any) -> Any:
    """Every schema in ``node``: not a ``properties`` mapping itself, whose keys are field names."""
    if isinstance(node, dict):
        yield node
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for field in value.values():
                    yield from _walk(field)
            else:
                yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


@pytest.mark.parametrize("spec", MCP_SPECS, ids=lambda s: s.tool_name)
def test_every_tool_schema_is_valid_and_compact(spec: Any) -> None:
    schema = compact_schema(spec.params, hidden=NOT_OFFERED)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object" and "description" not in schema
    assert not set(NOT_OFFERED) & set(schema["properties"])
    for node in _walk(schema):
        assert "title" not in {k for k, v in node.items() if isinstance(v, str)}, node
        assert not BOUNDS & set(node) and node.get("additionalProperties") is not False, node
        if node.get("type") in ("integer", "number"):
            assert "default" not in node, node
        if {"type": "null"} in node.get("anyOf", []):  # only where null means something (another default)
            assert node.get("default") is not None, node
        assert "default" not in node or node["default"] is not None
        description = node.get("description")
        if isinstance(description, str):
            assert "``" not in description and ":class:" not in description and "\n" not in description


@pytest.mark.parametrize("spec", MCP_SPECS, ids=lambda s: s.tool_name)
def test_every_field_the_schema_offers_is_one_the_daemon_decodes(spec: Any) -> None:
    schema = compact_schema(spec.params, hidden=NOT_OFFERED)
    fields = set(spec.params.__struct_fields__) | {f.encode_name for f in msgspec.structs.fields(spec.params)}
    assert set(schema["properties"]) <= fields
    assert set(schema.get("required", [])) <= set(schema["properties"])
    assert set(schema["properties"]) == {f.encode_name for f in msgspec.structs.fields(spec.params)} - set(NOT_OFFERED)


class _Inner(msgspec.Struct, kw_only=True):
    """Used twice."""

    x: int


class _Once(msgspec.Struct, kw_only=True):
    """Used once."""

    y: str


class _Params(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Params."""

    a: Annotated[str | None, msgspec.Meta(description="The ``a`` of :class:`~pkg.Thing`. Then more, e.g. this.")] = None
    b: Annotated[_Inner | None, msgspec.Meta(description="B.")] = None
    c: Annotated[list[_Inner], msgspec.Meta(description="Cs.")] = []
    d: _Once
    flag: bool = False
    log: Annotated[str | None, msgspec.Meta(description="Hidden.")] = None
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=9, pattern="^[a-z]+$", description="A name.")] = "x"
    n: Annotated[int, msgspec.Meta(ge=1, le=5, description="N.")] = 2
    level: Annotated[Literal["low", "medium", "high"], msgspec.Meta(description="low, medium or high.")] = "low"
    text: Annotated[str, msgspec.Meta(max_length=65536, description="The text; at most 64 KiB as UTF-8; trimmed.")] = ""


def test_compaction_on_a_made_up_struct() -> None:
    schema = compact_schema(_Params, hidden=["log"])
    props = schema["properties"]
    assert props["a"] == {"description": "The a of Thing.", "type": "string"}
    assert props["b"]["description"] == "B." and props["b"]["$ref"] == "#/$defs/_Inner"
    assert props["d"]["type"] == "object" and props["d"]["properties"] == {"y": {"type": "string"}}, "used once: inlined"
    assert props["flag"] == {"type": "boolean"}
    assert props["c"] == {"description": "Cs.", "type": "array", "items": {"$ref": "#/$defs/_Inner"}}
    assert props["name"] == {"description": "A name.", "type": "string", "default": "x"}
    assert props["n"] == {"description": "N.", "type": "integer"}, "bounds and a number's default are the daemon's"
    assert props["level"] == {"enum": ["high", "low", "medium"], "default": "low"}, "a description that only lists the enum goes"
    assert props["text"] == {"description": "The text; trimmed.", "type": "string"}, "a size bound in words is the daemon's too"
    assert "log" not in props and schema["required"] == ["d"]
    assert set(schema["$defs"]) == {"_Inner"} and '"title"' not in json.dumps(schema)
    valid = {"d": {"y": "z"}, "b": {"x": 1}, "c": [{"x": 2}]}
    jsonschema.validate(valid, schema)
    msgspec.convert(valid, _Params)


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("One. Two.", "One."),
        ("Only this rule, e.g. L03. More.", "Only this rule, e.g. L03."),
        ("A list (a, b, ...). Then.", "A list (a, b, ...)."),
        ("No end", "No end"),
        ("Lines\n   joined. Next", "Lines joined."),
        ("version 1.5 stays. Next.", "version 1.5 stays."),
    ],
)
def test_first_sentence(text: str, first: str) -> None:
    assert first_sentence(text) == first


def test_plain_text_drops_rest_markup() -> None:
    assert plain_text("``op.undo`` and :func:`~vaultctl.mcp.run` and :class:`Thing <a.b.Thing>`") == "op.undo and run and Thing"


def test_no_tool_has_an_output_schema_or_a_title() -> None:
    for tool in ToolCatalogue().definitions(None, structured=True):
        assert not {"outputSchema", "title"} & set(tool), tool["name"]


@pytest.mark.parametrize(
    ("summary", "line"),
    [
        ("Create a note at a new path (title, frontmatter, body or a skeleton); refuses existing names.", "Create a note at a new path."),
        ("Read a note by path, name or alias: frontmatter and body, or one H2 section. More.", "Read a note by path, name or alias."),
        ("Counts: notes by type, domain and folder; links, dead links.", "Counts: notes by type, domain and folder."),
        (
            "List proposals: agent operations waiting for a person to decide.",
            "List proposals: agent operations waiting for a person to decide.",
        ),
        ("Move it (two-step: preview (then confirm)), keeping links.", "Move it, keeping links."),
        ("(All in brackets.)", "(All in brackets.)"),
        ("No end", "No end."),
    ],
)
def test_a_tool_description_is_the_gist_of_its_summary(summary: str, line: str) -> None:
    assert gist(summary) == line


def test_a_long_enum_is_left_to_its_description_and_the_daemon() -> None:
    """The lint rules' 21 codes cost every session more than they help one call: the field is a
    string its description explains, and the daemon refuses any other value; a short enum stays."""
    lint = compact_schema(METHODS["vault.lint"].params)["properties"]["code"]
    assert lint == {"description": "Report only the findings of this rule, e.g. L03.", "type": "string"}
    direction = compact_schema(METHODS["graph.neighbors"].params)["properties"]["direction"]
    assert direction["enum"] == ["both", "in", "out"]


def test_what_a_type_says_once_inlined_is_not_said_again() -> None:
    """Once a field's type is inlined: a description that only lists its enum goes, a list's items
    lose the description the list gives, and a description that is only a byte bound goes."""
    capture = compact_schema(METHODS["source.capture"].params)["properties"]["items"]
    assert "description" not in capture["items"] and "description" in capture
    assert "description" not in capture["items"]["properties"]["authority"]  # "primary, secondary, tertiary or unknown."
    tidy = compact_schema(METHODS["vault.tidy"].params)["properties"]["rules"]
    assert "description" not in tidy["items"] and tidy["items"]["enum"]
    markdown = compact_schema(METHODS["daily.append"].params)["properties"]["markdown"]
    assert markdown == {"type": "string"}  # "At most 256 KiB as UTF-8.": the daemon's bound
