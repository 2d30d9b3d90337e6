"""A fast slice of the real-fault suite (``python -m reliability.faults``): a full tmpfs (ENOSPC)
and fsync errors injected by strace (EIO)."""

from __future__ import annotations

import os

import pytest

from reliability import faults
from reliability.checks import Tally


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
def test_a_full_filesystem_refuses_cleanly_and_the_daemon_keeps_serving() -> None:
    tally = Tally()
    skipped = faults.enospc(tally, levels=(0, 4096, 8192, 16384))
    if skipped:
        pytest.skip(skipped)
    report = tally.report()
    assert report["violations"] == 0, report["violation_samples"]
    assert report["refused"] > 0 and report["fills"] == 4


def test_fsync_eio_injected_by_strace_refuses_cleanly() -> None:
    tally = Tally()
    skipped = faults.eio(tally, trials=4)
    if skipped:
        pytest.skip(skipped)
    report = tally.report()
    assert report["violations"] == 0, report["violation_samples"]
    assert report["injections"] == 4 and report["refused"] > 0
