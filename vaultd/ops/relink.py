"""Every file whose links a relocation concerns, rewritten: move and merge keep the vault's links
pointing where they did by the same pass over the notes that link in and the files besides notes
(canvases, bases, bookmarks; :mod:`vaultd.ops.obsidian_files`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vaultd.ops.obsidian_files import Rewritten, rewrite_obsidian_files
from vaultd.ops.rewrite import rewrite_links
from vaultd.txn.plan import Change

if TYPE_CHECKING:
    from collections.abc import Iterable

    from vaultd.ops._context import OpContext
    from vaultd.ops.relocation import Relocation


def relink(ctx: OpContext, reloc: Relocation, sources: Iterable[str]) -> Rewritten:
    """The changes ``reloc`` needs in the notes ``sources`` and then in the files besides notes, in
    that order (receipts list them so); a note whose links all still resolve is left out.

    Raises:
        Conflict: CONFLICT when a note was removed since it was indexed or is not UTF-8.
        ValidationFailed: VALIDATION (V03) when a link in a file besides notes cannot be rewritten.
    """
    out = Rewritten()
    for source in sources:
        raw, text = ctx.read_text(source)
        fixed, found = rewrite_links(text, source, reloc)
        if found:
            out.changes.append(Change(path=source, before=raw, after=fixed.encode("utf-8")))
            out.rewrites += found
    others = rewrite_obsidian_files(ctx, reloc)
    out.changes += others.changes
    out.rewrites += others.rewrites
    out.warnings += others.warnings
    return out
