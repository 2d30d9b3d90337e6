"""What a change to a vault's registry entry does, setting by setting, and which parts loosen it.

``vault.set`` shows a person this list before anything changes, with every loosened setting
marked, so a policy is never relaxed by a command whose effect was not read. "Loosens" means: a
channel or an agent may now do something it could not, or something is screened less:

- ``write``: more channels may write (none < cli < mcp);
- ``kind``: org to personal (personal data and agent defaults are more permissive there);
- ``schema``: typed to open (fewer rules checked);
- ``dead_links``: refuse to warn (a link to no note is written);
- ``domains``: a domain added (a note may name more); ``git_raw``: raw copies go into git history;
- ``projects``: the log's project registry dropped (any id goes) or given an id it did not have;
- ``roles``: a user-only or journal folder dropped (agents may write it), the raw folder moved or
  dropped (its copies are no longer kept unchanged);
- ``pii``: any category, pattern or surface whose effective action drops (deny > warn > allow), a
  pattern whose regex changed, or a new allow-list entry;
- ``deny_paths`` / ``private_paths``: a glob removed;
- ``agents.<class>``: a cell moves towards apply (refuse > propose > apply); ``wide_files`` grows;
  the host guard is turned off; session context is turned on (it sends vault facts to the model).

Stamp keys change what an edit records, and parent keys which links the topic map reads, not who
may edit: never a loosening.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, get_args

import msgspec

from protocol.methods.gate import AgentPolicy, Gate
from protocol.methods.vaults import (
    DeadLinks,
    FolderRoles,
    Kind,
    PiiPolicy,
    SchemaProfile,
    SettingChange,
    VaultEntry,
    VaultSetParams,
    WritePolicy,
)
from vaultd.policy.pii import Surface, effective_action

if TYPE_CHECKING:
    from protocol.methods.vaults import PiiSetting

_WRITE_RANK = {WritePolicy.NONE: 0, WritePolicy.CLI: 1, WritePolicy.MCP: 2}
_PII_RANK = {"allow": 0, "warn": 1, "deny": 2}
_SURFACES: tuple[Surface, ...] = get_args(Surface)


def changed_entry(entry: VaultEntry, params: VaultSetParams) -> VaultEntry:
    """The entry as ``params`` would leave it (the caller validates it like a new one)."""
    updates: dict[str, Any] = {}
    for name in (
        "kind",
        "write",
        "schema",
        "pii",
        "deny_paths",
        "private_paths",
        "stamp_keys",
        "parent_keys",
        "dead_links",
        "views",
        "session_notes",
        "domains",
        "git_raw",
        "projects",
        "canon_tables",
    ):
        value = getattr(params, name)
        if value is not None:
            updates[name] = value
    if params.pii_default:
        updates["pii"] = None
    if params.no_session_notes:
        updates["session_notes"] = None
    if params.roles is not None:
        updates["roles"] = params.roles if params.roles != FolderRoles() else None
    after = msgspec.structs.replace(entry, **updates)
    if params.agents_default or params.agents is not None:
        base = _default_policy(after) if params.agents_default else entry.agent_policy()
        policy = params.agents.applied_to(base) if params.agents is not None else base
        # Keep "the kind's default" (None) when that is what results, so a later change of
        # kind still brings its default along.
        agents = None if params.agents_default and params.agents is None else policy
        after = msgspec.structs.replace(after, agents=agents)
    return after


def _default_policy(entry: VaultEntry) -> AgentPolicy:
    return msgspec.structs.replace(entry, agents=None).agent_policy()


def setting_changes(before: VaultEntry, after: VaultEntry) -> list[SettingChange]:
    """Every setting that differs, in a fixed order, each marked when it loosens."""
    out: list[SettingChange] = []

    def add(setting: str, old: Any, new: Any, loosens: bool) -> None:
        if old != new:
            out.append(SettingChange(setting=setting, before=_text(old), after=_text(new), loosens=loosens))

    add("kind", before.kind, after.kind, before.kind is Kind.ORG and after.kind is Kind.PERSONAL)
    add("write", before.write, after.write, _WRITE_RANK[after.write] > _WRITE_RANK[before.write])
    add("schema", before.schema, after.schema, before.schema is SchemaProfile.TYPED and after.schema is SchemaProfile.OPEN)
    out.extend(_pii_changes(before, after))
    add("deny_paths", before.deny_paths, after.deny_paths, not set(before.deny_paths) <= set(after.deny_paths))
    add("private_paths", before.private_paths, after.private_paths, not set(before.private_paths) <= set(after.private_paths))
    add("stamp_keys", before.stamp_keys, after.stamp_keys, False)
    add("parent_keys", before.parent_keys, after.parent_keys, False)
    add("dead_links", before.dead_link_rule(), after.dead_link_rule(), after.dead_link_rule() is DeadLinks.WARN)
    add("views", before.views, after.views, False)
    # Session notes put what agent sessions did where every agent of the vault reads it.
    add("session_notes", before.session_notes, after.session_notes, after.session_notes is not None)
    add("domains", before.domains, after.domains, not set(after.domains) <= set(before.domains))
    out.extend(_role_changes(before.folder_roles(), after.folder_roles()))
    add("git_raw", before.git_raw, after.git_raw, after.git_raw)
    dropped_or_grown = not after.projects or not set(after.projects) <= set(before.projects)
    add("projects", before.projects, after.projects, bool(before.projects) and dropped_or_grown)
    add("canon_tables", before.canon_tables, after.canon_tables, False)  # advisory: nobody may do more
    out.extend(_agent_changes(before.agent_policy(), after.agent_policy()))
    return out


def _role_changes(before: FolderRoles, after: FolderRoles) -> list[SettingChange]:
    """A closed folder reopened to agents, or the raw folder moved or dropped, loosens."""
    out: list[SettingChange] = []
    for name in FolderRoles.__struct_fields__:
        old, new = getattr(before, name), getattr(after, name)
        if old == new:
            continue
        if name in ("journal", "user_only"):
            loosens = not set(old) <= set(new)
        else:
            loosens = name == "raw" and old is not None
        out.append(SettingChange(setting=f"roles.{name}", before=_text(old), after=_text(new), loosens=loosens))
    return out


def _pii_changes(before: VaultEntry, after: VaultEntry) -> list[SettingChange]:
    """Per effective cell, so a shorthand rewritten as the same policy is no change at all."""
    out: list[SettingChange] = []
    old_patterns = _patterns(before.pii)
    new_patterns = _patterns(after.pii)
    categories = ["email", "phone", *old_patterns, *(n for n in new_patterns if n not in old_patterns)]
    for category in categories:
        for surface in _SURFACES:
            old = effective_action(before.pii, before.kind, surface, category)
            new = effective_action(after.pii, after.kind, surface, category)
            if old != new:
                loosens = _PII_RANK[new] < _PII_RANK[old]
                out.append(SettingChange(setting=f"pii.{surface}.{category}", before=old, after=new, loosens=loosens))
    for name, regex in old_patterns.items():
        if name in new_patterns and new_patterns[name] != regex:
            out.append(SettingChange(setting=f"pii.patterns.{name}", before=regex, after=new_patterns[name], loosens=True))
    old_allow, new_allow = _allow(before.pii), _allow(after.pii)
    if old_allow != new_allow:
        out.append(
            SettingChange(
                setting="pii.allow", before=_text(old_allow), after=_text(new_allow), loosens=not set(new_allow) <= set(old_allow)
            )
        )
    return out


def _patterns(policy: PiiSetting | None) -> dict[str, str]:
    return {p.name: p.regex for p in policy.patterns} if isinstance(policy, PiiPolicy) else {}


def _allow(policy: PiiSetting | None) -> list[str]:
    return list(policy.allow) if isinstance(policy, PiiPolicy) else []


def _agent_changes(before: AgentPolicy, after: AgentPolicy) -> list[SettingChange]:
    out: list[SettingChange] = []
    for name in AgentPolicy.__struct_fields__:
        old, new = getattr(before, name), getattr(after, name)
        if old == new:
            continue
        if isinstance(old, Gate):
            loosens = Gate(new).rank < old.rank
        elif name == "wide_files":
            loosens = new > old
        elif name == "guard":
            loosens = old and not new
        elif name == "hot":  # a part added tells the model more
            loosens = not set(new) <= set(old)
        elif name == "hot_bytes":
            loosens = new > old
        elif name == "hot_pinned":  # another note's text goes to the model
            loosens = new is not None
        else:  # session_context: vault facts go to the model
            loosens = new and not old
        out.append(SettingChange(setting=f"agents.{name}", before=_text(old), after=_text(new), loosens=bool(loosens)))
    return out


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list) and not value:
        return "(none)"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return msgspec.json.encode(value).decode()
