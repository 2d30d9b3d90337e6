"""property.rename: a frontmatter property renamed in every note that has it, as one operation.

Only the key's characters change in each note (:func:`~vaultd.vault.frontmatter_emit.rename_key`);
values, order, comments and bodies keep their bytes. Names match case-insensitively, as Obsidian
compares them, so ``Status`` and ``status`` are both renamed. ``.obsidian/types.json`` is not
written (vaultd leaves Obsidian's settings to Obsidian): a declared type stays under the old name
until a person changes it in Obsidian. Notes private to the caller are neither read nor written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.methods import properties
from vaultd.errors import InvalidParams, NotFound
from vaultd.obsidian.property_types import key_of
from vaultd.ops._bounds import check_size_first
from vaultd.ops._runner import no_detail
from vaultd.ops.catalog import operation
from vaultd.txn.plan import Change, Plan
from vaultd.vault import frontmatter
from vaultd.vault.frontmatter_emit import rename_key

if TYPE_CHECKING:
    from protocol.methods.properties import PropertyRenameParams
    from vaultd.ops._context import OpContext


@operation(properties.PROPERTY_RENAME, detail=no_detail)
def plan_property_rename(ctx: OpContext, params: PropertyRenameParams) -> Plan:
    """Plan the rename in every note the caller sees that has the property.

    Raises:
        NotFound: NOT_FOUND, no note has the property.
        InvalidParams: INVALID_PARAMS, a note has both names (it names the notes), or the names are
            the same.
        LimitExceeded: LIMIT, more notes than one operation may write.
    """
    if params.old == params.new:
        raise InvalidParams("old and new are the same name")
    old = key_of(params.old)
    hidden = ctx.visibility.hidden
    holders = sorted(
        path
        for path, record in ctx.index.notes.items()
        if record.frontmatter and any(key_of(k) == old for k in record.frontmatter) and not hidden(path)
    )
    if not holders:
        raise NotFound(f"no note has a property {params.old!r}")
    clash = [p for p in holders if params.new in (ctx.index.notes[p].frontmatter or {}) and key_of(params.new) != old]
    if clash:
        raise InvalidParams(f"{len(clash)} notes already have {params.new!r}: {', '.join(clash[:10])}; merge those by hand first")
    check_size_first(ctx, "property.rename", [], holders)
    changes: list[Change] = []
    for path in holders:
        raw, text = ctx.read_text(path)
        after = text
        for key in list((frontmatter.parse(text).data or {}).keys()):
            if key_of(key) == old and key != params.new:
                after = rename_key(after, key, params.new)
        changes.append(Change(path=path, before=raw, after=after.encode("utf-8")))
    return Plan(
        op=properties.PROPERTY_RENAME.name,
        changes=changes,
        summary=f"renamed property {params.old!r} to {params.new!r} in {len(holders)} notes",
    )
