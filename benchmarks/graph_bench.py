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
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks import corpus
from benchmarks.stats import machine_facts
from benchmarks.timed_daemon import VAULT_ID, Daemon, Home, call
from protocol.methods.common import Channel
from protocol.methods.vaults import VaultEntry
from vaultd.graph import communities
from vaultd.graph.snapshot import build
from vaultd.lint.engine import run, with_fixes, with_hints
from vaultd.lint.gather import gather, text_reader
from vaultd.memory import collector_paused
from vaultd.policy.visibility import Visibility
from vaultd.vault.index import VaultIndex

if TYPE_CHECKING:
    from collections.abc import Callable

OUT = Path(__file__).resolve().parent / "out"
AS_OF = dt.date(2026, 1, 1)


CPU: dict[str, float] = {}  #: the median CPU seconds of each figure, by its name


def timed(fn: Callable[[], Any], rounds: int, name: str = "") -> tuple[float, Any]:
    """The median wall seconds of ``rounds`` calls (a collection before each), and the last result.

    The median CPU seconds of the process go to ``CPU[name]``: on a shared, busy machine they
    say what the work costs, where wall time also says how long it waited for a core."""
    samples, cpu = [], []
    result = None
    for _ in range(rounds):
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        samples.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    if name:
        CPU[name] = statistics.median(cpu)
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
            found = run(inp)
            with_fixes(with_hints(found[:200], inp), text_reader(vault, inp.snap))  # the default page, as the handler lists it
            return found

    def lint_warm() -> Any:
        with collector_paused():
            inp = gather(index, entry, view, AS_OF)
            found = run(inp)
            with_fixes(with_hints(found[:200], inp), text_reader(vault, inp.snap))
            return found

    snap_s, snap = timed(snapshot_only, rounds, "snapshot")
    cold_s, found = timed(lint_cold, rounds, "lint_cold")
    warm_s, _ = timed(lint_warm, rounds, "lint_warm")
    paths = snap.paths
    edges = communities.undirected_edges(snap, paths)
    ours_s, partition = timed(lambda: communities.partition(snap), rounds, "communities")
    bare_s, membership = timed(lambda: bare_leiden(len(paths), edges), rounds, "bare_igraph")
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
        "cpu_s": dict(CPU),
    }


def through_daemon(vault_src: Path, rounds: int) -> dict[str, Any]:
    home = Home.create()
    try:
        shutil.copytree(vault_src, home.vault, symlinks=True)  # a copy: the daemon writes to it
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
    head = (
        "| notes | links | snapshot | lint warm | lint cold | communities (vaultd) | bare igraph+leidenalg | ratio "
        "| daemon lint cold / warm | daemon communities cold / warm |"
    )
    lines = [head, "|" + "---|" * 10]
    for r in rows:
        d = r.get("daemon") or {}
        lint = d.get("vault.lint", {})
        comm = d.get("graph.communities", {})

        cpu = r["cpu_s"]

        def ms(v: float | None) -> str:
            return f"{v * 1000:.0f} ms" if v is not None else "-"

        def both(key: str, name: str, r: dict[str, Any] = r, cpu: dict[str, float] = cpu) -> str:
            return f"{ms(r[key])} ({ms(cpu.get(name))} cpu)"

        lines.append(
            f"| {r['notes']:,} | {r['links']:,} | {both('snapshot_s', 'snapshot')} | {both('lint_warm_s', 'lint_warm')} | "
            f"{both('lint_cold_s', 'lint_cold')} | {both('communities_s', 'communities')} | {both('bare_igraph_s', 'bare_igraph')} | "
            f"{cpu['communities'] / cpu['bare_igraph']:.2f} | "
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
        vault = corpus.for_size(notes, args.seed).vault
        print(f"{notes} notes: in process", file=sys.stderr, flush=True)
        row = in_process(vault, args.rounds)
        if not args.no_daemon:
            print(f"{notes} notes: through a daemon", file=sys.stderr, flush=True)
            row["daemon"] = through_daemon(vault, args.rounds)
        rows.append(row)
    print(table(rows))
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; medians of {args.rounds} rounds; ratio of CPU seconds")
    OUT.mkdir(exist_ok=True)
    report = {"rows": rows, "rounds": args.rounds, "seed": args.seed, "machine": machine_facts(), "load": os.getloadavg()}
    (OUT / "graph-latest.json").write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
