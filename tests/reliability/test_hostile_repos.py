"""Hostile repositories, the fast slice: drawn hostile configs, attributes, trees and blobs against
a real daemon (the long run is ``python -m reliability.stress.hostile_repos``; both share its code).

No command of a repository's config runs, every hostile config is reported (R09), every refused
tree or oversized blob is refused (R08) with the branch, the index and the files left exactly as
they were, no reply is INTERNAL, and the daemon keeps serving.
"""

from __future__ import annotations

from reliability.stress.hostile_repos import run
from tests.support.harness import Daemon, Home, assert_alive


def test_a_round_of_hostile_repositories(shared: tuple[Home, Daemon]) -> None:
    home, daemon = shared
    tally = run(home, daemon, cases=10, seed=3, heavy=False)
    c = tally.counts
    assert tally.failures == [], tally.failures
    assert c["cases"] == 10 and all(c[f"cases.{k}"] >= 1 for k in ("config", "attributes", "tree", "blob")), dict(c)
    assert c["code_executed"] == 0 and c["checks.code_run"] >= 5 * c["cases.config"] + 2 * c["cases.attributes"], dict(c)
    assert c["reported.R09"] == c["cases.config"], dict(c)
    assert c["refused.POLICY"] + c["refused.LIMIT"] == c["cases.tree"] + c["cases.blob"] == c["checks.intact"], dict(c)
    assert c["not_intact"] == 0 and c["replies.internal"] == 0 and c["daemon.alive"] == 1
    assert c["applied.sync"] == c["cases.config"] and c["applied.snapshot"] == c["cases.config"] + c["cases.attributes"], dict(c)
    assert_alive(home, daemon)
