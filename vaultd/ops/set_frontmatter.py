"""note.set_frontmatter: set and unset keys; every other key keeps its bytes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from protocol.methods import writes
from protocol.methods.vaults import SchemaProfile
from vaultd.errors import InvalidParams
from vaultd.obsidian.property_types import BUILT_IN, PropertyValueError, coerce, index_types, key_of, read_types
from vaultd.ops._runner import no_detail
from vaultd.ops._stamps import updated_key
from vaultd.ops.catalog import operation
from vaultd.policy.schema import topic_names
from vaultd.sources import references
from vaultd.tidy import sections
from vaultd.txn.plan import Change, Plan
from vaultd.vault import frontmatter
from vaultd.vault.frontmatter_emit import emit

if TYPE_CHECKING:
    from protocol.methods.writes import SetFrontmatterParams
    from vaultd.ops._context import OpContext


def typed_values(ctx: OpContext, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` checked against each property's type in the vault and put in Obsidian's form
    (dates ``YYYY-MM-DD``, lists as lists); a property the vault does not know yet keeps its value.

    The type is built in (tags, aliases, cssclasses), declared in ``.obsidian/types.json``, or
    the one most of the property's values in the notes the caller sees have.

    Raises:
        InvalidParams: INVALID_PARAMS, a value does not fit its property's type (the message names
            the property, its type and the value).
    """
    if not values:
        return values
    declared = read_types(ctx.root)
    known = None
    out: dict[str, Any] = {}
    for name, value in values.items():
        key = key_of(name)
        kind = BUILT_IN.get(key) or declared.get(key)
        if kind is None:
            if known is None:
                hidden = ctx.visibility
                known = index_types(ctx.index, ctx.root, hidden.hidden if hidden.hides_anything else None)
            summary = known.get(key)
            kind = summary.type if summary is not None else None
        try:
            out[name] = coerce(name, kind, value) if kind is not None else value
        except PropertyValueError as exc:
            raise InvalidParams(str(exc)) from exc
    return out


@operation(writes.SET_FRONTMATTER, detail=no_detail)
def plan_set_frontmatter(ctx: OpContext, params: SetFrontmatterParams) -> Plan:
    """Plan a frontmatter edit that keeps every other key's bytes.

    Raises:
        InvalidParams: INVALID_PARAMS, nothing to set or unset, or a key both set and unset.
    """
    if not params.set and not params.unset:
        raise InvalidParams("nothing to change: give set, unset or both")
    both = set(params.set) & set(params.unset)
    if both:
        raise InvalidParams(f"a key cannot be both set and unset: {', '.join(sorted(both))}")
    path = ctx.find(params.target)
    raw, text = ctx.read_target(path)
    current = frontmatter.parse(text).data or {}
    params_set = typed_values(ctx, params.set)
    # Compared as JSON so that true and 1 differ, as they do in the file.
    no_op = all(k in current and msgspec.json.encode(current[k]) == msgspec.json.encode(v) for k, v in params_set.items()) and not any(
        k in current for k in params.unset
    )
    fields = references.normalized(dict(params_set))
    key = updated_key(ctx.entry, {**current, **fields})
    if not no_op and key is not None and key not in params.unset and key not in params.set:
        fields[key] = ctx.today
    changed = text if no_op else emit(text, fields, params.unset)
    if not no_op and ctx.entry.schema is SchemaProfile.TYPED and ("topics" in fields or "topics" in params.unset):
        # the body's '## Topics' list follows the frontmatter topics in the same write (V14)
        names = topic_names(fields.get("topics"))
        if names != topic_names(current.get("topics")):
            changed = sections.sync_topics(changed, names)
    return Plan(
        op="note.set_frontmatter",
        changes=[Change(path=path, before=raw, after=changed.encode("utf-8"))],
        summary=f"set frontmatter of {path}",
    )
