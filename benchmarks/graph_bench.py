"""Lint and the link graph on generated vaults, side by side with a bare igraph run.

    .venv/bin/python -m benchmarks.graph_bench                  # 10,000 notes, 5 rounds
    .venv/bin/python -m benchmarks.graph_bench --with-100k      # and 100,000 notes
    .venv/bin/python -m benchmarks.graph_bench --notes 1000 --rounds 3 --no-daemon   # a quick look

In-process, on a real index of the vault (``VaultIndex.build``, not timed):

* ``snapshot``: resolving every link once (``vaultd.graph.snapshot.build``), what the first lint
  or graph call after a change pays;
* ``lint warm``: every rule over the kept snapshot (``vaultd.lint.engine.run``) and the hints of
  the first page, as a repeated lint pays; ``lint cold`` adds the snapshot, as the first lint
  after a change pays;
* ``communities``: ``vaultd.graph.communities.partition`` (edge list, Leiden, naming by
  centrality) against **bare igraph**: ``igraph.Graph`` plus ``leidenalg.find_partition`` with the
  same partition type, resolution and seed on the very same edge list, nothing else.

Through a daemon (unless ``--no-daemon``): ``vault.lint`` and ``graph.communities`` over the
socket, cold (a one-line append first, so the index changed) and warm (asked again). Medians of
``--rounds`` rounds; vaults are generated under ``$VAULTD_BENCH_DIR`` and never in the repository.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import corpus
from benchmarks.stats import machine_facts
from benchmarks.timed_daemon import VAULT_ID, Daemon, Home, call
from protocol.methods.common import Channel
from protocol.methods.vaults import VaultEntry
from vaultd.graph import communities
from vaultd.graph.snapshot import build, collector_paused
from vaultd.lint.engine import run, with_hints
from vaultd.lint.gather import gather, text_reader
from vaultd.policy.visibility import Visibility
from vaultd.vault.index import VaultIndex

OUT = Path(__file__).resolve().parent / "out"
AS_OF = dt.date(2026, 1, 1)


def timed(fn: Callable[[], Any], rounds: int) -> tuple[float, Any]:
    """The median wall seconds of ``rounds`` calls (a collection before each), and the last result."""
    samples = []
    result = None
    for _ in range(rounds):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), result


def bare_leiden(n: int, edges: list[tuple[int, int]]) -> list[int]:
    import igraph
    import leidenalg

    graph = igraph.Graph(n=n, edges=edges, directed=False)
    found = leidenalg.find_partition(
        graph,
        leidenalg.RBConfigurationVertexPartition,
        resolution_parameter=1.0,
        seed=communities.SEED,
        n_iterations=communities.ITERATIONS,
    )
    return list(found.membership)


def in_process(vault: Path, rounds: int) -> dict[str, Any]:
    index = VaultIndex(vault, None)
    started = time.perf_counter()
    index.build()
    built = time.perf_counter() - started
    entry = VaultEntry(id="bench", path=str(vault))
    view = Visibility.of(entry, Channel.CLI)
    keys = tuple(entry.parent_keys)

    def snapshot_only() -> Any:
        return build(index, keys, frozenset({"log.md"}))

    def lint_cold() -> Any:
        index.generation += 1  # as a change would: the next lint resolves every link again
        with collector_paused():
            inp = gather(index, entry, view, AS_OF)
            found = run(inp, text_of=text_reader(vault, inp.snap))
            with_hints(found[:200], inp)  # the default page, as the handler lists it
            return found

    def lint_warm() -> Any:
        with collector_paused():
            inp = gather(index, entry, view, AS_OF)
            found = run(inp, text_of=text_reader(vault, inp.snap))
            with_hints(found[:200], inp)
            return found

    snap_s, snap = timed(snapshot_only, rounds)
    cold_s, found = timed(lint_cold, rounds)
    warm_s, _ = timed(lint_warm, rounds)
    paths = snap.paths
    edges = communities.undirected_edges(snap, paths)
    ours_s, partition = timed(lambda: communities.partition(snap), rounds)
    bare_s, membership = timed(lambda: bare_leiden(len(paths), edges), rounds)
    links = sum(len(r.links) for r in index.notes.values())
    return {
        "notes": len(index.notes),
        "links": links,
        "edges": len(edges),
        "index_build_s": built,
        "snapshot_s": snap_s,
        "lint_cold_s": cold_s,
        "lint_warm_s": warm_s,
        "findings": len(found),
        "communities_s": ours_s,
        "bare_igraph_s": bare_s,
        "communities": len(partition.communities),
        "bare_communities": len(set(membership)),
        "modularity": partition.modularity,
    }


def through_daemon(vault_src: Path, rounds: int) -> dict[str, Any]:
    home = Home.create()
    try:
        corpus.Corpus(vault_src.parent, 0, 0).copy_to(home.vault)
        daemon = Daemon(home)
        try:
            client = daemon.client(timeout=600)
            call(client, "vault.add", {"id": VAULT_ID, "path": str(home.vault)})
            target = next(iter(sorted(p for p in home.vault.rglob("*.md"))))
            rel = target.relative_to(home.vault).as_posix()
            out: dict[str, Any] = {}
            # fresh: the log line each append writes is indexed before the call, so "warm" is warm
            for method, params in (("vault.lint", {"as_of": AS_OF.isoformat(), "fresh": True}), ("graph.communities", {"fresh": True})):
                cold, warm = [], []
                for n in range(rounds):
                    call(client, "note.append", {"target": rel, "section": "Bench", "markdown": f"line {n}"})
                    start = time.perf_counter()
                    call(client, method, params)
                    cold.append(time.perf_counter() - start)
                    start = time.perf_counter()
                    call(client, method, params)
                    warm.append(time.perf_counter() - start)
                out[method] = {"cold_s": statistics.median(cold), "warm_s": statistics.median(warm)}
            client.close()
            return out
        finally:
            daemon.stop()
    finally:
        home.cleanup()


def table(rows: list[dict[str, Any]]) -> str:
    head = "| notes | links | snapshot | lint warm | lint cold | communities (vaultd) | bare igraph+leidenalg | ratio | daemon lint cold / warm | daemon communities cold / warm |"
    lines = [head, "|" + "---|" * 10]
    for r in rows:
        d = r.get("daemon") or {}
        lint = d.get("vault.lint", {})
        comm = d.get("graph.communities", {})

        def ms(v: float | None) -> str:
            return f"{v * 1000:.0f} ms" if v is not None else "-"

        lines.append(
            f"| {r['notes']:,} | {r['links']:,} | {ms(r['snapshot_s'])} | {ms(r['lint_warm_s'])} | {ms(r['lint_cold_s'])} | "
            f"{ms(r['communities_s'])} | {ms(r['bare_igraph_s'])} | {r['communities_s'] / r['bare_igraph_s']:.2f} | "
            f"{ms(lint.get('cold_s'))} / {ms(lint.get('warm_s'))} | {ms(comm.get('cold_s'))} / {ms(comm.get('warm_s'))} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.graph_bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--notes", type=int, nargs="+", default=[10000], help="vault sizes (default 10000)")
    p.add_argument("--with-100k", action="store_true", help="also 100,000 notes")
    p.add_argument("--rounds", type=int, default=5, help="rounds per figure; the median is reported (default 5)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-daemon", action="store_true", help="in-process figures only")
    args = p.parse_args(argv)
    sizes = [*args.notes, *([100_000] if args.with_100k else [])]
    rows = []
    for notes in sizes:
        made = corpus.ensure(notes, args.seed)
        print(f"{notes} notes: in process", file=sys.stderr, flush=True)
        row = in_process(made.vault, args.rounds)
        if not args.no_daemon:
            print(f"{notes} notes: through a daemon", file=sys.stderr, flush=True)
            row["daemon"] = through_daemon(made.vault, args.rounds)
        rows.append(row)
    print(table(rows))
    OUT.mkdir(exist_ok=True)
    report = {"rows": rows, "rounds": args.rounds, "seed": args.seed, "machine": machine_facts()}
    (OUT / "graph-latest.json").write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
