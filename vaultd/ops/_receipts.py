"""A write's receipt made from its plan, one way for every outcome and every operation.

The warnings are bounded here: a write to a note with a vast debt of old problems answers with
the first ones and a count, never a list as long as the debt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from protocol.methods.receipts import MAX_RECEIPT_WARNINGS, ChangeAction, ChangeReceipt, Outcome

if TYPE_CHECKING:
    from protocol.errors import Issue
    from vaultd.txn.plan import Plan

R = TypeVar("R", bound=Outcome)


def change_receipts(plan: Plan) -> list[ChangeReceipt]:
    """What the plan changes, as a receipt lists it: the changes that change something."""
    return [
        ChangeReceipt(path=c.path, action=ChangeAction(c.action), before_sha=c.before_sha, after_sha=c.after_sha, bytes=len(c.after or b""))
        for c in plan.effective()
    ]


def receipt_of(outcome: type[R], plan: Plan, *, warnings: list[Issue], detail: object, **extra: Any) -> R:
    """The ``outcome`` receipt of ``plan``, its warnings bounded; ``extra`` is what that outcome
    alone carries (a fingerprint, an op id, a proposal)."""
    return outcome(
        op=plan.op,
        changes=change_receipts(plan),
        warnings=warnings[:MAX_RECEIPT_WARNINGS],
        warnings_omitted=max(0, len(warnings) - MAX_RECEIPT_WARNINGS),
        detail=detail,
        **extra,
    )
