"""Concurrent writers through every channel, with an editor rewriting the files under them.

A fast slice of ``python -m reliability.stress.concurrency`` (which runs 16 clients): socket, CLI
and MCP-shim clients append, patch and set frontmatter with the ``expected_sha`` read just before,
and race to create the same paths, while an editor process appends to the same files in place
and by temp file and rename. No acknowledged write may be lost, no refused one applied, no two
daemon writes may start from the same content, and the index must agree with the disk.
"""

from __future__ import annotations

from reliability.stress.concurrency import run


def test_no_lost_update_no_deadlock_and_the_index_agrees_with_the_disk() -> None:
    report = run(clients=5, ops=8, seed=3, max_seconds=90, kinds=["raw", "mcp", "cli", "raw", "mcp"], editor=True)
    checks = report["checks"]
    assert report["bad"] == 0, report
    assert report["stuck_clients"] == 0 and report["hangs"] == 0 and report["daemon_alive"]
    assert report["editor_writes"] > 0
    assert checks["acked"] > 5 and checks["checked.read_sha"] >= 4 and checks["checked.search_token"] > 10
    assert not [k for k, v in checks.items() if k.startswith("violation.") and v], checks
