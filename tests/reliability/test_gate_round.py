"""The gate's adversarial round, the fast slice: a hostile agent against "agents propose, people
decide" (writes to vaultd's own files, approvals changed under the reviewer, YAML spellings of a
verdict, a second hello). The long run is ``python -m reliability.stress.gate``; both share
``reliability/stress/gate.py``, and its figures are in docs/reliability.md."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reliability.stress.gate import owned, run
from tests.support.harness import Daemon, Home, assert_alive

if TYPE_CHECKING:
    import pytest


def test_the_rounds_oracle_knows_vaultds_files() -> None:
    assert owned("log.md", None) and owned("LOG.md", b"# x\n") and owned("a/.VaultD/x", None) and owned("x/.git/y.md", None)
    assert owned("notes/a.md", b"# vaultd operation log\nline\n")
    assert not owned("notes/log.md", b"# x\n") and not owned(".trash/a.md", b"# a\n")


def test_a_round_finds_no_way_around_the_gate(home: Home, daemon: Daemon, capsys: pytest.CaptureFixture[str]) -> None:
    report = run(home, owned=40, stale=10, spellings=30, hellos=10, seed=7)
    counts = report["counts"]
    assert report["violations"] == 0, report["failures"]
    assert counts["owned.tried"] == 40 and counts["hellos.second_refused"] == 10
    assert sum(v for k, v in counts.items() if k.startswith("owned.refused.POLICY.P05")) > 0
    assert counts["stale.tried"] >= 8 and counts.get("false_stale", 0) == 0, report["failures"]
    assert sum(v for k, v in counts.items() if k.startswith("spellings.") and k.endswith(".proposed")) > 0, counts
    assert_alive(home, daemon)
