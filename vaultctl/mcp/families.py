"""Tool families: one MCP tool for several methods that are views or steps of one concept.

Every tool an agent's host lists costs its context a name, a description, a schema and hints in
every session, and most of that is structure (a tool's frame, each argument's type), not meaning.
Where several methods are one concept seen several ways (the link graph's neighbours, paths,
communities) or the steps of one thing (a piece of work started, reported on, finished), one tool
serves them: a required selector argument names the member, the schema is the union of the
members' arguments, and the description is one line for the concept and each member's signature
and gist. So every capability stays reachable, for less.

A family is declared here once, by method; everything else is derived from the methods in
``protocol/``: the members' selector values (the method name's last part: ``graph.path`` is
``view: "path"``), the schema, the description and the hints. Two rules keep a family honest:

- its members have one effect as MCP hints tell it (all reads, or all writes that destroy alike):
  a host that asks before a destructive call, or lets reads run unasked, must be right about every
  member. A member that is idempotent where another is not makes the family not idempotent (a
  hint left out claims nothing).
- an argument two members name alike is one argument only when it is the same in both; where
  their descriptions or defaults differ, the family must say in :attr:`Family.same` how one
  description covers both, and where their types differ it cannot be one argument at all.
  Otherwise :func:`family_schema` raises :class:`FamilyConflict`: a merge is never silent.

A call by a member's own tool name (``graph_path``, as hosts' entries and scripts written before
families call it) is still answered, as that member; ``tools/list`` names only the family.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from protocol.methods.spec import AnySpec


class FamilyConflict(ValueError):
    """Members of one family that cannot be one tool: a hint they disagree on, or an argument
    two of them name alike for different things."""


@dataclass(frozen=True, slots=True)
class Family:
    """One MCP tool serving several methods."""

    name: str  #: the tool's name
    selector: str
    """The required argument naming the member: ``view`` for reads, ``action`` for writes (and for
    Bases, whose ``base.query`` has a ``view`` of its own)."""
    line: str  #: what the members share, in one line: the tool's description starts with it
    methods: tuple[str, ...]  #: the members, by method name, in the order the description lists them
    same: Mapping[str, str] = field(default_factory=dict)
    """Arguments the members describe differently though they mean one thing here, each with the
    one description the family's schema gives it ("": none, where its enum says it all)."""
    keys: Mapping[str, str] = field(default_factory=dict)
    """Selector values by method, where the method name's last part would not say which member it
    is (``daemon.status`` and ``vault.list`` are ``status``'s ``daemon`` and ``vaults``)."""

    def key(self, spec: AnySpec) -> str:
        """The selector's value that reaches ``spec``: its method name's last part, unless
        :attr:`keys` names another."""
        return self.keys.get(spec.name) or spec.name.rsplit(".", 1)[-1]


FAMILIES: tuple[Family, ...] = (
    Family(
        "vault_info",
        "view",
        "The vault as a whole.",
        ("vault.stats", "vault.tags", "vault.properties", "vault.issues", "template.list", "op.list", "checkout.list"),
        keys={"template.list": "templates", "op.list": "operations", "checkout.list": "checkouts"},
    ),
    Family("note_versions", "view", "A note's git history.", ("note.history", "note.diff")),
    Family("files", "view", "Any file of the vault, notes or not.", ("file.list", "file.read")),
    Family("bases", "action", "Obsidian Bases.", ("base.list", "base.query")),
    Family("sessions", "view", "Agent sessions.", ("session.list", "session.show")),
    Family("op_reverse", "action", "Take back an operation.", ("op.undo", "op.revert")),
    Family(
        "status", "view", "What vaultd serves.", ("daemon.status", "vault.list"), keys={"daemon.status": "daemon", "vault.list": "vaults"}
    ),
    Family("claim_read", "view", "Claims about pages.", ("claim.list", "source.evidence")),
    Family("note_relate", "action", "Relations between two notes.", ("note.link", "note.supersede")),
    Family("log_read", "view", "The vault's log.", ("log.tail", "log.grep")),
    Family(
        "graph",
        "view",
        "The link graph.",
        ("graph.neighbors", "graph.path", "graph.nav", "graph.hubs", "graph.mocs", "graph.communities"),
        same={
            "target": "Where neighbors and nav start, where a path ends.",
            "direction": "out: follow links as written; in: backlinks; both: either way.",
        },
    ),
    Family(
        "spec_read",
        "view",
        "Spec sources.",
        ("spec.get", "spec.graph", "spec.grep"),
        same={
            "id": "A spec's id (get: or its title).",
            "offset": "get: a byte offset into the body; grep: matches to skip.",
        },
    ),
    Family(
        "daily_write",
        "action",
        "Day (or period) notes.",
        ("daily.append", "daily.prepend"),
    ),
    Family(
        "claim_write",
        "action",
        "Claims about pages.",
        ("claim.add", "claim.update"),
        same={
            "state": "add's default: proposed; accepted needs current support.",
            "confidence": "",
            "risk": "add's default: low; high needs two independent sources to be accepted.",
            "assessment": "Why the claim stands as it does, in one line.",
        },
    ),
    Family("work", "action", "Your multi-step work.", ("work.start", "work.progress", "work.finish")),
    Family(
        "checkout",
        "action",
        "Checkouts.",
        ("checkout.make", "checkout.return", "checkout.cancel"),
    ),
)


def family_of(method: str) -> Family | None:
    """The family serving ``method``, if one does."""
    return _BY_METHOD.get(method)


_BY_METHOD: dict[str, Family] = {m: f for f in FAMILIES for m in f.methods}


def hints(family: Family, specs: list[AnySpec]) -> tuple[bool, bool, bool]:
    """``(read_only, destructive, idempotent)`` true of every member.

    Raises:
        FamilyConflict: the members differ in reading or destroying.
    """
    kinds = {(s.read_only, s.destructive) for s in specs}
    if len(kinds) != 1:
        named = ", ".join(f"{s.name} ({'read' if s.read_only else 'destructive' if s.destructive else 'write'})" for s in specs)
        raise FamilyConflict(f"family {family.name}: its members must all read, or all write alike: {named}")
    ((read_only, destructive),) = kinds
    return read_only, destructive, all(s.idempotent for s in specs)


_LOOSE = ("description", "default")  #: what members may word differently, if the family says how one wording covers them


def family_schema(family: Family, schemas: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """The family's input schema from its members' (by selector value, in family order): the
    selector, required and an enum of the members, then every member's arguments once.

    An argument is required when every member requires it. One that several members take is
    one property when its schema is the same in each; else it must differ only in its
    description or default and be in :attr:`Family.same`, whose description it then gets (and
    the default the members share, if any).

    Raises:
        FamilyConflict: a member's schema has ``$defs``, or an argument differs in type across
            members, or in description or default without the family saying how one covers all.
    """
    seen: dict[str, dict[str, tuple[str, ...]]] = {}  # argument -> its schema as JSON-ish key -> members
    first: dict[str, dict[str, Any]] = {}
    for key, schema in schemas.items():
        if "$defs" in schema:
            raise FamilyConflict(f"family {family.name}: {key} has shared definitions ($defs); it cannot join a family")
        if family.selector in schema.get("properties", {}):
            raise FamilyConflict(f"family {family.name}: {key} has an argument named {family.selector}, the family's selector")
        for name, prop in schema.get("properties", {}).items():
            first.setdefault(name, prop)
            variants = seen.setdefault(name, {})
            variants[repr(prop)] = (*variants.get(repr(prop), ()), key)
    properties: dict[str, Any] = {family.selector: {"enum": list(schemas)}}
    for name, variants in seen.items():
        if len(variants) == 1:
            properties[name] = first[name]
            continue
        props = [schemas[keys[0]]["properties"][name] for keys in variants.values()]
        where = "; ".join(f"{', '.join(keys)}: {text}" for text, keys in variants.items())
        bare = {repr({k: v for k, v in p.items() if k not in _LOOSE}) for p in props}
        if len(bare) > 1:
            raise FamilyConflict(f"family {family.name}: argument {name!r} has different types across its members ({where})")
        if name not in family.same:
            raise FamilyConflict(
                f"family {family.name}: argument {name!r} is described differently across its members ({where});"
                " say in the family's `same` how one description covers them, or keep them apart"
            )
        defaults = {repr(p.get("default", ...)) for p in props}
        merged = {"description": family.same[name]} if family.same[name] else {}
        merged.update((k, v) for k, v in props[0].items() if k not in _LOOSE)
        if len(defaults) == 1 and "default" in props[0]:
            merged["default"] = props[0]["default"]
        properties[name] = merged
    every = [set(s.get("required", ())) for s in schemas.values()]
    required = [family.selector, *(n for n in seen if all(n in r for r in every))]
    return {"type": "object", "properties": properties, "required": required}


def signature(key: str, schema: dict[str, Any], common: set[str], shared: Iterable[str] = ()) -> str:
    """``key(a, b?, c?)``: a member's own arguments, optional ones marked as TypeScript marks them.

    Left out: those every member takes, and the ``shared`` ones (``limit``, ``cursor``,
    ``dry_run``: the instructions describe them once, as meaning one thing wherever they appear;
    a call that gives one to a member without it is refused naming the member's arguments)."""
    required = set(schema.get("required", ()))
    left_out = common | set(shared)
    args = [n if n in required else f"{n}?" for n in schema.get("properties", {}) if n not in left_out]
    return f"{key}({', '.join(args)})"
