"""A fast slice of ``python -m reliability.stress.editor_race``: moves that rewrite many backlinks,
slowed by the fault seam, while an editor process saves notes under them. No editor save may be
lost, no conflicted move may leave a trace, and the index must agree with the disk."""

from __future__ import annotations

from reliability.stress.editor_race import run


def test_long_moves_beside_an_editor_lose_no_save_and_leave_no_half_move() -> None:
    report = run(moves=8, backlinks=60, seed=2, slow=0.005, share=0.15, cli_every=3, max_seconds=300)
    counts = report["counts"]
    assert report["bad"] == 0, report
    assert report["editor_saves"] > 0 and report["daemon_alive"]
    assert sum(v for k, v in counts.items() if k.startswith("moves.")) == 8
    assert counts["checked.read_sha"] > 60
    assert not [k for k, v in counts.items() if k.startswith("violation.") and v], counts
