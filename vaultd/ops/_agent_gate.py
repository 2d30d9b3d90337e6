"""The gate between an agent's planned operation and the vault: apply, propose, or refuse.

The runner asks :func:`judge` once the operation is planned and validated (a proposal is never
made of an operation that would be refused anyway), and :func:`propose` stores what a person
will review. A proposal is applied by a person through the same runner, which then calls
:func:`check_unchanged`: the re-planned operation must write exactly what the proposal showed,
or nothing is written.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import TYPE_CHECKING, Any, Protocol

import msgspec
import structlog

from protocol.errors import Issue, Severity
from protocol.issue_codes import IssueCode
from protocol.methods.common import Channel
from protocol.methods.gate import Gate, OpClass
from protocol.methods.proposals import ProposalDetail, ProposalState
from protocol.methods.receipts import MAX_RECEIPT_WARNINGS, Proposed
from protocol.methods.writes import UndoParams, WriteParams
from vaultd.editions.volume import in_volumes
from vaultd.errors import Conflict, PolicyRefused
from vaultd.gate.diffs import file_diff
from vaultd.gate.store import new_id, store_for
from vaultd.gate.verdict import Verdict, verdict
from vaultd.ops._receipts import receipt_of
from vaultd.sources.rules import makes_verdict
from vaultd.txn import journal
from vaultd.vault import frontmatter

if TYPE_CHECKING:
    from pathlib import Path

    from protocol.methods.vaults import VaultEntry
    from vaultd.txn.plan import Plan

log = structlog.get_logger("vaultd.gate")

#: Params that steer a call, not the change: never part of what a person applies.
_STEERING = ("confirm", "fingerprint", "dry_run")


class Caller(Protocol):
    @property
    def channel(self) -> Channel: ...

    @property
    def client(self) -> str: ...

    @property
    def session(self) -> str | None: ...


def who(caller: Caller) -> str:
    return f"{caller.channel}:{caller.client}"


def _undo_is_own(root: Path, params: UndoParams, session: str | None) -> bool:
    if session is None:
        return False
    try:
        manifest = journal.open_journal(journal.journal_root(root) / params.op_id)
    except (OSError, journal.UntrustedJournal):
        return False  # the planner has already refused an undo it cannot read
    return manifest.channel == Channel.MCP and manifest.session == session


CREATES_WHEN_ABSENT = frozenset({"daily.append", "daily.prepend"})  #: methods that make their note when it is absent


def content_classes(plan: Plan) -> tuple[OpClass, ...]:
    """Classes an operation falls into by what it writes, whatever its method: a claim made
    accepted or rejected is a ``verdict``, by ``claim.update`` or by a frontmatter edit alike.

    Judged on the header as parsed, never on its spelling: YAML writes one key many ways (quoted,
    escaped as ``"\x6cedger"``, in a flow mapping), and every reader of the note sees the same claim.
    A daily note's write that makes the day's note is a ``create`` too."""
    made: tuple[OpClass, ...] = ()
    if plan.op in CREATES_WHEN_ABSENT and any(c.before is None for c in plan.effective()):
        made = (OpClass.CREATE,)
    for change in plan.effective():
        if not change.path.lower().endswith(".md") or change.after is None:
            continue
        after = _frontmatter(change.after)
        # The bytes before are parsed only for a note that is now an accepted or rejected claim.
        if makes_verdict(None, after) and makes_verdict(_frontmatter(change.before), after):
            return (*made, OpClass.VERDICT)
    return made


def _frontmatter(data: bytes | None) -> dict[str, Any] | None:
    if data is None:
        return None
    return frontmatter.parse(data.decode("utf-8", "replace")).data


def judge(root: Path, entry: VaultEntry, plan: Plan, params: WriteParams, caller: Caller) -> Verdict | None:
    """The verdict for an agent's operation; None for a person's (people are not gated).

    Raises:
        PolicyRefused: the policy refuses this operation to agents (G02), or it writes a journal
            volume's entry or an edition (G05).
    """
    if caller.channel != Channel.MCP:
        return None
    refuse_volume_writes(entry, [c.path for c in plan.effective()])
    policy = entry.agent_policy()
    own = isinstance(params, UndoParams) and _undo_is_own(root, params, caller.session)
    found = verdict(plan.op, len(plan.effective()), policy, own_undo=own, extra=content_classes(plan))
    if found.gate is Gate.REFUSE:
        what = "undo an operation this agent session did not make" if found.op_class.value == "undo_others" else f"run {plan.op}"
        message = f"refused: agents may not {what} in vault '{entry.id}' ({found.explain(entry.id)}); ask your user"
        raise PolicyRefused(message, issues=[Issue(code=IssueCode.G02, message=message)])
    return found


def refuse_volume_writes(entry: VaultEntry, paths: list[str]) -> None:
    """An agent never writes a journal volume's entries nor an edition, whatever its policy says:
    they are a person's writing (G05).

    Raises:
        PolicyRefused: POLICY (G05), a path is under the vault's volumes or editions folder.
    """
    inside = [p for p in paths if in_volumes(entry.volumes, p)]
    if inside:
        message = f"refused: agents may not write {inside[0]}: a journal volume's entries and editions are your user's; ask them"
        raise PolicyRefused(message, issues=[Issue(code=IssueCode.G05, message=message, path=inside[0])])


def held_notice(found: Verdict, entry: VaultEntry) -> Issue:
    """The info a preview carries when confirming it will make a proposal, not a change."""
    return Issue(
        code=IssueCode.G01,
        severity=Severity.INFO,
        message=f"{found.explain(entry.id)}: confirming makes a proposal for your user to apply; nothing changes until they do",
    )


def stored_params(params: WriteParams) -> dict[str, Any]:
    core: dict[str, Any] = msgspec.to_builtins(params)
    for key in _STEERING:
        core.pop(key, None)
    return core


def pending(entry: VaultEntry, plan: Plan, params: WriteParams, caller: Caller, warnings: list[Issue], day: str) -> ProposalDetail:
    """The pending proposal of ``plan``, as a person will review it: its diffs, its warnings
    (bounded), the caller who proposed it and the params that re-plan it when applied."""
    now = time.time()
    return ProposalDetail(
        id=new_id(now),
        vault=entry.id,
        op=plan.op,
        summary=plan.summary[:500],
        targets=[c.path for c in plan.effective()],
        state=ProposalState.PENDING,
        proposer=who(caller),
        session=caller.session,
        reason=params.reason,
        created=now,
        diffs=[file_diff(c) for c in plan.effective()],
        warnings=warnings[:MAX_RECEIPT_WARNINGS],
        params=stored_params(params),
        day=day,
    )


def propose(
    root: Path,
    entry: VaultEntry,
    plan: Plan,
    params: WriteParams,
    caller: Caller,
    found: Verdict,
    warnings: list[Issue],
    info: Any,
    day: str,
) -> Proposed[Any]:
    """Store the planned operation as a pending proposal (worker thread); nothing in the vault
    changes. ``day``: the date the plan's stamps record."""
    detail = pending(entry, plan, params, caller, warnings, day)
    expired = store_for(root).add(detail)
    log.info("proposed", vault=entry.id, proposal=detail.id, op=plan.op, proposer=detail.proposer, files=len(detail.targets))
    notice = held_notice(found, entry)
    message = (
        f"held for your user as proposal {detail.id}: {found.explain(entry.id)}. Nothing changed yet; "
        f"they apply it with 'vaultctl proposals apply {detail.id}' or reject it. Poll it with proposal_show."
    )
    if expired:
        message += f" ({len(expired)} old proposal(s) expired to keep the vault's proposals bounded.)"
    return receipt_of(Proposed, plan, warnings=[notice, *warnings], detail=info, proposal=detail.id, message=message)


class StaleProposal(Conflict):
    """A file the proposal read has changed: the person's review no longer describes the change."""


def check_unchanged(plan: Plan, proposal: ProposalDetail) -> None:
    """The re-planned operation must be the one the person reviewed: the same files, each read as
    the proposal read it and written to the very bytes the proposal showed (its after sha).

    Checking what was read is not enough: a plan's result also depends on files it does not
    write (the note an alias names, a folder's other names), so an agent could change those
    after proposing and have an approved rewrite write what nobody reviewed.

    Raises:
        StaleProposal: with the files that differ (G03); nothing is written.
    """
    then = {d.path: (d.action, d.before_sha, d.after_sha) for d in proposal.diffs}
    now = {c.path: (str(c.action), c.before_sha, c.after_sha) for c in plan.effective()}
    differ = sorted(p for p in then.keys() | now.keys() if then.get(p) != now.get(p))
    if differ:
        shown = ", ".join(differ[:10]) + (f" and {len(differ) - 10} more" if len(differ) > 10 else "")
        message = (
            f"proposal {proposal.id} is stale: applying it now would not write what it showed, for {shown} "
            "(a file changed, or a name or alias it resolves now names another note); nothing was written"
        )
        raise StaleProposal(message, issues=[Issue(code=IssueCode.G03, message=message)], candidates=differ[:100])


def is_agent(proposer: str | None) -> bool:
    """Whether a proposer (as :func:`who` names it) is an agent: its proposal's log line stays
    marked as the agent's when a person applies it."""
    return proposer is not None and proposer.startswith(f"{Channel.MCP.value}:")


def stamp_date(proposal: ProposalDetail) -> str:
    """The date a proposal's stamps record: the day it was proposed, as its diffs show them, so
    applying it another day writes the bytes the person reviewed. A proposal that does not say
    (one a sync made) takes the local date of its making."""
    return proposal.day or dt.datetime.fromtimestamp(proposal.created).astimezone().strftime("%Y-%m-%d")
