"""A slice of the sync crash round (``python -m reliability.sync_crash``): a sync's integration
SIGKILLed between its writes and the branch's move, between a merge commit's update-ref and the
index following it, and between a fast-forward's update-ref and the index following it; each
restarted and found whole or not there at all. Every point: ``make test-long``."""

from __future__ import annotations

from reliability import sync_crash

SLICE = {
    "fast-forward": ("sync-after-update-ref",),
    "merge": ("sync-after-integrate", "git-after-update-ref"),
}


def test_a_sync_killed_between_its_steps_is_never_left_torn() -> None:
    report = sync_crash.run(tuple(SLICE), SLICE)
    assert report["torn"] == 0, report["torn_samples"]
    assert report["kills"] == report["integrations"] == 3
    assert report["recoveries"] == 3
