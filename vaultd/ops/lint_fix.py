"""lint.fix: the safe mechanical lint fixes, as one ordinary two-step operation.

The planner runs lint on the vault as the caller sees it, keeps the findings that carry a fix
(L01: a bare ``[[alias]]`` to the one note carrying it; L02: an ambiguous name whose candidate in
the linking note's folder is the one Obsidian opens), and rewrites each link in its note's text.
Each fix was made from the bytes the index parsed and is checked against the bytes read now, so
a note edited meanwhile is a CONFLICT, never a guess. The runner previews it with a fingerprint,
validates the result (every rewritten link must resolve), journals it, and ``op.undo`` reverses
it. Nothing else is ever fixed: every other finding is for a person.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from protocol.methods import lint as lint_methods
from protocol.methods.lint import LintCode, LintFixDetail, LintFixParams
from protocol.methods.receipts import MAX_DETAIL_LINKS
from vaultd.errors import Conflict, InvalidParams
from vaultd.lint.engine import run, with_fixes
from vaultd.lint.gather import gather
from vaultd.memory import collector_paused
from vaultd.ops.catalog import operation
from vaultd.txn.plan import MAX_OP_FILES, Change, Plan

if TYPE_CHECKING:
    from vaultd.lint.links import TextOf
    from vaultd.lint.model import Fix
    from vaultd.ops._context import OpContext

FIXABLE = tuple(code for code in LintCode if code.fixable)


@dataclass(slots=True)
class FixPlan(Plan):
    """A plan that remembers the rewrites it makes, for the receipt's detail."""

    fixes: list[Fix] = field(default_factory=list)
    left: int = 0


def _texts(ctx: OpContext) -> tuple[dict[str, tuple[bytes, str]], TextOf]:
    read: dict[str, tuple[bytes, str]] = {}

    def text_of(rel: str) -> str | None:
        """A note's text, read once per plan and only if it is still what the lint read.

        Raises:
            Conflict: CONFLICT, the note changed since it was indexed.
        """
        if rel not in read:
            record = ctx.index.notes.get(rel)
            raw, text = ctx.read_text(rel)
            if record is None or hashlib.sha256(raw).hexdigest() != record.sha256:
                raise Conflict(f"{rel} changed since it was indexed; run lint again")
            read[rel] = (raw, text)
        return read[rel][1]

    return read, text_of


def apply_fixes(text: str, fixes: list[Fix]) -> str:
    """``text`` with every fix applied; each must find its old text where the index saw it.

    Raises:
        Conflict: CONFLICT, a fix no longer finds its text where the index saw it.
    """
    out: list[str] = []
    pos = len(text)
    for fix in sorted(fixes, key=lambda f: f.start, reverse=True):
        if fix.end > pos or text[fix.start : fix.end] != fix.old:
            raise Conflict(f"{fix.path}:{fix.line} no longer holds {fix.old}; run lint again")
        out.append(text[fix.end : pos])
        out.append(fix.new)
        pos = fix.start
    out.append(text[:pos])
    return "".join(reversed(out))


def lint_fix_detail(ctx: OpContext, plan: Plan) -> LintFixDetail:
    fixes = plan.fixes if isinstance(plan, FixPlan) else []
    left = plan.left if isinstance(plan, FixPlan) else 0
    shown = [f"{f.path}:{f.line} {f}" for f in fixes[:MAX_DETAIL_LINKS]]
    return LintFixDetail(fixes=shown, fixed=len(fixes), left=left)


@operation(lint_methods.LINT_FIX, detail=lint_fix_detail)
def plan_lint_fix(ctx: OpContext, params: LintFixParams) -> Plan:
    """Plan the mechanical fixes of the lint's findings, every note that needs one in one operation.

    Raises:
        InvalidParams: INVALID_PARAMS, the code asked for has no mechanical fix.
    """
    if params.code is not None and not params.code.fixable:
        raise InvalidParams(f"{params.code} has no mechanical fix; lint.fix applies {', '.join(FIXABLE)}")
    note = ctx.find(params.note) if params.note is not None else None
    read, text_of = _texts(ctx)
    with collector_paused():
        # No fixable finding comes from a canvas or a base: none is read under the writer.
        inp = gather(ctx.index, ctx.entry, ctx.visibility, ctx.now.date(), read={})
        found = with_fixes((f for f in run(inp, params.code) if note is None or f.note == note), text_of)
    by_note: dict[str, list[Fix]] = {}
    for finding in found:
        if finding.fix is not None and finding.code in FIXABLE and (note is None or finding.note == note):
            by_note.setdefault(finding.fix.path, []).append(finding.fix)
    paths = sorted(by_note)
    kept, later = paths[:MAX_OP_FILES], paths[MAX_OP_FILES:]
    changes = []
    fixes: list[Fix] = []
    for path in kept:
        raw, text = read[path]
        changes.append(Change(path=path, before=raw, after=apply_fixes(text, by_note[path]).encode("utf-8")))
        fixes += sorted(by_note[path], key=lambda f: f.start)
    count = len(fixes)
    summary = f"lint fix: rewrote {count} link{'s' if count != 1 else ''} in {len(changes)} note{'s' if len(changes) != 1 else ''}"
    return FixPlan(
        op=lint_methods.LINT_FIX.name,
        changes=changes,
        summary=summary,
        log_type="LINT",
        fixes=fixes,
        left=sum(len(by_note[p]) for p in later),
    )
