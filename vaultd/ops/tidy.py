"""vault.tidy: every migration rule over the whole vault, as one two-step, undoable operation.

The planner reads every note the caller may see (not the trash, not the templates folder, not the
operation log), runs the chosen rules over each (:mod:`vaultd.tidy.rules`) and returns one plan;
the runner previews it with a fingerprint, validates it, gates it (an agent's tidy is a proposal:
``vault.tidy`` is a ``wide`` operation), journals it and logs one LINT line. A note whose header
cannot be edited in place is left as it is and reported; it never blocks the others. Past the
operation's file bound the rest is counted (``left``) for another run, which previews only them.

The log rule (T08) rewrites the vault's operation log, which no other write may touch: the change
is one of the plan's, checked to differ from the log only where a secret became the marker. Its
undo never puts a secret back: ``op.undo`` of a tidy redacts what it restores (see
:func:`redacted_undo`), and leaves the log as it is.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from protocol.issue_codes import IssueCode
from protocol.methods import tidy as tidy_methods
from protocol.methods.receipts import MAX_DETAIL_LINKS
from protocol.methods.tidy import TidyDetail, TidyParams, TidyRule
from protocol.methods.vaults import SchemaProfile
from vaultd.errors import Conflict, Internal, ValidationFailed
from vaultd.ops.catalog import operation
from vaultd.tidy.model import Record, Work
from vaultd.tidy.redact import redact_log
from vaultd.tidy.rules import tidy
from vaultd.txn.plan import MAX_OP_FILES, Change, Plan
from vaultd.vault import oplog
from vaultd.vault.layout import is_operation_log
from vaultd.vault.link_targets import ResolutionStatus

if TYPE_CHECKING:
    from vaultd.ops._context import OpContext

TIDY_OP = tidy_methods.TIDY.name


@dataclass(slots=True)
class TidyPlan(Plan):
    """A plan that remembers what each rule changed and what it left, for the receipt's detail."""

    records: list[Record] = field(default_factory=list)
    reported: list[Record] = field(default_factory=list)
    left: int = 0


def tidy_detail(ctx: OpContext, plan: Plan) -> TidyDetail:
    records = plan.records if isinstance(plan, TidyPlan) else []
    reported = plan.reported if isinstance(plan, TidyPlan) else []
    counts: dict[str, int] = {}
    for record in records:
        counts[record.code] = counts.get(record.code, 0) + 1
    return TidyDetail(
        counts=dict(sorted(counts.items())),
        changes=[str(r) for r in records[:MAX_DETAIL_LINKS]],
        reported=[str(r) for r in reported[:MAX_DETAIL_LINKS]],
        left=plan.left if isinstance(plan, TidyPlan) else 0,
    )


def _skipped(ctx: OpContext, path: str) -> bool:
    templates = ctx.settings.templates.folder.strip("/")
    return path.startswith(".trash/") or bool(templates and path.startswith(templates + "/")) or ctx.visibility.hidden(path)


def _log_change(ctx: OpContext) -> tuple[Change | None, list[Record]]:
    rel = oplog.log_name(ctx.entry)
    raw = ctx.read(rel)
    if raw is None or not is_operation_log(raw):
        return None, []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, [Record(IssueCode.T08, rel, 1, "the log is not valid UTF-8; it is left as it is")]
    after, lines = redact_log(text)
    if not lines:
        return None, []
    records = [Record(IssueCode.T08, rel, line, "a secret in the log line, replaced by [redacted]") for line in lines]
    return Change(path=rel, before=raw, after=after.encode("utf-8")), records


@operation(tidy_methods.TIDY, detail=tidy_detail, vault_wide=True)
def plan_tidy(ctx: OpContext, params: TidyParams) -> Plan:
    """Plan every chosen rule over every note the caller sees, as one operation."""
    rules = list(params.rules) if params.rules else list(TidyRule)
    typed = ctx.entry.schema is SchemaProfile.TYPED
    resolver = ctx.index.resolver
    log_rel = oplog.log_name(ctx.entry)
    changes: list[Change] = []
    records: list[Record] = []
    reported: list[Record] = []
    left = 0
    for path in sorted(ctx.index.notes):
        if path == log_rel or _skipped(ctx, path):
            continue
        raw = ctx.read(path)
        if raw is None or is_operation_log(raw):
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue

        def resolves(target: str, source: str = path) -> bool:
            res = resolver.resolve(target, source)
            return res.status is ResolutionStatus.RESOLVED and res.path is not None and not ctx.visibility.hidden(res.path)

        work = Work(path=path, text=text, typed=typed, resolves=resolves)
        try:
            tidy(work, rules)
        except (ValidationFailed, Internal, Conflict) as exc:
            reported.append(Record(IssueCode.V01, path, 1, f"left as it is: {exc.message}"))
            continue
        reported += work.reported
        if work.text == text:
            continue
        if len(changes) >= MAX_OP_FILES - 1:
            left += 1
            continue
        changes.append(Change(path=path, before=raw, after=work.text.encode("utf-8")))
        records += work.changes
    if TidyRule.LOG in rules:
        log_change, log_records = _log_change(ctx)
        if log_change is not None:
            changes.append(log_change)
            records += log_records
        else:
            reported += log_records
    counts: dict[str, int] = {}
    for record in records:
        counts[record.code] = counts.get(record.code, 0) + 1
    told = ", ".join(f"{code} {n}" for code, n in sorted(counts.items())) or "nothing to change"
    return TidyPlan(
        op=TIDY_OP,
        changes=changes,
        summary=f"tidy: {told} in {len(changes)} file{'s' if len(changes) != 1 else ''}",
        log_type="LINT",
        records=records,
        reported=reported,
        left=left,
    )


def never_undone(op: str, log_rel: str) -> frozenset[str]:
    """What the undo of ``op`` leaves as it is: a tidy's redaction of the operation log (the log
    has grown since, and its secrets stay out of it)."""
    return frozenset({log_rel}) if op == TIDY_OP else frozenset()


def redacted_undo(op: str, summary: str, plan: Plan, log_rel: str) -> Plan:
    """The undo of a tidy, as it may be applied: every note back as it was but for the secrets the
    tidy redacted (they stay redacted), and the operation log left as it is now. A tidy redacted
    when its summary (the journal's) counts T07; one that did not puts every byte back."""
    if op != TIDY_OP or f"{IssueCode.T07} " not in summary:
        return plan
    kept: list[Change] = []
    for change in plan.changes:
        if change.path == log_rel:
            continue
        if change.after is not None:
            try:
                text = change.after.decode("utf-8")
            except UnicodeDecodeError:
                kept.append(change)
                continue
            work = Work(path=change.path, text=text, typed=False)
            try:
                tidy(work, [TidyRule.SECRETS])
            except (ValidationFailed, Internal):
                kept.append(change)
                continue
            change = dataclasses.replace(change, after=work.text.encode("utf-8"))
        kept.append(change)
    plan.changes = kept
    return plan
