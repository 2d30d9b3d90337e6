"""wikify.link: mentions in a note replaced by links, exactly as a person reviewed them.

The operation is what a wikify proposal holds; no caller runs it directly. Its params carry the
note's sha as reviewed and each replacement's characters, so applying the whole proposal, or the
links a person chose of it (``wikify.accept``), writes those replacements into those bytes and
nothing else: a note changed since refuses, a mention no longer where it was refuses.

The suggestions themselves are found here too (:func:`suggestions`), since the link each mention
becomes is written as the vault's link format writes a new link (:meth:`OpContext.link`).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.methods import wikify
from protocol.methods.wikify import LinkEdit, Suggestion
from vaultd.errors import Conflict
from vaultd.gate.store import store_for as proposals_for
from vaultd.ops._agent_gate import pending
from vaultd.ops._runner import no_detail
from vaultd.ops._validate import check_policy, validate
from vaultd.ops.catalog import operation
from vaultd.txn.plan import Change, Plan
from vaultd.vault import oplog
from vaultd.vault.note import parse_note, stem_of
from vaultd.wikify.find import mentions, names_table

if TYPE_CHECKING:
    from protocol.methods.proposals import ProposalDetail
    from protocol.methods.wikify import WikifyLinkParams
    from vaultd.ops._agent_gate import Caller
    from vaultd.ops._context import OpContext

OP = wikify.WIKIFY_LINK.name


def link_for(ctx: OpContext, path: str, source: str, text: str) -> str:
    """The link to ``path`` that replaces ``text`` in ``source``: the vault's link format, showing
    the note's own spelling (as an alias or a Markdown link's text) when the link would not."""
    made = ctx.link(path, source)
    if made.startswith("[["):
        inner = made[2:-2]
        shown = inner.rsplit("/", 1)[-1]
        return made if shown == text else f"[[{inner}|{text}]]"
    dest = made[made.index("](") :]
    label = text.replace("[", "\\[").replace("]", "\\]")
    return f"[{label}{dest}"


def suggestions(ctx: OpContext, path: str) -> tuple[str, list[tuple[Suggestion, int]]]:
    """The note's sha now and its suggested links, numbered from 1, each with the character offset
    of its mention (worker thread, index held still)."""
    raw, text = ctx.read_text(path)
    record, _ = parse_note(path, raw, size=len(raw), mtime_ns=0, ino=0)
    hidden = ctx.visibility.hidden
    log_path = oplog.log_name(ctx.entry)
    table = names_table((p, [stem_of(p), *r.aliases]) for p, r in ctx.index.notes.items() if p != log_path and not hidden(p))
    spans = [(link.start, link.end) for link in record.links]
    already = {ctx.index.resolve(link, path).path for link in record.links if link.target}
    found = mentions(text, record.body_offset, spans, table, path, {p for p in already if p is not None})
    out = [
        (
            Suggestion(
                number=i, line=text.count("\n", 0, m.start) + 1, text=m.text, target=m.path, link=link_for(ctx, m.path, path, m.text)
            ),
            m.start,
        )
        for i, m in enumerate(found, start=1)
    ]
    return hashlib.sha256(raw).hexdigest(), out


def apply_links(text: str, links: list[LinkEdit]) -> str:
    """``text`` with each mention replaced by its link.

    Raises:
        Conflict: CONFLICT, a mention is not where the proposal found it, or two overlap.
    """
    out = text
    last = len(text) + 1
    for edit in sorted(links, key=lambda e: e.start, reverse=True):
        end = edit.start + len(edit.text)
        if end > last or text[edit.start : end] != edit.text:
            raise Conflict(f"the mention {edit.text!r} is not where it was reviewed; suggest the links again")
        out = out[: edit.start] + edit.link + out[end:]
        last = edit.start
    return out


@operation(wikify.WIKIFY_LINK, detail=no_detail, proposal_only=True)
def plan_link(ctx: OpContext, params: WikifyLinkParams) -> Plan:
    """The accepted links written into the bytes the person reviewed, and only those.

    Raises:
        Conflict: CONFLICT, the note changed since its links were suggested.
    """
    raw, text = ctx.read_text(params.path)
    if hashlib.sha256(raw).hexdigest() != params.sha:
        raise Conflict(f"{params.path} changed since its links were suggested; suggest them again")
    after = apply_links(text, params.links).encode("utf-8")
    return Plan(
        op=OP, changes=[Change(path=params.path, before=raw, after=after)], summary=f"linked {len(params.links)} mentions in {params.path}"
    )


def link_notices(links: list[Suggestion]) -> list[Issue]:
    """One line per link, for the person who accepts them by number."""
    return [
        Issue(
            code=IssueCode.G06,
            severity=Severity.INFO,
            message=f"link {s.number}: line {s.line}: {s.text!r} -> {s.link}",
            path=s.target,
        )
        for s in links
    ]


def propose_links(ctx: OpContext, params: WikifyLinkParams, shown: list[Suggestion], caller: Caller) -> ProposalDetail:
    """Plan the links, validate them as any write by the caller, and store one pending proposal
    (worker thread).

    Raises:
        PolicyRefused: POLICY, the note is refused to the caller.
        ValidationFailed: VALIDATION, the linked note would be invalid.
    """
    plan = plan_link(ctx, params)
    check_policy(ctx, plan)
    plan.summary = f"link {len(params.links)} mentions in {params.path}; accept them one by one with wikify.accept"
    detail = pending(ctx.entry, plan, params, caller, [*link_notices(shown), *validate(ctx, plan)], ctx.today)
    proposals_for(ctx.root).add(detail)
    return detail
