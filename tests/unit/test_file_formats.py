"""The canvas and base checks of file.write: every JSON Canvas 1.0 document the spec allows is
accepted (drawn at random, checked against the spec's schema too), each way of breaking one is
refused, and a base is Obsidian's keys in their shapes, its filters nested within a bound."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.issue_codes import IssueCode
from tests.support import jsoncanvas
from vaultd.graph.canvas import canvas_bytes
from vaultd.policy.file_formats import MAX_FILTER_DEPTH, base_issues, canvas_issues, format_issues

_ids = st.text(alphabet="abcdef0123456789", min_size=1, max_size=8)
_ints = st.integers(-10_000, 10_000)
_color = st.one_of(st.sampled_from(["1", "2", "3", "4", "5", "6"]), st.from_regex(r"\A#[0-9a-fA-F]{6}\Z"))


@st.composite
def canvases(draw: st.DrawFn) -> dict[str, Any]:
    ids = draw(st.lists(_ids, unique=True, max_size=8))
    nodes = []
    for node_id in ids:
        kind = draw(st.sampled_from(["text", "file", "link", "group"]))
        node: dict[str, Any] = {
            "id": node_id,
            "type": kind,
            "x": draw(_ints),
            "y": draw(_ints),
            "width": draw(_ints),
            "height": draw(_ints),
        }
        if draw(st.booleans()):
            node["color"] = draw(_color)
        if kind == "text":
            node["text"] = draw(st.text(max_size=30))
        elif kind == "file":
            node["file"] = draw(st.text(min_size=1, max_size=30))
            if draw(st.booleans()):
                node["subpath"] = "#" + draw(st.text(max_size=10))
        elif kind == "link":
            node["url"] = draw(st.text(max_size=30))
        elif draw(st.booleans()):
            node["label"] = draw(st.text(max_size=10))
            node["backgroundStyle"] = draw(st.sampled_from(["cover", "ratio", "repeat"]))
        nodes.append(node)
    edges = []
    if ids:
        for edge_id in draw(st.lists(_ids, unique=True, max_size=6)):
            edge: dict[str, Any] = {"id": edge_id, "fromNode": draw(st.sampled_from(ids)), "toNode": draw(st.sampled_from(ids))}
            if draw(st.booleans()):
                edge["fromSide"] = draw(st.sampled_from(["top", "right", "bottom", "left"]))
                edge["toEnd"] = draw(st.sampled_from(["none", "arrow"]))
                edge["label"] = draw(st.text(max_size=10))
            edges.append(edge)
    return {"nodes": nodes, "edges": edges}


@settings(max_examples=200, deadline=None)
@given(canvases())
def test_every_canvas_the_spec_allows_is_accepted(document: dict[str, Any]) -> None:
    jsoncanvas.validate(document)  # the test's own reading of the spec agrees that it is one
    assert canvas_issues("c.canvas", json.dumps(document)) == []


def test_a_canvas_vaultd_draws_is_accepted() -> None:
    document = {
        "nodes": [{"id": "a", "type": "file", "file": "A.md", "x": 0, "y": 0, "width": 400, "height": 400}],
        "edges": [],
    }
    assert canvas_issues("c.canvas", canvas_bytes(document).decode("utf-8")) == []
    assert canvas_issues("empty.canvas", "{}") == []


def _node(**changes: Any) -> dict[str, Any]:
    node = {"id": "a", "type": "text", "text": "x", "x": 0, "y": 0, "width": 10, "height": 10}
    node.update(changes)
    return {k: v for k, v in node.items() if v is not None}


BROKEN = {
    "not JSON": "{",
    "an array": "[]",
    "nodes not an array": '{"nodes": {}}',
    "edges not an array": '{"edges": 1}',
    "a node not an object": json.dumps({"nodes": [1]}),
    "no id": json.dumps({"nodes": [_node(id=None)]}),
    "an empty id": json.dumps({"nodes": [_node(id="")]}),
    "an unknown type": json.dumps({"nodes": [_node(type="sticker")]}),
    "a float x": json.dumps({"nodes": [_node(x=1.5)]}),
    "a boolean width": json.dumps({"nodes": [_node(width=True)]}),
    "no height": json.dumps({"nodes": [_node(height=None)]}),
    "a text node without text": json.dumps({"nodes": [_node(text=None)]}),
    "a file node without file": json.dumps({"nodes": [_node(type="file", text=None)]}),
    "a link node without url": json.dumps({"nodes": [_node(type="link", text=None)]}),
    "a subpath without #": json.dumps({"nodes": [_node(type="file", text=None, file="A.md", subpath="H")]}),
    "a named colour": json.dumps({"nodes": [_node(color="red")]}),
    "a bad background style": json.dumps({"nodes": [_node(type="group", text=None, backgroundStyle="tile")]}),
    "repeated node ids": json.dumps({"nodes": [_node(), _node()]}),
    "an edge to no node": json.dumps({"nodes": [_node()], "edges": [{"id": "e", "fromNode": "a", "toNode": "b"}]}),
    "an edge without id": json.dumps({"nodes": [_node()], "edges": [{"fromNode": "a", "toNode": "a"}]}),
    "a bad side": json.dumps({"nodes": [_node()], "edges": [{"id": "e", "fromNode": "a", "toNode": "a", "toSide": "up"}]}),
    "a bad end": json.dumps({"nodes": [_node()], "edges": [{"id": "e", "fromNode": "a", "toNode": "a", "fromEnd": "dot"}]}),
    "repeated edge ids": json.dumps(
        {"nodes": [_node()], "edges": [{"id": "e", "fromNode": "a", "toNode": "a"}, {"id": "e", "fromNode": "a", "toNode": "a"}]}
    ),
    "nested past the bound": "[" * 10_000 + "]" * 10_000,
}


@pytest.mark.parametrize("text", list(BROKEN.values()), ids=list(BROKEN))
def test_each_way_of_breaking_a_canvas_is_refused(text: str) -> None:
    issues = canvas_issues("c.canvas", text)
    assert issues and all(i.code == IssueCode.V30 and i.path == "c.canvas" for i in issues)
    assert format_issues("c.canvas", text) == issues


GOOD_BASES = [
    "",
    "views:\n  - type: table\n    name: All\n",
    "filters:\n  and:\n    - file.inFolder(\"x\")\n    - or:\n        - 'a == 1'\n        - not:\n            - b\n",
    "formulas:\n  total: 'price * qty'\nproperties:\n  note.price:\n    displayName: Price\nsummaries:\n  s: 'values.sum()'\n",
    "views:\n  - type: cards\n    limit: 10\n    filters: 'file.ext == \"png\"'\n",
]
BAD_BASES = {
    "a list": "- a\n- b\n",
    "an unknown key": "views: []\nquery: x\n",
    "views not a list": "views:\n  type: table\n",
    "a view without type": "views:\n  - name: All\n",
    "a filter of two keys": "filters:\n  and: []\n  or: []\n",
    "a filter group not a list": "filters:\n  and: x\n",
    "formulas not a mapping": "formulas: [a]\n",
    "a formula not a string": "formulas:\n  a: [1]\n",
    "a limit not an integer": "views:\n  - type: table\n    limit: many\n",
    "not YAML": "views: [\n",
    "anchors": "views: &v []\nformulas: *v\n",
}


@pytest.mark.parametrize("text", GOOD_BASES)
def test_bases_of_obsidians_keys_are_accepted(text: str) -> None:
    assert base_issues("b.base", text) == []


@pytest.mark.parametrize("text", list(BAD_BASES.values()), ids=list(BAD_BASES))
def test_each_way_of_breaking_a_base_is_refused(text: str) -> None:
    issues = base_issues("b.base", text)
    assert issues and all(i.code == IssueCode.V30 for i in issues)


def test_a_base_filter_is_nested_at_most_to_its_bound() -> None:
    def nested(depth: int) -> str:
        lines, indent = ["filters:"], "  "
        for _ in range(depth):
            lines.append(f"{indent}and:")
            lines.append(f"{indent}  -")
            indent += "    "
        lines[-1] = lines[-1] + " leaf"
        return "\n".join(lines) + "\n"

    assert base_issues("b.base", nested(MAX_FILTER_DEPTH)) == []
    assert base_issues("b.base", nested(MAX_FILTER_DEPTH + 1))


def test_plain_text_kinds_are_not_judged() -> None:
    assert format_issues("notes.txt", "{not json") == []
    assert format_issues("style.css", "}") == []
