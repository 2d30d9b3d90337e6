"""Whether the text a ``file.write`` would leave is a valid file of its kind: a canvas is JSON
Canvas 1.0 (jsoncanvas.org), a base is Bases YAML with Obsidian's top-level keys. Obsidian cannot
open a canvas or base that is not, so such a write is refused (V30) and nothing is written.

Both readers are bounded: JSON by :func:`vaultd.vault.json_text.load` (depth), YAML by the
frontmatter loader (depth, no anchors or aliases), and the content by the write's own size bound.
"""

from __future__ import annotations

import re
from typing import Any, Final

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from vaultd.vault import frontmatter, json_text

NODE_TYPES: Final = frozenset({"text", "file", "link", "group"})
SIDES: Final = frozenset({"top", "right", "bottom", "left"})
ENDS: Final = frozenset({"none", "arrow"})
BACKGROUND_STYLES: Final = frozenset({"cover", "ratio", "repeat"})
_COLOR: Final = re.compile(r"^(#[0-9A-Fa-f]{6}|[1-6])$")
BASE_KEYS: Final = frozenset({"filters", "formulas", "properties", "summaries", "views"})
MAX_FILTER_DEPTH: Final = 16  #: nested and/or/not groups a base's filters may hold (within the YAML bound of 64 levels)


def _v30(path: str, message: str) -> Issue:
    return Issue(code=IssueCode.V30, path=path, message=message)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _node_problems(node: Any, at: str) -> list[str]:
    if not isinstance(node, dict):
        return [f"{at} is not an object"]
    found: list[str] = []
    if not isinstance(node.get("id"), str) or not node["id"]:
        found.append(f"{at} has no string id")
    kind = node.get("type")
    if kind not in NODE_TYPES:
        found.append(f"{at} has type {kind!r}; a node is text, file, link or group")
    found += [f"{at}.{key} is not an integer" for key in ("x", "y", "width", "height") if not _is_int(node.get(key))]
    if "color" in node and (not isinstance(node["color"], str) or not _COLOR.match(node["color"])):
        found.append(f"{at}.color is not a hex colour or a preset 1-6")
    need = {"text": "text", "file": "file", "link": "url"}.get(kind if isinstance(kind, str) else "")
    if need is not None and not isinstance(node.get(need), str):
        found.append(f"{at} is a {kind} node without a string {need}")
    if kind == "file" and "subpath" in node and (not isinstance(node["subpath"], str) or not node["subpath"].startswith("#")):
        found.append(f"{at}.subpath must be a string starting with '#'")
    if kind == "group":
        if "label" in node and not isinstance(node["label"], str):
            found.append(f"{at}.label is not a string")
        if "backgroundStyle" in node and node["backgroundStyle"] not in BACKGROUND_STYLES:
            found.append(f"{at}.backgroundStyle is not cover, ratio or repeat")
    return found


def _edge_problems(edge: Any, at: str, node_ids: set[str]) -> list[str]:
    if not isinstance(edge, dict):
        return [f"{at} is not an object"]
    found: list[str] = []
    if not isinstance(edge.get("id"), str) or not edge["id"]:
        found.append(f"{at} has no string id")
    for end in ("fromNode", "toNode"):
        if not isinstance(edge.get(end), str):
            found.append(f"{at} has no string {end}")
        elif edge[end] not in node_ids:
            found.append(f"{at}.{end} names no node of the canvas")
    found += [f"{at}.{key} is not top, right, bottom or left" for key in ("fromSide", "toSide") if key in edge and edge[key] not in SIDES]
    found += [f"{at}.{key} is not none or arrow" for key in ("fromEnd", "toEnd") if key in edge and edge[key] not in ENDS]
    if "label" in edge and not isinstance(edge["label"], str):
        found.append(f"{at}.label is not a string")
    return found


def canvas_issues(path: str, text: str) -> list[Issue]:
    """Why ``text`` is not a JSON Canvas 1.0 document (empty when it is)."""
    try:
        doc = json_text.load(text)
    except ValueError as exc:
        return [_v30(path, f"a canvas must be JSON: {exc}")]
    if not isinstance(doc, dict):
        return [_v30(path, "a canvas must be a JSON object with nodes and edges")]
    problems: list[str] = []
    nodes, edges = doc.get("nodes", []), doc.get("edges", [])
    if not isinstance(nodes, list):
        problems.append("nodes is not an array")
        nodes = []
    if not isinstance(edges, list):
        problems.append("edges is not an array")
        edges = []
    ids: set[str] = set()
    for i, node in enumerate(nodes):
        problems += _node_problems(node, f"nodes[{i}]")
        if isinstance(node, dict) and isinstance(node.get("id"), str):
            if node["id"] in ids:
                problems.append(f"nodes[{i}].id {node['id']!r} is not unique")
            ids.add(node["id"])
    edge_ids: set[str] = set()
    for i, edge in enumerate(edges):
        problems += _edge_problems(edge, f"edges[{i}]", ids)
        if isinstance(edge, dict) and isinstance(edge.get("id"), str):
            if edge["id"] in edge_ids:
                problems.append(f"edges[{i}].id {edge['id']!r} is not unique")
            edge_ids.add(edge["id"])
    return [_v30(path, f"not JSON Canvas 1.0: {p}") for p in problems[:20]]


def _filter_problems(value: Any, at: str, depth: int = 0) -> list[str]:
    """A filter is an expression string, or a mapping of one of and/or/not to a list of filters."""
    if isinstance(value, str):
        return []
    if depth >= MAX_FILTER_DEPTH:
        return [f"{at} nests more than {MAX_FILTER_DEPTH} groups"]
    if not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in ("and", "or", "not"):
        return [f"{at} is neither an expression nor one of and/or/not with a list"]
    key, items = next(iter(value.items()))
    if not isinstance(items, list):
        return [f"{at}.{key} is not a list"]
    found: list[str] = []
    for i, item in enumerate(items):
        found += _filter_problems(item, f"{at}.{key}[{i}]", depth + 1)
    return found


def base_issues(path: str, text: str) -> list[Issue]:
    """Why ``text`` is not an Obsidian base (empty when it is): a YAML mapping of filters,
    formulas, properties, summaries and views, each of its shape."""
    if not text.strip():
        return []  # Obsidian opens an empty base as one with no views yet
    data, problems_found = frontmatter.load_header(text)
    if problems_found or data is None:
        why = problems_found[0].message if problems_found else "not a YAML mapping"
        return [_v30(path, f"a base must be a YAML mapping: {why}")]
    problems = [f"unknown top-level key {key!r} (a base has {', '.join(sorted(BASE_KEYS))})" for key in data if key not in BASE_KEYS]
    if "filters" in data and data["filters"] is not None:
        problems += _filter_problems(data["filters"], "filters")
    for key in ("formulas", "properties", "summaries"):
        if key in data and data[key] is not None and not isinstance(data[key], dict):
            problems.append(f"{key} is not a mapping")
    if isinstance(data.get("formulas"), dict):
        problems += [f"formulas.{name} is not an expression string" for name, v in data["formulas"].items() if not isinstance(v, str)]
    views = data.get("views")
    if views is not None:
        if not isinstance(views, list):
            problems.append("views is not a list")
        else:
            for i, view in enumerate(views):
                if not isinstance(view, dict) or not isinstance(view.get("type"), str):
                    problems.append(f"views[{i}] is not a mapping with a type")
                    continue
                if "name" in view and not isinstance(view["name"], str):
                    problems.append(f"views[{i}].name is not a string")
                if "filters" in view and view["filters"] is not None:
                    problems += _filter_problems(view["filters"], f"views[{i}].filters")
                if "limit" in view and not _is_int(view["limit"]):
                    problems.append(f"views[{i}].limit is not an integer")
    return [_v30(path, f"not Bases YAML: {p}") for p in problems[:20]]


def format_issues(path: str, text: str) -> list[Issue]:
    """The issues of ``text`` as the file kind its path names (none for plain text kinds)."""
    lower = path.lower()
    if lower.endswith(".canvas"):
        return canvas_issues(path, text)
    if lower.endswith(".base"):
        return base_issues(path, text)
    return []
