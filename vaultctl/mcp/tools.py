"""The tool list, generated from the method table, and the decoding of a call's arguments.

Nothing here names a method: every method the table flags ``mcp=True`` becomes a tool, in table
order, so a method added to the table is a tool with no change to the shim; the methods a tool
family serves (:mod:`vaultctl.mcp.families`) are one tool, listed where its first member is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

from protocol.schema import compact_schema, gist, person_only_fields
from protocol.table import METHODS
from vaultctl.mcp.errors import invalid_params
from vaultctl.mcp.families import FAMILIES, Family, family_of, family_schema, hints, signature
from vaultctl.mcp.schemas import VaultChoice, with_vault_enum

if TYPE_CHECKING:
    from collections.abc import Iterable

    from protocol.methods.common import Params
    from protocol.methods.spec import AnySpec

_AT_PATH = re.compile(r" - at `(\$[^`]*)`$")
_UNKNOWN_FIELD = re.compile(r"unknown field `([^`]*)`")
_EMPTY_ARGS = msgspec.Raw(b"{}")

TWO_STEP_HINT = " Two-step."
TWO_STEP_RULE = "A two-step tool previews first; repeat the call with confirm=true and the preview's fingerprint to apply it."
"""How a two-step tool is confirmed, said once in the instructions of a toolset that has one
instead of in each such tool's description (eight in the full set), which says only that it is."""
SAID_BY_TWO_STEP_RULE = ("confirm", "fingerprint")  #: shared arguments the rule describes, not described again
NOTE_ASIDE = " (a path, name or alias)"
NOTE_RULE = "Notes are named by vault-relative path, name or alias."
"""How any argument naming a note names it, said once in the instructions instead of after each
such argument's description (:data:`NOTE_ASIDE`, which the schemas leave out)."""
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
    "limit",
    "max_bytes",
)
"""Arguments that mean one thing in every tool that takes them, however each room words it. Each
is described once, in the server's instructions (:meth:`ToolCatalogue.instructions`), not again in
every schema: 61 tools take ``vault``, and its sentence in each cost an agent's context about 750
tokens. Besides these, any argument whose description is word for word the same in two tools of a
toolset is described once too (:func:`shared_descriptions`)."""
SHARED_WORDING = {
    "limit": "At most this many items (a page, where the answer pages).",
    "max_bytes": "At most this many bytes of text in the answer.",
    "op_id": "An operation id, from a receipt or op.list.",
    "expected_sha": "CONFLICT unless the file still has this sha256 (or a prefix of it).",
    "expected_mtime_ns": "CONFLICT unless the file still has this mtime (from file.list or file.read).",
}
"""The one description of a shared argument whose rooms each word it for their own items (``limit``:
hits, tags, commits; ``max_bytes``: a note's text, a search's hits), so that none of their wordings
is the meaning; the order of the items is the answer's, and the reference docs keep each room's."""
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
TWO_STEP_HIDDEN = ("dry_run",)
"""Params a two-step tool does not offer: its first call is the preview, planned and validated
with nothing written, which is all ``dry_run`` does elsewhere (nine tools' schemas are an argument
shorter). A call that sends one is refused as for any unknown argument."""


READ_ONLY_HIDDEN = ("write",)
"""Params a read-only tool does not offer: ``vault.lint``'s ``write`` also writes the findings as
a report with a log line, which would make a tool its host trusts as read-only write. An agent
writes a report with ``report_write``, a write tool the gate and the host both see as one. A call
that sends it is refused as for any unknown argument."""


def hidden_of(spec: AnySpec) -> tuple[str, ...]:
    """The params ``spec``'s tool refuses though its Struct has them: besides the above, those
    its Struct marks as a person's only (:func:`protocol.schema.person_only_fields`), as
    ``memory.candidates``' ``path`` (a folder outside the vault, refused to agents by the daemon)."""
    return (
        *HIDDEN_FIELDS,
        *(TWO_STEP_HIDDEN if spec.two_step else ()),
        *(READ_ONLY_HIDDEN if spec.read_only else ()),
        *person_only_fields(spec.params),
    )


def not_offered(spec: AnySpec) -> tuple[str, ...]:
    """The params ``spec``'s tool schema leaves out: those it refuses and those every call carries."""
    return (*hidden_of(spec), *ALWAYS)


_METHOD_NAME = re.compile(r"\b[a-z]+(?:\.[a-z_]+)+\b")


def as_called(text: str) -> str:
    """``text`` with each method it names that an agent may call written as the agent calls it:
    its tool's name, or its family's name and selector (``op.list`` is ``vault_info
    view=operations``). ``protocol/`` describes methods by their names, which no tool carries."""

    def face(found: re.Match[str]) -> str:
        spec = METHODS.get(found.group(0))
        if spec is None or not spec.mcp:
            return found.group(0)
        family = family_of(spec.name)
        return spec.tool_name if family is None else f"{family.name} {family.selector}={family.key(spec)}"

    return _METHOD_NAME.sub(face, text)


def _called_throughout(node: Any) -> Any:
    """A tool definition with :func:`as_called` applied to every description in it."""
    if isinstance(node, dict):
        return {k: as_called(v) if k == "description" and isinstance(v, str) else _called_throughout(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_called_throughout(v) for v in node]
    return node


def description_of(spec: AnySpec) -> str:
    """The gist of the method's summary (:func:`protocol.schema.gist`), and how to confirm a
    two-step one; the reference docs keep the long form."""
    return gist(spec.summary) + (TWO_STEP_HINT if spec.two_step else "")


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call decoded: the method it reaches, its params, and the arguments that chose the
    method without being its own (a family's selector), which a continuing call must repeat."""

    spec: AnySpec
    params: Params
    carry: dict[str, Any]


class ToolCatalogue:
    """The MCP tools of a method table. Schemas are generated once; the vault enum per listing."""

    def __init__(self, specs: Iterable[AnySpec] | None = None) -> None:
        chosen = METHODS.values() if specs is None else specs
        self._specs: dict[str, AnySpec] = {s.tool_name: s for s in chosen if s.mcp}
        self._tools: dict[str, AnySpec | Family] = {}  #: the listed tools, by name, in table order
        self._members: dict[str, dict[str, AnySpec]] = {}  #: a family's members by selector value
        present = {s.name: s for s in self._specs.values()}
        for spec in self._specs.values():
            family = family_of(spec.name)
            if family is None:
                self._tools[spec.tool_name] = spec
            elif family.name not in self._tools:
                self._tools[family.name] = family
                self._members[family.name] = {family.key(present[m]): present[m] for m in family.methods if m in present}
        self._offered: dict[str, tuple[str, ...]] = {}  #: a member's arguments, by method name
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
        if any(s.two_step for s in self._specs.values()):
            parts.append(TWO_STEP_RULE)
        parts.append(NOTE_RULE)
        if self.shared:
            said = SAID_BY_TWO_STEP_RULE if any(s.two_step for s in self._specs.values()) else ()
            described = " ".join(f"{n}: {d}" for n, d in self.shared.items() if n not in said)
            parts.append(f"Shared arguments: {described}")
        text = self._instructions[preamble] = as_called(" ".join(parts))
        return text

    @property
    def names(self) -> list[str]:
        """The listed tools' names: a family's, not its members'."""
        return list(self._tools)

    def methods_of(self, name: str) -> list[AnySpec]:
        """The methods a listed tool reaches: a family's members in its order, or the one method."""
        tool = self._tools[name]
        return list(self._members[name].values()) if isinstance(tool, Family) else [tool]

    def call_of(self, spec: AnySpec) -> tuple[str, dict[str, Any]]:
        """The listed tool that reaches ``spec`` and the arguments that choose it there."""
        family = family_of(spec.name)
        if family is None or family.name not in self._tools:
            return spec.tool_name, {}
        return family.name, {family.selector: family.key(spec)}

    def decode(self, name: object, arguments: msgspec.Raw) -> Call:
        """The method a tool call reaches and its params. A member's own tool name (a call written
        before its family) reaches it too.

        Raises:
            McpError: -32602 for a name that is not one of our tools, a family call without a
                member, or arguments the method does not take.
        """
        tool = self._tools.get(name) if isinstance(name, str) else None
        if isinstance(tool, Family):
            return self._decode_member(tool, arguments)
        spec = self._specs.get(name) if isinstance(name, str) else None
        if spec is None:
            known = any(s.mcp and s.tool_name == name for s in METHODS.values()) or any(f.name == name for f in FAMILIES)
            if known:
                message = f"tool {name!r} is not in this server's toolset; add it to the entry's --tools (vaultctl mcp --tools NAME,...)"
            else:
                message = f"unknown tool {name!r}; call tools/list for the tools this server offers"
            raise invalid_params(message, "$.params.name")
        return Call(spec, decode_arguments(spec, arguments), {})

    def _decode_member(self, family: Family, arguments: msgspec.Raw) -> Call:
        """A family call: the selector picks the member, whose own arguments are all the call may
        carry besides it (a neighbour's argument is refused, naming the member's)."""
        raw = bytes(arguments)
        body = {} if raw in (b"", b"null") else msgspec.json.decode(raw)
        if not isinstance(body, dict):
            raise invalid_params(f"invalid arguments for {family.name}: Expected `object`", "$.arguments")
        members = self._members[family.name]
        key = body.pop(family.selector, None)
        spec = members.get(key) if isinstance(key, str) else None
        if spec is None:
            raise invalid_params(
                f"invalid arguments for {family.name}: {family.selector} must be one of {', '.join(members)}, not {key!r}",
                f"$.arguments.{family.selector}",
            )
        offered = self._offered_of(spec)
        stray = next((k for k in body if k not in offered and k not in ALWAYS), None)
        if stray is not None:
            raise invalid_params(
                f"invalid arguments for {family.name}: {family.selector} {key} takes no {stray!r}; its arguments: {', '.join(offered)}",
                f"$.arguments.{stray}",
            )
        label = f"{family.name} ({family.selector} {key})"
        return Call(spec, decode_arguments(spec, msgspec.Raw(msgspec.json.encode(body)), label), {family.selector: key})

    def _offered_of(self, spec: AnySpec) -> tuple[str, ...]:
        offered = self._offered.get(spec.name)
        if offered is None:
            offered = self._offered[spec.name] = tuple(compact_schema(spec.params, hidden=not_offered(spec)).get("properties", {}))
        return offered

    def definitions(self, vaults: VaultChoice | None, *, structured: bool, annotated: bool = True) -> list[dict[str, Any]]:
        """Every tool's definition; ``structured`` False drops what 2025-03-26 clients do not know,
        ``annotated`` False what 2024-11-05 ones do not.

        Raises:
            FamilyConflict: a family's members cannot be one tool (:mod:`vaultctl.mcp.families`).
        """
        tools = []
        for name, tool in self._tools.items():
            base = self._base.get(name)
            if base is None:
                if isinstance(tool, Family):
                    base = _family_definition(tool, list(self._members[name].values()), self.shared)
                else:
                    base = _definition(tool, self.shared)
                base = self._base[name] = _called_throughout(base)
            definition = dict(base, inputSchema=with_vault_enum(base["inputSchema"], vaults))
            if not annotated:
                definition.pop("annotations", None)
            tools.append(definition)
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
        fields = compact_schema(spec.params, hidden=not_offered(spec)).get("properties", {})
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
    shared = {name: SHARED_WORDING.get(name, found[name]) for name in SHARED_ARGUMENTS if name in found}
    for name, wordings in repeated.items():
        text, count = max(wordings.items(), key=lambda item: item[1])
        if count >= 2 and count * 3 >= sum(wordings.values()):
            shared[name] = text
    return shared


def _input_schema(spec: AnySpec, shared: dict[str, str]) -> dict[str, Any]:
    """The compact schema, a shared argument's description left to the instructions, and so is
    how a note is named (:data:`NOTE_RULE`)."""
    schema = compact_schema(spec.params, hidden=not_offered(spec))
    for name, field in schema.get("properties", {}).items():
        if name in SHARED_ARGUMENTS or (name in shared and field.get("description") == shared[name]):
            field.pop("description", None)
        elif isinstance(field.get("description"), str):
            field["description"] = field["description"].replace(NOTE_ASIDE, "")
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
    return _annotations(spec.read_only, spec.destructive, spec.idempotent)


def _annotations(read_only: bool, destructive: bool, idempotent: bool) -> dict[str, Any]:
    hints: dict[str, bool] = {"readOnlyHint": read_only}
    if not read_only:
        hints.update(destructiveHint=destructive, idempotentHint=idempotent)
    hints["openWorldHint"] = False  # a vault is a closed world: no web, no third parties
    return {name: value for name, value in hints.items() if OMITTED_HINTS.get(name) is not value}


def _family_definition(family: Family, specs: list[AnySpec], shared: dict[str, str]) -> dict[str, Any]:
    """One tool for a family's members: the union of their schemas with the selector, its line and
    each member's signature and gist, and the hints true of every member."""
    schemas = {family.key(s): _input_schema(s, shared) for s in specs}
    common = set.intersection(*(set(s.get("properties", {})) for s in schemas.values()))
    described = " ".join(
        f"{signature(family.key(s), schemas[family.key(s)], common, SHARED_ARGUMENTS)}: {description_of(s)}" for s in specs
    )
    return {
        "name": family.name,
        "description": f"{family.line} {described}",
        "inputSchema": family_schema(family, schemas),
        "annotations": _annotations(*hints(family, specs)),
    }


def decode_arguments(spec: AnySpec, arguments: msgspec.Raw, label: str | None = None) -> Params:
    """Decode a call's arguments into the method's params Struct, refusing unknown keys.
    ``label``: how errors name the tool (a family's name and selector); its own name by default.

    Raises:
        McpError: -32602 naming the field, e.g. ``$.arguments.limit``.
    """
    raw = _EMPTY_ARGS if bytes(arguments) in (b"", b"null") else arguments
    label = label or spec.tool_name
    try:
        params: Params = msgspec.json.decode(raw, type=spec.params)
    except msgspec.ValidationError as exc:  # the Raw was cut from a parsed frame, so only shapes can fail
        message = str(exc)
        raise invalid_params(f"invalid arguments for {label}: {message}", argument_path(message)) from exc
    fields = type(params).__struct_fields__
    for name in hidden_of(spec):
        if name in fields and getattr(params, name) != _default(type(params), name):
            message = f"Object contains unknown field `{name}`"  # as for any key the schema does not offer
            raise invalid_params(f"invalid arguments for {label}: {message}", f"$.arguments.{name}")
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
