"""What a finished write tells the vault's subscribers: the one place operations become events.

The note events of the files an operation wrote were recorded already, by the index refresh that
follows every applied operation (the same one that records an editor's changes); this adds the
operation itself, or the proposal an agent's operation became. Previews, dry runs and unchanged
outcomes wrote nothing and say nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.methods.events import MAX_EVENT_PATHS, Event, OperationApplied, OperationUndone, ProposalCreated, ProposalDecided
from protocol.methods.receipts import Applied, Proposed

if TYPE_CHECKING:
    from protocol.methods.proposals import ProposalDetail
    from protocol.methods.receipts import Outcome


def _listed(paths: list[str]) -> tuple[list[str], int]:
    return paths[:MAX_EVENT_PATHS], max(0, len(paths) - MAX_EVENT_PATHS)


def receipt_event(receipt: Outcome, *, channel: str, proposer: str, undoes: str | None, proposal: str | None) -> Event | None:
    """The event of a write's outcome, or None when it wrote nothing and proposed nothing."""
    paths, omitted = _listed([c.path for c in receipt.changes])
    if isinstance(receipt, Applied):
        op_id: str = receipt.op_id
        if undoes is not None:
            return OperationUndone(op_id=op_id, undoes=undoes, channel=channel, paths=paths, paths_omitted=omitted)
        return OperationApplied(op_id=op_id, op=receipt.op, channel=channel, paths=paths, paths_omitted=omitted, proposal=proposal)
    if isinstance(receipt, Proposed):
        return ProposalCreated(id=receipt.proposal, op=receipt.op, proposer=proposer, targets=paths, targets_omitted=omitted)
    return None


def decided_event(decided: ProposalDetail) -> ProposalDecided:
    targets, _ = _listed(list(decided.targets))
    return ProposalDecided(
        id=decided.id, state=decided.state, decided_by=decided.decided_by or "", applied_op=decided.applied_op, targets=targets
    )


def created_event(proposal: ProposalDetail) -> ProposalCreated:
    """The event of a proposal the daemon stored itself (a returned checkout, suggested links)."""
    targets, omitted = _listed(list(proposal.targets))
    return ProposalCreated(id=proposal.id, op=proposal.op, proposer=proposal.proposer, targets=targets, targets_omitted=omitted)
