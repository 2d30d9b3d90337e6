"""note.append: Markdown added at the end of a named H2 section, created when absent."""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.limits import MAX_APPEND_BYTES, over_bound
from protocol.methods import writes
from vaultd.errors import Ambiguous, InvalidParams, LimitExceeded
from vaultd.ops._runner import no_detail
from vaultd.ops._stamps import stamp_updated
from vaultd.ops.catalog import operation
from vaultd.txn.plan import Change, Plan
from vaultd.vault import frontmatter, markdown

if TYPE_CHECKING:
    from protocol.methods.writes import AppendParams
    from vaultd.ops._context import OpContext

TOPICS = "Topics"


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def append_to_section(text: str, section: str, addition: str) -> str:
    """The note's text with ``addition`` at the end of its H2 ``section``, made if missing, in the
    note's own newlines.

    Raises:
        Ambiguous: AMBIGUOUS, more than one H2 section has that name.
    """
    nl = _newline(text)
    block = addition.replace("\r\n", "\n").strip("\n").replace("\n", nl)
    body_offset = frontmatter.parse(text).body_offset
    spans = markdown.section_spans(text, body_offset, section)
    if len(spans) > 1:
        raise Ambiguous(f"the note has {len(spans)} H2 sections named {section!r}")
    if spans:
        start, end = spans[0]
        head = text[:end].rstrip("\r\n")
        tail = text[end:]
        return head + nl + nl + block + nl + (nl if tail else "") + tail
    topics = markdown.section_spans(text, body_offset, TOPICS)
    new_section = f"## {section}{nl}{nl}{block}{nl}"
    if topics:
        start = topics[0][0]
        return text[:start] + new_section + nl + text[start:]
    base = text.rstrip("\r\n")
    return (base + nl + nl if base.strip() else base) + new_section


@operation(writes.APPEND, detail=no_detail)
def plan_append(ctx: OpContext, params: AppendParams) -> Plan:
    """Plan an append: a section's own text grows, nothing else of the note changes.

    Raises:
        InvalidParams: INVALID_PARAMS, the section is Topics, or not a bare one-line heading.
        LimitExceeded: LIMIT, the Markdown is over ``MAX_APPEND_BYTES``.
    """
    if params.section.strip().casefold() == TOPICS.casefold():
        raise InvalidParams("append does not write to Topics; use note.set_frontmatter or note.link")
    if "\n" in params.section or params.section.startswith("#"):
        raise InvalidParams("section is the heading text alone, on one line, without '#'")
    if problem := over_bound("markdown", params.markdown, MAX_APPEND_BYTES):
        raise LimitExceeded(problem)
    path = ctx.find(params.target)
    raw, text = ctx.read_target(path)
    changed = stamp_updated(ctx, path, append_to_section(text, params.section.strip(), params.markdown))
    return Plan(
        op="note.append",
        changes=[Change(path=path, before=raw, after=changed.encode("utf-8"))],
        summary=f"appended to {path} § {params.section.strip()}",
    )
