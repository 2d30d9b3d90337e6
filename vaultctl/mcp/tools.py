"""The tool list, generated from the method table, and the decoding of a call's arguments.

Nothing here names a method: every method the table flags ``mcp=True`` becomes a tool, in table
order, so a method added to the table is a tool with no change to the shim.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import msgspec

from protocol.schema import compact_schema, gist
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

TWO_STEP_HINT = " Two-step: previews, then repeat with confirm=true and its fingerprint."
SHARED_ARGUMENTS = (
    "vault",
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
"""Arguments that mean one thing in every tool that takes them, however each room words it. Each
is described once, in the server's instructions (:meth:`ToolCatalogue.instructions`), not again in
every schema: 61 tools take ``vault``, and its sentence in each cost an agent's context about 750
tokens. Besides these, any argument whose description is word for word the same in two tools of a
toolset is described once too (:func:`shared_descriptions`)."""
HIDDEN_FIELDS = ("log", "explain", "rerank")
"""Params no tool offers: ``log`` overrides the log line's fields, a knob for the CLI and its
people (an agent says why in ``reason``), and its enum would cost every write tool's schema;
``explain`` and ``rerank`` are for a person studying a ranking (``vaultctl retrieve --explain``,
``--no-rerank``), not for an agent asking a question. A call that sends one is refused as for any
unknown argument."""
ALWAYS: dict[str, object] = {"fresh": True}
"""Params every agent call carries, so no tool offers them. ``fresh`` waits until every file change
made before the call is indexed: a program that writes a file and queries in the same millisecond
needs to ask for it, but a model cannot know when it would matter, and asking always costs next to
nothing (the wait ends at once when the watcher has nothing queued). So every read an agent makes
sees every change made before it, and 25 tools' schemas are a property shorter. A call that still
sends ``fresh`` (a host's entry from an earlier release) is served, fresh."""


NOT_OFFERED = (*HIDDEN_FIELDS, *ALWAYS)  #: params no tool's schema offers


def description_of(spec: AnySpec) -> str:
    """The gist of the method's summary (:func:`protocol.schema.gist`), and how to confirm a
    two-step one; the reference docs keep the long form."""
    return gist(spec.summary) + (TWO_STEP_HINT if spec.two_step else "")


class ToolCatalogue:
    """The MCP tools of a method table. Schemas are generated once; the vault enum per listing."""

    def __init__(self, specs: Iterable[AnySpec] | None = None) -> None:
        chosen = METHODS.values() if specs is None else specs
        self._specs: dict[str, AnySpec] = {s.tool_name: s for s in chosen if s.mcp}
        self._base: dict[str, dict[str, Any]] = {}
        self._instructions: dict[str, str] = {}  #: by preamble: made once, on the first handshake
        self._shared: dict[str, str] | None = None

    @property
    def shared(self) -> dict[str, str]:
        """The arguments this toolset describes once, in the instructions, with their descriptions."""
        if self._shared is None:
            self._shared = shared_descriptions(self._specs.values())
        return self._shared

    def instructions(self, preamble: str) -> str:
        """``preamble``, then each shared argument some tool takes, with its one description from
        ``protocol/``."""
        if preamble in self._instructions:
            return self._instructions[preamble]
        parts = [preamble]
        if self.shared:
            described = " ".join(f"{n}: {d}" for n, d in self.shared.items())
            parts.append(f"Arguments described once here (a tool's own description wins): {described}")
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
                base = self._base[name] = _definition(spec, self.shared)
            tool = dict(base, inputSchema=with_vault_enum(base["inputSchema"], vaults))
            if not annotated:
                tool.pop("annotations", None)
            tools.append(tool)
        return tools


def shared_descriptions(specs: Iterable[AnySpec]) -> dict[str, str]:
    """The arguments a toolset describes once, in its instructions, each with its description.

    First the :data:`SHARED_ARGUMENTS` some tool takes (the shortest wording, where two rooms word
    one meaning differently, as a note's and a file's ``expected_sha``); then every other argument
    whose description is word for word the same in two or more of ``specs`` (a note ``target``,
    a proposal ``id``): its most common wording, if that is at least a third of the tools that
    describe the name (``limit`` has a wording of its own in nearly every tool, and none of them
    is the word's meaning). A tool whose argument says something else (a file's ``target``) keeps
    its own description.
    """
    found: dict[str, str] = {}
    repeated: dict[str, dict[str, int]] = {}
    for spec in specs:
        fields = compact_schema(spec.params, hidden=NOT_OFFERED).get("properties", {})
        for name, field in fields.items():
            text = field.get("description")
            if not isinstance(text, str):
                continue
            if name in SHARED_ARGUMENTS:
                if name not in found or len(text) < len(found[name]):
                    found[name] = text
            else:
                wordings = repeated.setdefault(name, {})
                wordings[text] = wordings.get(text, 0) + 1
    shared = {name: found[name] for name in SHARED_ARGUMENTS if name in found}
    for name, wordings in repeated.items():
        text, count = max(wordings.items(), key=lambda item: item[1])
        if count >= 2 and count * 3 >= sum(wordings.values()):
            shared[name] = text
    return shared


def _input_schema(spec: AnySpec, shared: dict[str, str]) -> dict[str, Any]:
    """The compact schema, a shared argument's description left to the instructions."""
    schema = compact_schema(spec.params, hidden=NOT_OFFERED)
    for name, field in schema.get("properties", {}).items():
        if name in SHARED_ARGUMENTS or (name in shared and field.get("description") == shared[name]):
            field.pop("description", None)
    return schema


def _definition(spec: AnySpec, shared: dict[str, str]) -> dict[str, Any]:
    """One tool: name, description, input schema and hints.

    No ``title``: "Note search" is the name ``note_search`` again, at a cost in every session. No
    ``outputSchema``: the clients that read it only validate ``structuredContent`` against it
    (none shows it to a model), and the result's JSON is in the text content anyway (docs/mcp.md).
    """
    return {
        "name": spec.tool_name,
        "description": description_of(spec),
        "inputSchema": _input_schema(spec, shared),
        "annotations": annotations_of(spec),
    }


OMITTED_HINTS: dict[str, bool] = {"readOnlyHint": False, "idempotentHint": False}
"""Hints left out when they have this value: the spec's default (MCP 2025-03-26, ToolAnnotations),
and what every host of the interop matrix reads a missing one as. Not ``destructiveHint: true``
nor ``openWorldHint: false``: the spec's defaults are true for both, but Claude Code (2.1.332)
reads a missing ``destructiveHint`` as false and a missing ``openWorldHint`` as false, so only
the hint itself says it to every host."""


def annotations_of(spec: AnySpec) -> dict[str, Any]:
    """The hints that say something. Those the spec defines as meaningless are left out
    (``destructiveHint`` and ``idempotentHint`` are "meaningful only when readOnlyHint == false"),
    and so is a hint every host reads the same when it is missing (:data:`OMITTED_HINTS`). So a
    read carries ``readOnlyHint`` and ``openWorldHint``; an append ``destructiveHint: false`` and
    ``openWorldHint``; a move ``destructiveHint: true`` and ``openWorldHint``."""
    hints: dict[str, bool] = {"readOnlyHint": spec.read_only}
    if not spec.read_only:
        hints.update(destructiveHint=spec.destructive, idempotentHint=spec.idempotent)
    hints["openWorldHint"] = False  # a vault is a closed world: no web, no third parties
    return {name: value for name, value in hints.items() if OMITTED_HINTS.get(name) is not value}


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
    fields = type(params).__struct_fields__
    for name in HIDDEN_FIELDS:
        if name in fields and getattr(params, name) != _default(type(params), name):
            message = f"Object contains unknown field `{name}`"  # as for any key the schema does not offer
            raise invalid_params(f"invalid arguments for {spec.tool_name}: {message}", f"$.arguments.{name}")
    always = {name: value for name, value in ALWAYS.items() if name in fields}
    return msgspec.structs.replace(params, **always) if always else params


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
