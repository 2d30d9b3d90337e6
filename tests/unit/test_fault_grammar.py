"""The ``VAULTD_FAULTS`` grammar's wait actions (``sleep``, ``pause``), their bounds at the edge,
and a pause that holds until its gate file is removed."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import pytest

from tests.support.wait import wait_until
from vaultd.faults import EVERY, MAX_SLEEP_SECONDS, FaultPlan

if TYPE_CHECKING:
    from pathlib import Path


def test_sleep_and_pause_parse_with_their_hit_numbers() -> None:
    plan = FaultPlan.parse("sleep=after-rename:0.005;sleep=after-journal@2:1;pause=before-commit@3:/tmp/g")
    assert plan.sleeps == {"after-rename": (EVERY, 0.005), "after-journal": (2, 1.0)}
    assert plan.pauses == {"before-commit": (3, "/tmp/g")}


@pytest.mark.parametrize(
    "spec",
    [
        f"sleep=after-rename:{MAX_SLEEP_SECONDS + 0.001}",
        "sleep=after-rename:-0.1",
        "sleep=after-rename:x",
        "sleep=nowhere:1",
        "sleep=after-rename",
        "pause=after-rename@x:/g",
        "pause=after-rename@2",
        "pause=nowhere@1:/g",
    ],
)
def test_bad_wait_faults_are_refused(spec: str) -> None:
    with pytest.raises(ValueError, match="bad fault"):
        FaultPlan.parse(spec)


def test_the_longest_sleep_is_accepted() -> None:
    assert FaultPlan.parse(f"sleep=after-rename:{MAX_SLEEP_SECONDS}").sleeps["after-rename"][1] == MAX_SLEEP_SECONDS


def test_a_pause_holds_at_its_hit_until_the_gate_is_removed(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    plan = FaultPlan.parse(f"pause=after-rename@2:{gate}")
    plan.point("after-rename")
    assert not gate.exists()  # the first hit passes
    passed = threading.Event()

    def second_hit() -> None:
        plan.point("after-rename")
        passed.set()

    worker = threading.Thread(target=second_hit)
    worker.start()
    wait_until(gate.exists, 30, "the second hit to create the gate", poll=0.01)
    assert gate.exists() and not passed.is_set()
    gate.unlink()
    worker.join(30)
    assert passed.is_set()
