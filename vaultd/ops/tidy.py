"""vault.tidy: every migration rule over the whole vault, as one two-step, undoable operation.

The rules run over every note the caller may see (not the trash, not the templates folder, not the
operation log; :mod:`vaultd.tidy.rules`) on a copy of the index, in a thread, holding neither the
vault's writer nor its index: at about 2 ms a note, a large vault's scan takes seconds, and
writes to the vault go on meanwhile (vault-wide work, in turn with the others). Then the
operation runs as any other: under the writer its planner reads only the notes the scan changes
(running the rules again on one whose bytes moved since) and the operation log, and returns one
plan;
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
import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

from protocol.issue_codes import IssueCode
from protocol.methods import tidy as tidy_methods
from protocol.methods.receipts import MAX_DETAIL_LINKS
from protocol.methods.tidy import TidyDetail, TidyParams, TidyRule
from protocol.methods.vaults import SchemaProfile
from vaultd import faults
from vaultd.errors import Conflict, Internal, LimitExceeded, ValidationFailed
from vaultd.obsidian.settings import read_settings
from vaultd.ops._runner import planning, run_operation
from vaultd.ops.catalog import applies_itself
from vaultd.policy.visibility import Visibility
from vaultd.tidy.model import Record, Work
from vaultd.tidy.redact import redact_log
from vaultd.tidy.rules import tidy
from vaultd.txn.engine import read_current
from vaultd.txn.plan import MAX_OP_FILES, Change, Plan, file_bound
from vaultd.vault import oplog
from vaultd.vault.layout import is_operation_log
from vaultd.vault.link_targets import ResolutionStatus

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from protocol.methods.common import Channel
    from protocol.methods.receipts import WriteReceipt
    from protocol.methods.vaults import VaultEntry
    from vaultd.ops._context import OpContext
    from vaultd.ops._runner import Approval, WriteCall
    from vaultd.runtime import VaultRuntime
    from vaultd.vault.index import IndexCopy
    from vaultd.vault.link_targets import LinkResolver

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


def _skipped(path: str, templates: str, hidden: Callable[[str], bool]) -> bool:
    return path.startswith(".trash/") or bool(templates and path.startswith(templates + "/")) or hidden(path)


def _log_change(ctx: OpContext) -> tuple[Change | None, list[Record]]:
    """The log rule's change (T08), or why the log is left as it is: a log grown past the bound of
    a note one operation rewrites is reported, and every note's rules still apply."""
    rel = oplog.log_name(ctx.entry)
    try:
        raw = ctx.read(rel)
    except LimitExceeded:
        why = f"the log is larger than the {file_bound(rel):,} bytes one operation rewrites; it is left as it is"
        return None, [Record(IssueCode.T08, rel, 1, why)]
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


@dataclass(frozen=True, slots=True)
class _Tidied:
    """One note through the rules: the text it would get (None: unchanged or left as it is)."""

    after: bytes | None
    changes: list[Record]
    reported: list[Record]


def _tidy_note(path: str, raw: bytes, rules: list[TidyRule], typed: bool, resolves: Callable[[str, str], bool]) -> _Tidied:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return _Tidied(None, [], [])
    work = Work(path=path, text=text, typed=typed, resolves=lambda target: resolves(target, path))
    try:
        tidy(work, rules)
    except (ValidationFailed, Internal, Conflict) as exc:
        return _Tidied(None, [], [Record(IssueCode.V01, path, 1, f"left as it is: {exc.message}")])
    after = None if work.text == text else work.text.encode("utf-8")
    return _Tidied(after, work.changes, work.reported)


def _resolves(resolver: LinkResolver, hidden: Callable[[str], bool]) -> Callable[[str, str], bool]:
    def resolves(target: str, source: str) -> bool:
        res = resolver.resolve(target, source)
        return res.status is ResolutionStatus.RESOLVED and res.path is not None and not hidden(res.path)

    return resolves


@dataclass(slots=True)
class TidyScan:
    """The rules run over every note of a copy of the index, holding neither the vault's writer
    nor its index: the notes they change (with the sha of the bytes they read) and what they left."""

    changed: dict[str, tuple[str, _Tidied]] = field(default_factory=dict)
    reported: dict[str, list[Record]] = field(default_factory=dict)


def scan(root: Path, entry: VaultEntry, channel: Channel, copy: IndexCopy, rules: list[TidyRule]) -> TidyScan:
    """Run ``rules`` over every note the caller sees (worker thread): at about 2 ms a note this is
    the slow half of a tidy, done while writes to the vault go on."""
    faults.point("tidy-rules")
    hidden = Visibility.of(entry, channel).hidden
    templates = read_settings(root).templates.folder.strip("/")
    log_rel = oplog.log_name(entry)
    resolves = _resolves(copy.resolver, hidden)
    typed = entry.schema is SchemaProfile.TYPED
    found = TidyScan()
    for path in sorted(copy.notes):
        if path == log_rel or _skipped(path, templates, hidden):
            continue
        raw = read_current(root, path)
        if raw is None or is_operation_log(raw):
            continue
        tidied = _tidy_note(path, raw, rules, typed, resolves)
        if tidied.reported:
            found.reported[path] = tidied.reported
        if tidied.after is not None:
            found.changed[path] = (hashlib.sha256(raw).hexdigest(), tidied)
    return found


def planner_of(found: TidyScan) -> Callable[[OpContext, TidyParams], Plan]:
    """The planner (under the writer) that writes ``found``'s changes: it reads only the notes the
    scan changes, and runs the rules again on one whose bytes moved since the scan read it."""

    def plan_tidy(ctx: OpContext, params: TidyParams) -> Plan:
        """Plan every chosen rule's changes as one operation (at most ``MAX_OP_FILES`` files)."""
        rules = list(params.rules) if params.rules else list(TidyRule)
        resolves = _resolves(ctx.index.resolver, ctx.visibility.hidden)
        typed = ctx.entry.schema is SchemaProfile.TYPED
        changes: list[Change] = []
        records: list[Record] = []
        reported = {path: list(rs) for path, rs in found.reported.items() if path not in found.changed}
        left = 0
        for path, (sha, scanned) in sorted(found.changed.items()):
            raw = ctx.read(path)
            if raw is None:
                continue
            tidied = scanned if hashlib.sha256(raw).hexdigest() == sha else _tidy_note(path, raw, rules, typed, resolves)
            if tidied.reported:
                reported[path] = tidied.reported
            if tidied.after is None:
                continue
            if len(changes) >= MAX_OP_FILES - 1:
                left += 1
                continue
            changes.append(Change(path=path, before=raw, after=tidied.after))
            records += tidied.changes
        left_over = [r for path in sorted(reported) for r in reported[path]]
        if TidyRule.LOG in rules:
            log_change, log_records = _log_change(ctx)
            if log_change is not None:
                changes.append(log_change)
                records += log_records
            else:
                left_over += log_records
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
            reported=left_over,
            left=left,
        )

    return plan_tidy


async def _scan_now(runtime: VaultRuntime, channel: Channel, params: TidyParams) -> TidyScan:
    live = runtime.owned_live()
    await live.barrier()  # every change made before the call is in the copy
    rules = list(params.rules) if params.rules else list(TidyRule)
    copy = live.index.copy()  # one synchronous step on the event loop, where the index changes
    found = await anyio.to_thread.run_sync(scan, runtime.root, runtime.entry, channel, copy, rules)
    faults.point("tidy-scanned")
    return found


@applies_itself(tidy_methods.TIDY, vault_wide=True)
async def apply_tidy(call: WriteCall, params: TidyParams, approval: Approval | None) -> WriteReceipt[TidyDetail]:
    """Run the rules over a copy of the index, then run the operation that writes what they change."""
    runtime = call.host.vault(params.vault)
    await runtime.wait_ready()
    found = await _scan_now(runtime, call.channel, params)
    return await run_operation(call, params, planner_of(found), tidy_detail, approval=approval)


async def plan_pending(runtime: VaultRuntime, channel: Channel) -> TidyPlan:
    """Every rule's tidy planned as its preview would plan it, with nothing validated, journaled
    or written (doctor's row)."""
    params = TidyParams(vault=runtime.entry.id)
    found = await _scan_now(runtime, channel, params)
    async with planning(runtime, channel) as op_ctx:
        plan = await anyio.to_thread.run_sync(planner_of(found), op_ctx, params)
    assert isinstance(plan, TidyPlan)
    return plan


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
