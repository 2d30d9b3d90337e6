"""Toolsets: which tools one ``vaultctl mcp`` offers, so an agent pays only for the tools it uses.

A host that loads every tool puts every name, description and input schema in the model's context
before its first call. ``--tools`` picks the set: ``core`` (the tools an agent needs most, the
default ``vaultctl setup`` writes), ``read`` (every read-only tool), ``write`` (every tool that
changes something), ``all``, or tool names, comma-separated and mixable with set names
(``core,graph_path``). Every set but ``core`` is derived from the method table, so a tool added to
it is in ``read`` or ``write`` and ``all`` with no change here, and reachable by its name.

A family's tool (:mod:`vaultctl.mcp.families`) is offered whole: naming the family or any of its
members (``graph`` or ``graph_path``) offers every member, as one tool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.table import METHODS
from vaultctl.mcp.families import FAMILIES, family_of

if TYPE_CHECKING:
    from collections.abc import Iterable

    from protocol.methods.spec import AnySpec

CORE: tuple[str, ...] = (
    "note_search",
    "note_retrieve",
    "note_read",
    "note_read_many",
    "note_list",
    "note_links",
    "note_create",
    "note_patch",
    "note_append",
    "note_set_frontmatter",
    "daily_append",  # with daily_prepend, the daily_write family; its receipt names the day's note; daily_read is reachable by name
    "task_list",
    "task_set",
    "proposal_list",
)
"""The core set, by tool name, in the order an agent reaches for them. A name the table does not
have (yet) is skipped, so the set never names a tool that is not there."""

TOOLSETS = ("core", "read", "write", "all")
DEFAULT_TOOLSET = "all"  #: ``vaultctl mcp`` with no ``--tools``: an entry written before toolsets keeps every tool


class UnknownTools(ValueError):
    """A ``--tools`` value naming neither a toolset nor a tool; the message lists both."""


def _mcp_specs() -> dict[str, AnySpec]:
    return {s.tool_name: s for s in METHODS.values() if s.mcp}


def _named_set(name: str, specs: dict[str, AnySpec]) -> list[str] | None:
    if name == "core":
        return [n for n in CORE if n in specs]
    if name == "read":
        return [n for n, s in specs.items() if s.read_only]
    if name == "write":
        return [n for n, s in specs.items() if not s.read_only]
    if name == "all":
        return list(specs)
    return None


def resolve(choice: str) -> list[AnySpec]:
    """The specs of the tools ``choice`` names, in method-table order, each once.

    Raises:
        UnknownTools: a part names neither a toolset nor an MCP tool, or the choice is empty.
    """
    specs = _mcp_specs()
    chosen: set[str] = set()
    parts = [p.strip() for p in choice.split(",") if p.strip()]
    unknown = [] if parts else [choice]
    families = {f.name: [m.replace(".", "_") for m in f.methods] for f in FAMILIES}
    for part in parts:
        named = _named_set(part, specs)
        if named is not None:
            chosen.update(named)
        elif part in specs:
            chosen.add(part)
        elif part in families:
            chosen.update(families[part])
        else:
            unknown.append(part)
    if unknown:
        raise UnknownTools(
            f"--tools: no toolset or tool named {', '.join(repr(u) for u in unknown)}; give toolsets ({', '.join(TOOLSETS)})"
            f" or tool names, comma-separated; the tools: {', '.join(listed(specs.values()))}"
        )
    for name in list(chosen):  # a family is offered whole
        family = family_of(specs[name].name) if name in specs else None
        if family is not None:
            chosen.update(families[family.name])
    return [s for name, s in specs.items() if name in chosen]


def listed(specs: Iterable[AnySpec]) -> list[str]:
    """The tool names ``tools/list`` shows for ``specs``: a family's once, where its first member is."""
    names: dict[str, None] = {}
    for spec in specs:
        family = family_of(spec.name)
        names[spec.tool_name if family is None else family.name] = None
    return list(names)
