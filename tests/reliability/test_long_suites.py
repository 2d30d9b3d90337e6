"""The long reliability runs of docs/reliability.md, for ``make test-long`` (marked slow)."""

from __future__ import annotations

import os

import pytest

from reliability import crash, faults, lostwrites, sync_crash
from reliability.checks import Tally

pytestmark = pytest.mark.slow


@pytest.mark.timeout(3600)
def test_crash_run_of_a_thousand_operations_and_a_hundred_kills() -> None:
    report = crash.run(ops=2000, seed=9, kills=120)
    assert report["violations"] == 0, report["violation_samples"]
    assert report["ops"] >= 1000 and report["kills"] >= 100


@pytest.mark.timeout(1800)
def test_every_sync_integration_fault_point() -> None:
    report = sync_crash.run()
    assert report["torn"] == 0, report["torn_samples"]
    assert report["kills"] == report["integrations"] == sum(len(points) for points in sync_crash.POINTS.values())


@pytest.mark.timeout(1800)
@pytest.mark.skipif(bool(lostwrites.unavailable()) or os.geteuid() != 0, reason=lostwrites.unavailable() or "FUSE mounts need root here")
def test_forty_power_losses() -> None:
    report = lostwrites.run(cycles=40, seed=3)
    assert report["violations"] == 0, report["violation_samples"]
    assert report["power_losses"] == 40 and report["acknowledged"] > 0


@pytest.mark.timeout(600)
@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
def test_every_fill_level_and_sixteen_fsync_errors() -> None:
    for name, tally in (("enospc", Tally()), ("eio", Tally())):
        skipped = faults.enospc(tally) if name == "enospc" else faults.eio(tally, 16)
        if skipped:
            pytest.skip(skipped)
        report = tally.report()
        assert report["violations"] == 0, (name, report["violation_samples"])
        assert report["refused"] > 0
