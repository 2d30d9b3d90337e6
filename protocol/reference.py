"""The protocol reference in Markdown, generated from the method table (docs/reference/methods.md).

``python -m scripts.docs`` (``make docs``) regenerates it, naming each method's MCP tool as the
shim lists it; a test fails when the committed file differs, so the reference cannot drift from
the code. ``python -m protocol.reference`` prints it with each method's own tool name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.limits import MAX_ERROR_ISSUES
from protocol.methods import events, subscriptions
from protocol.methods.receipts import OUTCOMES, NoDetail, detail_of
from protocol.schema import method_schema
from protocol.table import METHODS

if TYPE_CHECKING:
    from collections.abc import Callable

    from protocol.methods.spec import MethodSpec


def _type_of(prop: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in prop:
        return str(prop["$ref"].rsplit("/", 1)[-1])
    if "anyOf" in prop:
        return " \\| ".join(_type_of(p, defs) for p in prop["anyOf"])
    if "enum" in prop:
        return " \\| ".join(f"`{v}`" for v in prop["enum"])
    t = prop.get("type", "any")
    if t == "array":
        return f"list of {_type_of(prop.get('items', {}), defs)}"
    return str(t)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _bounds(prop: dict[str, Any]) -> str:
    parts = []
    for key, label in (
        ("minimum", "≥"),
        ("maximum", "≤"),
        ("minLength", "min length"),
        ("maxLength", "max length"),
        ("maxItems", "max items"),
        ("pattern", "pattern"),
    ):
        if key in prop:
            value = prop[key]
            parts.append(f"{label} `{value}`" if key == "pattern" else f"{label} {value}")
    return ", ".join(parts)


def _fields(schema: dict[str, Any], defs: dict[str, Any]) -> list[str]:
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    rows = ["| field | type | required | default | bounds and meaning |", "|---|---|---|---|---|"]
    for name, prop in props.items():
        default = f"`{prop['default']}`" if "default" in prop else ""
        meaning = "; ".join(x for x in (_bounds(prop), prop.get("description", "")) if x).replace("|", "\\|")
        needed = "yes" if name in required else ""
        rows.append(f"| `{name}` | {_type_of(prop, defs)} | {needed} | {default} | {meaning} |")
    return rows if props else ["(no fields)"]


def render(tool_of: Callable[[MethodSpec[Any, Any]], str] | None = None) -> str:
    """The protocol reference. ``tool_of`` names the MCP tool that reaches a method, as the shim
    lists it (a family with its selector, which the protocol does not know); by default the
    method's own tool name, which the shim answers too."""
    out = [
        "# Protocol reference",
        "",
        "Generated from `protocol/table.py` by `python -m scripts.docs`; do not edit by hand.",
        "",
        "JSON-RPC 2.0, one message per line, over the daemon's Unix socket. Call `hello` first.",
        "",
        "## Errors",
        "",
        "| name | JSON-RPC code | vaultctl exit |",
        "|---|---|---|",
    ]
    out += [f"| `{c}` | {c.rpc_code} | {int(c.exit_status)} |" for c in ErrorCode]
    out += [
        "",
        f"An error's `data` holds its `code`, `message`, the `issues` that refused the call (at most {MAX_ERROR_ISSUES}, in the order "
        "found; `issues_omitted` counts the rest) and, for `AMBIGUOUS`, the `candidates`.",
        "",
        "## Issue codes",
        "",
        "An error's `issues` (and a receipt's `warnings`) name the rules by these codes: `S` a file the "
        "index skipped, `N` a note's frontmatter, `P` a vault policy, `G` the agent gate, `R` the vault's git "
        "repository and remote, `V` a write's validation.",
        "",
        "| code | meaning | what to do |",
        "|---|---|---|",
    ]
    out += [f"| `{c}` | {_cell(c.meaning)} | {_cell(c.action)} |" for c in IssueCode]
    out += ["", *_receipts(), "## Methods", ""]
    for spec in METHODS.values():
        s = method_schema(spec)
        flags = [k for k, v in s["flags"].items() if v]
        out += [
            f"### `{spec.name}`",
            "",
            spec.summary,
            "",
            f"Flags: {', '.join(flags) or 'none'}. MCP tool: {(tool_of or _own_tool)(spec) if spec.mcp else 'no'}.",
            "",
            "Params:",
            "",
            *_fields(s["params"], s["$defs"]),
            "",
            *_result(spec.result, s),
            "",
        ]
    out += _notifications()
    return "\n".join(out)


def _own_tool(spec: MethodSpec[Any, Any]) -> str:
    return f"`{spec.tool_name}`"


def _notifications() -> list[str]:
    """The notifications a subscription receives, the rules they follow, and every event kind."""
    out = ["## Notifications", "", "What the daemon sends after `subscribe`, without an `id` (nothing answers a notification).", ""]
    out += [subscriptions.GUIDE, "### Frames", ""]
    for note in subscriptions.NOTIFICATIONS:
        (schema,), defs = msgspec.json.schema_components([note.params])
        out += [f"#### `{note.name}`", "", note.summary, "", "Params:", "", *_fields(schema, defs), ""]
    out += [
        "For example:",
        "",
        "```json",
        '{"jsonrpc":"2.0","method":"subscription.events","params":{"subscription":1,"events":[{"kind":"note.renamed",'
        '"vault":"notes","clock":"5f0c2a9e:42","at":1767225600.125,"path":"b.md","old_path":"a.md"}]}}',
        "```",
        "",
        "### Events",
        "",
        "Each event is a JSON object whose `kind` names it; every kind carries `vault`, `clock` and `at`, and its own fields below.",
        "",
    ]
    for event_type in events.EVENT_TYPES:
        (schema,), defs = msgspec.json.schema_components([event_type])
        body = defs[schema["$ref"].rsplit("/", 1)[-1]]
        tag = body["properties"]["kind"]["enum"][0]
        own = {k: v for k, v in body["properties"].items() if k not in ("kind", "vault", "clock", "at")}
        fields = _fields({**body, "properties": own}, defs)
        out += [f"#### `{tag}`", "", body.get("description", ""), "", *fields, ""]
    return out


def _result(result: Any, schema: dict[str, Any]) -> list[str]:
    detail = detail_of(result)
    if detail is None:
        return ["Result:", "", *_fields(schema["result"], schema["$defs"])]
    (detail_schema,), defs = msgspec.json.schema_components([detail])
    return [f"Result: a [write receipt](#write-receipts) whose `detail` is `{detail.__name__}`:", "", *_fields(detail_schema, defs)]


def _receipts() -> list[str]:
    """The receipt variants, once: every write method answers one of them."""
    out = [
        "## Write receipts",
        "",
        "Every note-changing method answers a receipt: a JSON object whose `outcome` names one of the "
        "variants below. Every variant carries every key; `applied`, `dry_run` and `preview` are fixed by "
        "the outcome. `detail` is the method's own Struct, given with each method.",
        "",
    ]
    for variant in OUTCOMES:
        (schema,), defs = msgspec.json.schema_components([variant[NoDetail]])
        name = defs[schema["$ref"].rsplit("/", 1)[-1]]
        tag = name["properties"]["outcome"]["enum"][0]
        out += [f"### outcome `{tag}`", "", name.get("description", ""), "", *_fields(schema, defs), ""]
    return out


if __name__ == "__main__":
    print(render(), end="")
