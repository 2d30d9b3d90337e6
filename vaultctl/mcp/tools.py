"""The tool list, generated from the method table, and the decoding of a call's arguments.

Nothing here names a method: every method the table flags ``mcp=True`` becomes a tool, in table
order, so a method added to the table is a tool with no change to the shim.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import msgspec

from protocol.schema import compact_schema, first_sentence
from protocol.table import METHODS
from vaultctl.mcp.errors import invalid_params
from vaultctl.mcp.schemas import VaultChoice, with_vault_enum

if TYPE_CHECKING:
    from collections.abc import Iterable

    from protocol.methods.common import Params
    from protocol.methods.spec import AnySpec

_AT_PATH = re.compile(r" - at `(\$[^`]*)`$")
_UNKNOWN_FIELD = re.compile(r"unknown field `([^`]*)`")
_EMPTY_ARGS = msgspec.Raw(b"{}")

TWO_STEP_HINT = " Previews first; to apply, repeat with confirm=true and its fingerprint (STALE_PREVIEW: preview again)."
SHARED_ARGUMENTS = (
    "vault",
    "fresh",
    "cursor",
    "dry_run",
    "reason",
    "confirm",
    "fingerprint",
    "expected_sha",
    "expected_mtime_ns",
    "include_excluded",
    "date",
    "under",
    "op_id",
)
"""Arguments that mean one thing in every tool that takes them. Each is described once, in the
server's instructions (:meth:`ToolCatalogue.instructions`), not again in every schema: 61 tools
take ``vault``, and its sentence in each cost an agent's context about 750 tokens."""
HIDDEN_FIELDS = ("log", "explain", "rerank")
"""Params no tool offers: ``log`` overrides the log line's fields, a knob for the CLI and its
people (an agent says why in ``reason``), and its enum would cost every write tool's schema;
``explain`` and ``rerank`` are for a person studying a ranking (``vaultctl retrieve --explain``,
``--no-rerank``), not for an agent asking a question."""


def description_of(spec: AnySpec) -> str:
    """The first sentence of the method's summary in plain text; the reference docs keep the rest."""
    return first_sentence(spec.summary) + (TWO_STEP_HINT if spec.two_step else "")


class ToolCatalogue:
    """The MCP tools of a method table. Schemas are generated once; the vault enum per listing."""

    def __init__(self, specs: Iterable[AnySpec] | None = None) -> None:
        chosen = METHODS.values() if specs is None else specs
        self._specs: dict[str, AnySpec] = {s.tool_name: s for s in chosen if s.mcp}
        self._base: dict[str, dict[str, Any]] = {}
        self._instructions: dict[str, str] = {}  #: by preamble: made once, on the first handshake

    def instructions(self, preamble: str) -> str:
        """``preamble``, then each shared argument some tool takes, with its one description from
        ``protocol/``."""
        if preamble in self._instructions:
            return self._instructions[preamble]
        specs = list(self._specs.values())
        parts = [preamble]
        shared = _shared_descriptions(specs)
        if shared:
            parts.append("Arguments that mean the same in every tool: " + " ".join(f"{n}: {d}" for n, d in shared.items()))
        text = self._instructions[preamble] = " ".join(parts)
        return text

    @property
    def names(self) -> list[str]:
        return list(self._specs)

    def spec(self, name: object) -> AnySpec:
        """The method behind a tool name.

        Raises:
            McpError: -32602 for a name that is not one of our tools.
        """
        spec = self._specs.get(name) if isinstance(name, str) else None
        if spec is None:
            if any(s.mcp and s.tool_name == name for s in METHODS.values()):
                message = f"tool {name!r} is not in this server's toolset; add it to the entry's --tools (vaultctl mcp --tools NAME,...)"
            else:
                message = f"unknown tool {name!r}; call tools/list for the tools this server offers"
            raise invalid_params(message, "$.params.name")
        return spec

    def definitions(self, vaults: VaultChoice | None, *, structured: bool, annotated: bool = True) -> list[dict[str, Any]]:
        """Every tool's definition; ``structured`` False drops what 2025-03-26 clients do not know,
        ``annotated`` False what 2024-11-05 ones do not."""
        tools = []
        for name, spec in self._specs.items():
            base = self._base.get(name)
            if base is None:
                base = self._base[name] = _definition(spec)
            tool = dict(base, inputSchema=with_vault_enum(base["inputSchema"], vaults))
            if not annotated:
                tool.pop("annotations", None)
            tools.append(tool)
        return tools


def _shared_descriptions(specs: Iterable[AnySpec]) -> dict[str, str]:
    """Each shared argument the tools take, with its description (the shortest wording, where
    two rooms word one meaning differently, as a note's and a file's ``expected_sha``)."""
    found: dict[str, str] = {}
    for spec in specs:
        fields = compact_schema(spec.params, hidden=HIDDEN_FIELDS).get("properties", {})
        for name in SHARED_ARGUMENTS:
            text = fields.get(name, {}).get("description")
            if text and (name not in found or len(text) < len(found[name])):
                found[name] = text
    return {name: found[name] for name in SHARED_ARGUMENTS if name in found}


def _input_schema(spec: AnySpec) -> dict[str, Any]:
    """The compact schema, a shared argument's description left to the instructions."""
    schema = compact_schema(spec.params, hidden=HIDDEN_FIELDS)
    for name in SHARED_ARGUMENTS:
        field = schema.get("properties", {}).get(name)
        if field is not None:
            field.pop("description", None)
    return schema


def _definition(spec: AnySpec) -> dict[str, Any]:
    """One tool: name, description, input schema and hints.

    No ``title``: "Note search" is the name ``note_search`` again, at a cost in every session. No
    ``outputSchema``: the clients that read it only validate ``structuredContent`` against it
    (none shows it to a model), and the result's JSON is in the text content anyway (docs/mcp.md).
    """
    return {
        "name": spec.tool_name,
        "description": description_of(spec),
        "inputSchema": _input_schema(spec),
        "annotations": annotations_of(spec),
    }


def annotations_of(spec: AnySpec) -> dict[str, Any]:
    """The hints, without those the spec defines as meaningless: ``destructiveHint`` and
    ``idempotentHint`` are "meaningful only when readOnlyHint == false" (MCP 2025-03-26,
    ToolAnnotations), so a read-only tool carries ``readOnlyHint`` and ``openWorldHint`` only."""
    hints: dict[str, Any] = {"readOnlyHint": spec.read_only}
    if not spec.read_only:
        hints.update(destructiveHint=spec.destructive, idempotentHint=spec.idempotent)
    hints["openWorldHint"] = False  # a vault is a closed world: no web, no third parties
    return hints


def decode_arguments(spec: AnySpec, arguments: msgspec.Raw) -> Params:
    """Decode a call's arguments into the method's params Struct, refusing unknown keys.

    Raises:
        McpError: -32602 naming the field, e.g. ``$.arguments.limit``.
    """
    raw = _EMPTY_ARGS if bytes(arguments) in (b"", b"null") else arguments
    try:
        params: Params = msgspec.json.decode(raw, type=spec.params)
    except msgspec.ValidationError as exc:  # the Raw was cut from a parsed frame, so only shapes can fail
        message = str(exc)
        raise invalid_params(f"invalid arguments for {spec.tool_name}: {message}", argument_path(message)) from exc
    for name in HIDDEN_FIELDS:
        if name in type(params).__struct_fields__ and getattr(params, name) != _default(type(params), name):
            message = f"Object contains unknown field `{name}`"  # as for any key the schema does not offer
            raise invalid_params(f"invalid arguments for {spec.tool_name}: {message}", f"$.arguments.{name}")
    return params


def _default(params: type[Params], name: str) -> object:
    """The value a params field has when a call leaves it out (a hidden field must keep it)."""
    fields = params.__struct_fields__
    defaults = params.__struct_defaults__
    return dict(zip(fields[len(fields) - len(defaults) :], defaults, strict=True)).get(name)


def argument_path(message: str) -> str:
    """The JSON path of the field a msgspec error names, rooted at ``$.arguments``."""
    match = _AT_PATH.search(message)
    path = "$.arguments" + (match.group(1)[1:] if match else "")
    unknown = _UNKNOWN_FIELD.search(message)
    if unknown:
        path += f".{unknown.group(1)}"
    return path
