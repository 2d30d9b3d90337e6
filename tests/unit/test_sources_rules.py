"""The ledger rules: accepted claims need current support, high risk two independent lines, and a
citation must name a source (unsupported is valid, invented is not)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from protocol.methods.sources import SupportStatus, Verdict
from vaultd.sources.ledger import ClaimEntry, SourceEntry, field_issues
from vaultd.sources.rules import assess, claim_issues, dropped_contradictions, makes_verdict

TODAY = dt.date(2026, 1, 15)


def source(path: str, **fields: Any) -> SourceEntry:
    data = {"ledger": "source", "state": "active", "sha256": "a" * 64, **fields}
    return SourceEntry.read(path, path, data)


def claim(
    state: str = "accepted", risk: str = "low", support: list[str] | None = None, contradictions: list[str] | None = None
) -> ClaimEntry:
    data: dict[str, Any] = {"ledger": "claim", "claim": "X is true", "page": "[[Page]]", "state": state, "risk": risk}
    data["support"] = support or []
    data["contradictions"] = contradictions or []
    return ClaimEntry.read("claims/x.md", "x", data)


def judged(c: ClaimEntry, sources: dict[str, SourceEntry], drifted: frozenset[str] = frozenset()) -> tuple[Verdict, list[str]]:
    def lookup(cited: str) -> tuple[str | None, SourceEntry | None]:
        name = cited.strip("[]")
        return (name, sources[name]) if name in sources else (None, None)

    found = assess(c, lookup, lambda s: s.path in drifted, TODAY)
    return found.verdict, [i.code for i in claim_issues(c, found)]


def test_unsupported_is_a_valid_state_but_not_when_accepted() -> None:
    assert judged(claim(state="proposed"), {}) == (Verdict.UNSUPPORTED, [])
    assert judged(claim(state="accepted"), {}) == (Verdict.UNSUPPORTED, ["V21"])


def test_an_invented_citation_is_refused_in_any_state() -> None:
    assert judged(claim(state="proposed", support=["[[nowhere]]"]), {}) == (Verdict.INVENTED, ["V23"])
    assert judged(claim(state="proposed", contradictions=["[[nowhere]]"]), {})[1] == ["V23"]


def test_support_must_be_current() -> None:
    inactive: dict[str, dict[str, Any]] = {
        "retracted": {"state": "retracted"},
        "planned": {"state": "planned"},
        "synthetic": {"synthetic": True},
        "expired": {"expires": "2026-01-14"},
    }
    for name, fields in inactive.items():
        assert judged(claim(support=[f"[[{name}]]"]), {name: source(name, **fields)})[1] == ["V21"], name
    assert judged(claim(support=["[[ok]]"]), {"ok": source("ok", expires="2026-01-15")}) == (Verdict.SUPPORTED, [])
    assert judged(claim(support=["[[moved]]"]), {"moved": source("moved")}, frozenset({"moved"}))[1] == ["V21"]


def test_high_risk_needs_two_independent_lines() -> None:
    a = source("a", origin="https://Example.com/one")
    b = source("b", origin="https://example.com:443/two")  # the same host: one line of evidence
    c = source("c", origin="https://other.example/three")
    assert judged(claim(risk="high", support=["[[a]]", "[[b]]"]), {"a": a, "b": b}) == (Verdict.UNDER_SUPPORTED, ["V22"])
    assert judged(claim(risk="high", support=["[[a]]", "[[c]]"]), {"a": a, "c": c}) == (Verdict.SUPPORTED, [])
    explicit = source("d", origin="https://third.example/x", independence="example-press")
    same = source("e", origin="https://fourth.example/y", independence="Example-Press")
    assert judged(claim(risk="high", support=["[[d]]", "[[e]]"]), {"d": explicit, "e": same})[1] == ["V22"]


def test_citation_statuses_are_reported() -> None:
    found = assess(
        claim(support=["[[a]]", "[[gone]]"]), lambda c: ("a", source("a")) if c == "[[a]]" else (None, None), lambda s: False, TODAY
    )
    assert [c.status for c in found.support] == [SupportStatus.CURRENT, SupportStatus.MISSING]


def test_field_shapes() -> None:
    assert field_issues({"ledger": "source", "sha256": "nothex", "state": "gone"}, "s.md") != []
    assert field_issues({"ledger": "claim", "claim": "x", "page": "[[P]]", "state": "accepted", "risk": "high"}, "c.md") == []
    assert [i.code for i in field_issues({"ledger": "claim", "state": "maybe"}, "c.md")] == ["V20"] * 3


def test_verdicts_and_contradictions_for_the_gate() -> None:
    before = {"ledger": "claim", "state": "proposed", "contradictions": ["[[a]]", "[[b]]"]}
    assert makes_verdict(before, {**before, "state": "accepted"})
    assert makes_verdict(None, {**before, "state": "rejected"})
    assert not makes_verdict({**before, "state": "accepted"}, {**before, "state": "accepted"})
    assert not makes_verdict(None, {"state": "accepted"})  # not a claim note
    assert dropped_contradictions(before, {**before, "contradictions": ["[[b]]"]}) == ["[[a]]"]
