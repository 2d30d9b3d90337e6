"""The ledger rules: what a claim's citations are worth, and what a claim's state demands of them.

- Every citation must name a source note: unsupported is a valid state, an invented citation is
  not (V23, whatever the claim's state).
- An accepted claim needs current support: an active, non-synthetic, unexpired source whose raw
  copy still holds the captured bytes (V21).
- An accepted high-risk claim needs two lines of current support with distinct independence keys;
  sources sharing a key (the same host, RFC-equivalent URLs) count once (V22).
- Contradictions stay visible: they can be added, never removed by a claim update.

Pure functions: the caller says how a citation resolves and whether a raw copy drifted, so the
same rules serve a write's validation (the vault as the write leaves it) and the evidence view.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from protocol.methods.sources import Citation, ClaimState, Risk, SupportStatus, Verdict
from vaultd.sources.ledger import CLAIM, ClaimEntry, SourceEntry, ledger_kind

if TYPE_CHECKING:
    import datetime as dt

#: How a citation resolves: the note it names (None: none) and that note's source entry (None: not a source).
Lookup = Callable[[str], tuple[str | None, SourceEntry | None]]
#: Whether a source's raw copy no longer holds its captured bytes.
Drifted = Callable[[SourceEntry], bool]


@dataclass(frozen=True, slots=True)
class Assessment:
    support: list[Citation]
    contradictions: list[Citation]
    lines: int  #: distinct independence keys among the current support
    verdict: Verdict


def cite(cited: str, lookup: Lookup, drifted: Drifted, today: dt.date) -> Citation:
    path, source = lookup(cited)
    if path is None or source is None:
        return Citation(cited=cited, path=path if source is not None else None, status=SupportStatus.MISSING)
    if source.synthetic:
        status = SupportStatus.SYNTHETIC
    elif not source.active_on(today):
        status = SupportStatus.INACTIVE
    elif drifted(source):
        status = SupportStatus.DRIFTED
    else:
        status = SupportStatus.CURRENT
    return Citation(cited=cited, path=path, title=source.title, status=status, independence=source.independence)


def needed_lines(risk: str) -> int:
    return 2 if risk == Risk.HIGH.value else 1


def assess(claim: ClaimEntry, lookup: Lookup, drifted: Drifted, today: dt.date) -> Assessment:
    support = [cite(c, lookup, drifted, today) for c in claim.support]
    contradictions = [cite(c, lookup, drifted, today) for c in claim.contradictions]
    lines = len({c.independence for c in support if c.status is SupportStatus.CURRENT})
    if any(c.status is SupportStatus.MISSING for c in (*support, *contradictions)):
        verdict = Verdict.INVENTED
    elif lines >= needed_lines(claim.risk):
        verdict = Verdict.SUPPORTED
    elif lines:
        verdict = Verdict.UNDER_SUPPORTED
    else:
        verdict = Verdict.UNSUPPORTED
    return Assessment(support=support, contradictions=contradictions, lines=lines, verdict=verdict)


def claim_issues(claim: ClaimEntry, found: Assessment) -> list[Issue]:
    """The V21, V22 and V23 refusals for a claim as a write would leave it."""
    issues = [
        Issue(
            code=IssueCode.V23,
            path=claim.path,
            message=f"{c.cited!r} names no source note: cite a captured source (unsupported is a valid state, an invented citation is not)",
        )
        for c in (*found.support, *found.contradictions)
        if c.status is SupportStatus.MISSING
    ]
    if claim.state != ClaimState.ACCEPTED.value:
        return issues
    if found.lines == 0:
        why = "; ".join(f"{c.cited}: {c.status}" for c in found.support) or "it cites no source"
        issues.append(
            Issue(
                code=IssueCode.V21,
                path=claim.path,
                message=f"an accepted claim needs current support from an active, non-synthetic source ({why}); "
                "leave it proposed, or cite a current source",
            )
        )
    elif found.lines < needed_lines(claim.risk):
        issues.append(
            Issue(
                code=IssueCode.V22,
                path=claim.path,
                message=f"an accepted high-risk claim needs two independent sources; its current support is {found.lines} line "
                "of evidence (sources sharing an independence key, such as one host, count once)",
            )
        )
    return issues


def makes_verdict(before: dict[str, Any] | None, after: dict[str, Any] | None) -> bool:
    """Whether a write turns a claim accepted or rejected (a judgement the agent gate classes as ``verdict``)."""
    if ledger_kind(after) != CLAIM or after is None:
        return False
    state = after.get("state")
    if state not in (ClaimState.ACCEPTED.value, ClaimState.REJECTED.value):
        return False
    return ledger_kind(before) != CLAIM or before is None or before.get("state") != state


def dropped_contradictions(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[str]:
    """Contradictions a write removes from a claim (refused: they stay visible)."""
    if ledger_kind(before) != CLAIM or ledger_kind(after) != CLAIM or before is None or after is None:
        return []
    old = before.get("contradictions")
    new = after.get("contradictions")
    old_list = [v for v in old if isinstance(v, str)] if isinstance(old, list) else []
    new_set = {v for v in new if isinstance(v, str)} if isinstance(new, list) else set()
    return [v for v in old_list if v not in new_set]
