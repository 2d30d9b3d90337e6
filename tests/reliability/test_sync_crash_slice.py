"""A slice of the sync crash round (``python -m reliability.sync_crash``): a sync's integration
SIGKILLed at fault points between its steps (inside its journaled writes, after them, after the
branch moved, after the index followed), each restarted and found whole or not there at all."""

from __future__ import annotations

from reliability import sync_crash

SLICE = {
    "fast-forward": ("after-rename@2", "sync-after-update-ref"),
    "merge": ("sync-after-integrate", "git-after-update-ref", "sync-after-follow"),
}


def test_a_sync_killed_between_its_steps_is_never_left_torn() -> None:
    report = sync_crash.run(tuple(SLICE), SLICE)
    assert report["torn"] == 0, report["torn_samples"]
    assert report["kills"] == report["integrations"] == 5
    assert report["recoveries"] == 5
