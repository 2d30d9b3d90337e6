"""A fast slice of the lost-writes suite (``python -m reliability.lostwrites``): the vault on a FUSE
filesystem that drops whatever was not fsynced, power losses, and a negative control."""

from __future__ import annotations

import os

import pytest

from reliability import lostwrites

pytestmark = pytest.mark.skipif(
    bool(lostwrites.unavailable()) or os.geteuid() != 0, reason=lostwrites.unavailable() or "FUSE mounts need root here"
)


def test_power_losses_lose_no_acknowledged_operation() -> None:
    report = lostwrites.run(cycles=2, seed=5, rebuild_every=2)
    assert report["violations"] == 0, report["violation_samples"]
    assert report["ops"] > 0
    assert report["power_losses"] == 2
    assert report["rebuild_checks"] == 1


def test_the_harness_catches_a_missing_folder_fsync() -> None:
    report = lostwrites.run(cycles=2, seed=5, negative_control=True)
    assert report["acknowledged"] > 0
    assert report["violations"] > 0, "a daemon without folder fsyncs must lose acknowledged writes"
