"""A fast slice of the crash suite (``python -m reliability.crash``): random operations, four
kills at named points and from a timer, every invariant checked after each restart."""

from __future__ import annotations

from reliability import crash


def test_random_operations_with_kills_leave_no_violation() -> None:
    report = crash.run(ops=30, seed=11, kills=4, check_rebuild_every=4)
    assert report["violations"] == 0, report["violation_samples"]
    assert report["ops"] > 0
    assert report["kills"] >= 4
    assert report["recoveries"] == 4
    assert report["rebuild_checks"] >= 1
    assert report["second_restarts"] >= 4
