"""Search, read, create and freshness of several source trees' daemons on the same vault, taken in
turn, round after round, so that a change's cost on the hot calls is seen beside the commit before
it on the same machine at the same moment.

    .venv/bin/python -m benchmarks.side_by_side --tree /tmp/old . [--notes 1000] [--rounds 3]

Each round starts each tree's daemon in a fresh temporary home on a copy of the vault, adds the
vault, and runs ``benchmarks.vaultd_bench``'s reads, writes and freshness on it; a row per tree and
round, then the medians of the rounds. The scale run (``benchmarks.run``) takes the same figures of
one tree; this one only compares.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from benchmarks import corpus
from benchmarks import vaultd_bench as bench
from benchmarks.stats import cpu_seconds
from benchmarks.timed_daemon import VAULT_ID, Daemon, Home, call

#: The figures compared, as (name in the table, the figure's key, which measurement gives it)
FIGURES = (("search p50", "search"), ("read p50", "read"), ("create p50", "create"), ("fresh: true p50", "freshness_barrier"))
SEARCH_CPU = "daemon CPU a search"  #: the daemon's utime + stime over the queries, steadier than wall on a shared machine


def one(tree: Path, c: corpus.Corpus, plan: bench.Plan) -> dict[str, float]:
    """The figures of ``tree``'s daemon on a fresh copy of the vault, in milliseconds."""
    home = Home.create()
    home.env["PYTHONPATH"] = str(tree)  # before the venv's own (editable) path
    daemon: Daemon | None = None
    try:
        c.copy_to(home.vault)
        daemon = Daemon(home)
        client = daemon.client()
        call(client, "vault.add", {"id": VAULT_ID, "path": str(home.vault)})
        client.close()
        figs = {**bench._reads(daemon, c, plan), **bench._writes(daemon, plan), **bench._freshness(daemon, home, plan)}
        got = {name: figs[key].p50 * 1e3 for name, key in FIGURES}
        got[SEARCH_CPU] = _search_cpu(daemon, c, plan) * 1e3
        return got
    finally:
        if daemon is not None:
            daemon.stop()
        home.cleanup()


def _search_cpu(daemon: Daemon, c: corpus.Corpus, plan: bench.Plan) -> float:
    """The daemon's CPU seconds a ``note.search``, over the plan's queries asked once more."""
    client = daemon.client()
    queries = c.queries()[: plan.queries]
    before = cpu_seconds(daemon.pid)
    for q in queries:
        call(client, "note.search", {"query": q, "vault": VAULT_ID})
    used = cpu_seconds(daemon.pid) - before
    client.close()
    return used / len(queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, nargs="+", required=True, help="vaultd source trees, measured in this order each round")
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    c = corpus.ensure(args.notes, args.seed)
    plan = bench.Plan()
    names = [*(name for name, _ in FIGURES), SEARCH_CPU]
    rows: dict[Path, list[dict[str, float]]] = {tree: [] for tree in args.tree}
    print(f"| tree | round | {' | '.join(names)} |", flush=True)
    print(f"|---|---|{'---|' * len(names)}", flush=True)
    for rnd in range(args.rounds):
        for tree in args.tree:
            got = one(tree.resolve(), c, plan)
            rows[tree].append(got)
            print(f"| {tree} | {rnd + 1} | {' | '.join(f'{got[n]:.2f} ms' for n in names)} |", flush=True)
    for tree, runs in rows.items():
        print(f"| {tree} | median | {' | '.join(f'{statistics.median(r[n] for r in runs):.2f} ms' for n in names)} |", flush=True)


if __name__ == "__main__":
    main()
