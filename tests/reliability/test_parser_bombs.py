"""Parser bombs, the fast slice: every kind of bomb once, at the smallest size that still took the
old parsers minutes, hours or hundreds of MiB, against a real daemon while another client reads
and writes. The long run is ``python -m reliability.stress.parser_bombs``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reliability.stress.parser_bombs import KINDS, run_round

if TYPE_CHECKING:
    from tests.support.harness import Daemon, Home


def test_every_kind_of_bomb_is_reported_without_a_stall_or_a_crash(daemon: Daemon, home: Home) -> None:
    report = run_round(home, daemon, rounds=len(KINDS), seed=1, small=True)
    assert report["failures"] == []
    assert report["stalls"] == 0
    assert report["crashes"] == 0
    assert report["daemon_alive"]
    assert report["bombs"] == len(KINDS)
    assert report["reported"] == len(KINDS), report["per_kind"]
    assert report["other_answered"] > 0
