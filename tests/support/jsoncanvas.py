"""JSON Canvas 1.0 (jsoncanvas.org, spec/1.0), written down as a JSON Schema for the tests.

The spec's own words, attribute by attribute: the top level holds optional ``nodes`` and
``edges`` arrays; every node has ``id``, ``type`` (text, file, link, group), integer ``x``, ``y``,
``width``, ``height`` and an optional color; text nodes need ``text``, file nodes ``file`` (and
may have a ``subpath`` starting with ``#``), link nodes ``url``, group nodes may have ``label``,
``background`` and ``backgroundStyle`` (cover, ratio, repeat); edges need ``id``, ``fromNode``,
``toNode`` and may have sides (top, right, bottom, left), ends (none, arrow), a color and a
label. A color is a hex string or one of the presets "1".."6". What a schema cannot say (ids are
unique, edges name existing nodes) :func:`validate` checks after it.
"""

from __future__ import annotations

from typing import Any

import jsonschema  # type: ignore[import-untyped]

_COLOR = {"type": "string", "pattern": "^(#[0-9A-Fa-f]{6}|[1-6])$"}
_SIDE = {"enum": ["top", "right", "bottom", "left"]}
_END = {"enum": ["none", "arrow"]}
_GENERIC = {
    "id": {"type": "string", "minLength": 1},
    "x": {"type": "integer"},
    "y": {"type": "integer"},
    "width": {"type": "integer"},
    "height": {"type": "integer"},
    "color": _COLOR,
}
_REQUIRED = ["id", "type", "x", "y", "width", "height"]


def _node(kind: str, extra: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {**_GENERIC, "type": {"const": kind}, **extra},
        "required": _REQUIRED + required,
        "additionalProperties": False,
    }


SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "nodes": {
            "type": "array",
            "items": {
                "oneOf": [
                    _node("text", {"text": {"type": "string"}}, ["text"]),
                    _node("file", {"file": {"type": "string", "minLength": 1}, "subpath": {"type": "string", "pattern": "^#"}}, ["file"]),
                    _node("link", {"url": {"type": "string"}}, ["url"]),
                    _node(
                        "group",
                        {
                            "label": {"type": "string"},
                            "background": {"type": "string"},
                            "backgroundStyle": {"enum": ["cover", "ratio", "repeat"]},
                        },
                        [],
                    ),
                ]
            },
        },
        "edges": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "minLength": 1},
                    "fromNode": {"type": "string"},
                    "fromSide": _SIDE,
                    "fromEnd": _END,
                    "toNode": {"type": "string"},
                    "toSide": _SIDE,
                    "toEnd": _END,
                    "color": _COLOR,
                    "label": {"type": "string"},
                },
                "required": ["id", "fromNode", "toNode"],
                "additionalProperties": False,
            },
        },
    },
    "additionalProperties": False,
}


def validate(document: Any) -> None:
    """Raise if ``document`` is not a JSON Canvas 1.0 document (schema, unique ids, edge ends)."""
    jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(document)
    nodes = [n["id"] for n in document.get("nodes", [])]
    edges = [e["id"] for e in document.get("edges", [])]
    assert len(set(nodes)) == len(nodes), "node ids repeat"
    assert len(set(edges)) == len(edges), "edge ids repeat"
    for edge in document.get("edges", []):
        assert edge["fromNode"] in nodes and edge["toNode"] in nodes, f"edge {edge['id']} names a node that is not there"


def overlapping(document: Any) -> list[tuple[str, str]]:
    """Pairs of nodes whose rectangles overlap (a readable layout has none)."""
    boxes = [(n["id"], n["x"], n["y"], n["x"] + n["width"], n["y"] + n["height"]) for n in document.get("nodes", [])]
    found = []
    for i, (a, ax0, ay0, ax1, ay1) in enumerate(boxes):
        for b, bx0, by0, bx1, by1 in boxes[i + 1 :]:
            if ax0 < bx1 and bx0 < ax1 and ay0 < by1 and by0 < ay1:
                found.append((a, b))
    return found
