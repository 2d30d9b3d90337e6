"""note.patch: exact text replacements in a note's body, all or nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.limits import MAX_PATCH_TEXT_BYTES, over_bound
from protocol.methods import writes
from protocol.methods.writes import Edit, PatchParams
from vaultd.errors import InvalidParams, LimitExceeded, ValidationFailed
from vaultd.ops._runner import no_detail
from vaultd.ops._stamps import stamp_updated
from vaultd.ops.catalog import operation
from vaultd.relink import broken_links, repointed, warnings_for
from vaultd.txn.plan import Change, Plan
from vaultd.vault import frontmatter
from vaultd.vault.model import LinkKind

if TYPE_CHECKING:
    from vaultd.ops._context import OpContext


def _occurrences(text: str, needle: str) -> list[int]:
    """Every start of ``needle``, overlapping ones included (so 'aa' in 'aaa' is two)."""
    found, i = [], text.find(needle)
    while i >= 0:
        found.append(i)
        i = text.find(needle, i + 1)
    return found


def apply_edits(text: str, body_offset: int, edits: list[Edit]) -> str:
    """The text with each edit's old text replaced, where it occurs exactly once in the body.

    Raises:
        ValidationFailed: VALIDATION, an old text is missing, repeated or in the frontmatter, or two
            edits overlap.
    """
    spans: list[tuple[int, int, str]] = []
    for n, edit in enumerate(edits, 1):
        hits = _occurrences(text, edit.old)
        where = f"edit {n}" if len(edits) > 1 else "old"
        if not hits:
            raise ValidationFailed(f"{where}: the text to replace was not found; read the note again")
        if len(hits) > 1:
            raise ValidationFailed(f"{where}: the text to replace occurs {len(hits)} times; include more context")
        if hits[0] < body_offset:
            raise ValidationFailed(f"{where}: starts in the frontmatter; use note.set_frontmatter")
        spans.append((hits[0], hits[0] + len(edit.old), edit.new))
    spans.sort()
    for (_, end, _), (start, _, _) in zip(spans, spans[1:], strict=False):
        if start < end:
            raise ValidationFailed("two edits overlap; merge them into one")
    out, pos = [], 0
    for start, end, new in spans:
        out += [text[pos:start], new]
        pos = end
    out.append(text[pos:])
    return "".join(out)


@operation(writes.PATCH, detail=no_detail)
def plan_patch(ctx: OpContext, params: PatchParams) -> Plan:
    """Plan a patch: exact text replacements in a note's body, optionally repointing links to a
    renamed heading.

    Raises:
        InvalidParams: INVALID_PARAMS, not exactly one of old/new and edits is given.
        LimitExceeded: LIMIT, an old or new text is over ``MAX_PATCH_TEXT_BYTES``.
        ValidationFailed: VALIDATION, ``rewrite_anchors`` without exactly one heading renamed.
    """
    single = params.old is not None or params.new is not None
    if single == (params.edits is not None):
        raise InvalidParams("give either old and new, or edits, not both and not neither")
    if single and (params.old is None or params.new is None):
        raise InvalidParams("old and new go together")
    edits = params.edits if params.edits is not None else [Edit(old=params.old or "", new=params.new or "")]
    for n, edit in enumerate(edits):
        where = "" if params.edits is None else f"edits[{n}]."
        problem = over_bound(f"{where}old", edit.old, MAX_PATCH_TEXT_BYTES) or over_bound(f"{where}new", edit.new, MAX_PATCH_TEXT_BYTES)
        if problem:
            raise LimitExceeded(problem)
    path = ctx.find(params.target)
    raw, text = ctx.read_target(path)
    changed = apply_edits(text, frontmatter.parse(text).body_offset, edits)
    broken, rename = broken_links(ctx, path, text, changed)
    others: list[Change] = []
    warnings = []
    if broken and params.rewrite_anchors:
        if rename is None:
            raise ValidationFailed(
                "rewrite_anchors: the edit does not rename exactly one heading, so there is no "
                "single heading to repoint the links to; rename one heading per patch"
            )
        changed, others, left = repointed(ctx, path, changed, broken, rename)
        if left:
            warnings = warnings_for(ctx, path, [b for b in broken if b.link.kind == LinkKind.MARKDOWN], None)
    else:
        warnings = warnings_for(ctx, path, broken, rename)
    changed = stamp_updated(ctx, path, changed)
    summary = f"patched {path} ({len(edits)} edit{'s' if len(edits) > 1 else ''})"
    if others:
        summary += f"; repointed links in {len(others)} note{'s' if len(others) > 1 else ''}"
    return Plan(
        op="note.patch", changes=[Change(path=path, before=raw, after=changed.encode("utf-8")), *others], summary=summary, warnings=warnings
    )
