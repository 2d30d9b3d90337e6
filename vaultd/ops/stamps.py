"""Date stamps on authored writes: ``created`` on create, ``updated`` on every authored edit.

A note gets stamped only when it already has a frontmatter header (or is being created):
vaultd never adds a header to a person's note just to record a date. A header that cannot be
edited losslessly (a flow mapping, anchors) keeps its bytes; the write goes on unstamped with a
warning instead.
"""

from __future__ import annotations

from protocol.errors import Issue, Severity
from vaultd.errors import ValidationFailed
from vaultd.ops.context import OpContext
from vaultd.vault import frontmatter
from vaultd.vault.frontmatter_emit import emit


def stamp_updated(ctx: OpContext, path: str, text: str) -> str:
    fm = frontmatter.parse(text)
    if not fm.present or fm.data is None:
        return text
    if fm.data.get("updated") == ctx.today:
        return text
    try:
        return emit(text, {"updated": ctx.today})
    except ValidationFailed:
        ctx.warnings.append(Issue(code="V01", severity=Severity.WARNING, path=path,
                                  message="the header cannot be edited losslessly, so 'updated' was not stamped; "
                                          "rewrite it as a block mapping with plain values"))
        return text
