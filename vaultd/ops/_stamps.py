"""Date stamps on authored writes: ``created`` on create, the "last edited" key on every authored edit.

Which key records the last edit is the vault's ``stamp_keys`` (default ``["updated"]``; some
vaults say ``modified`` or ``date_modified``). An edit stamps the first of them the note already
has. A note that has none is left so in the open profile: its header is the person's, and a key
they never used is noise in their diff. The typed profile, whose notes are meant to carry it, adds
the first key. vaultd never adds a header just to record a date, and a header that cannot be
edited losslessly (a flow mapping, anchors) keeps its bytes: the write goes on unstamped with a
warning instead. A created note gets ``created`` and the first key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.methods.vaults import SchemaProfile, VaultEntry
from vaultd.errors import ValidationFailed
from vaultd.vault import frontmatter
from vaultd.vault.frontmatter_emit import emit

if TYPE_CHECKING:
    from collections.abc import Mapping

    from vaultd.ops._context import OpContext


def updated_key(entry: VaultEntry, data: Mapping[str, Any]) -> str | None:
    """The key an authored edit of a note with header ``data`` stamps, or None for no stamp."""
    keys = entry.stamp_keys
    present = next((key for key in keys if key in data), None)
    if present is not None or entry.schema is SchemaProfile.OPEN:
        return present
    return keys[0] if keys else None


def stamp_updated(ctx: OpContext, path: str, text: str) -> str:
    fm = frontmatter.parse(text)
    if not fm.present or fm.data is None:
        return text
    key = updated_key(ctx.entry, fm.data)
    if key is None or fm.data.get(key) == ctx.today:
        return text
    try:
        return emit(text, {key: ctx.today})
    except ValidationFailed:
        ctx.warnings.append(
            Issue(
                code=IssueCode.V01,
                severity=Severity.WARNING,
                path=path,
                message=f"the header cannot be edited losslessly, so '{key}' was not stamped; "
                "rewrite it as a block mapping with plain values",
            )
        )
        return text
