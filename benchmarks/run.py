"""Run the benchmarks: vaultd, basic-memory and the limits on generated vaults; print the table.

    .venv/bin/python -m benchmarks.run            # regular: vaultd at 1,000 and 10,000 notes,
                                                  # basic-memory and the limits at 1,000 (< 20 min)
    .venv/bin/python -m benchmarks.run --quick    # smoke: 1,000 notes, fewer repeats (< 3 min)
    .venv/bin/python -m benchmarks.run --notes 200 --quick --no-basic-memory   # a tiny run

Vaults are generated under ``$VAULTD_BENCH_DIR`` (default ``/tmp/vaultd-bench``), never in the
repository; results go to ``benchmarks/out/`` (git-ignored) as Markdown and JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks import basic_memory, corpus, limits, report, vaultd_bench
from benchmarks.report import BM, LIMIT, VAULTD
from benchmarks.stats import Figure, machine_facts, tool_version

OUT = Path(__file__).resolve().parent / "out"


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="1,000 notes only, fewer repeats, 5 s idle (< 3 min)")
    p.add_argument("--notes", type=int, nargs="+", help="vault sizes for vaultd (default 1000 10000)")
    p.add_argument("--with-100k", action="store_true", help="also measure vaultd at 100,000 notes")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-basic-memory", action="store_true", help="skip basic-memory")
    p.add_argument("--bm-10k", action="store_true", help="also measure basic-memory at 10,000 notes (hours)")
    p.add_argument(
        "--bm-cap",
        type=float,
        help="seconds basic-memory may index before it is stopped and its full time extrapolated (default 600; 40 with --quick)",
    )
    p.add_argument("--idle", type=float, help="seconds of idle CPU measurement (default 30; 5 with --quick)")
    p.add_argument("--out", type=Path, default=OUT, help="where the report goes (default benchmarks/out)")
    p.add_argument("--render", type=Path, metavar="JSON", help="measure nothing: print the report of a run's JSON again")
    return p.parse_args(argv)


def plans(args: argparse.Namespace) -> tuple[vaultd_bench.Plan, basic_memory.Plan]:
    vp, bp = vaultd_bench.Plan(), basic_memory.Plan()
    if args.quick:
        vp = vaultd_bench.Plan(
            cold_runs=3, restart_runs=3, queries=100, reads=100, cli_runs=5, writes=40, fresh_writes=20, idle_seconds=5.0
        )
        bp = basic_memory.Plan(index_cap_s=40.0, queries=30, writes=3)
    if args.idle is not None:
        vp = replace(vp, idle_seconds=args.idle)
    if args.bm_cap is not None:
        bp = replace(bp, index_cap_s=args.bm_cap)
    return vp, bp


def versions(bm: dict[str, Any]) -> dict[str, Any]:
    from importlib.metadata import version

    import apsw

    out: dict[str, Any] = {
        "vaultd": version("vaultd"),
        "apsw": apsw.apswversion(),
        "sqlite": apsw.sqlite_lib_version(),
        "mcp": version("mcp"),
        "ripgrep": tool_version(["rg", "--version"]),
        "generator": str(corpus.GENERATOR),
    }
    try:
        out["git"] = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=corpus.REPO, check=False
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "protocol", "vaultd", "vaultctl"],
            capture_output=True,
            text=True,
            cwd=corpus.REPO,
            check=False,
        ).stdout
        out["git_dirty"] = bool(dirty.strip())
    except OSError:
        pass
    if bm:
        out["basic-memory"] = bm
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.render is not None:  # the tables and goals as today's code draws them, from a run's figures
        doc = json.loads(args.render.read_text())
        figures = report.from_json(doc["results"])
        print(render(doc, figures, report.goals(figures)))
        return 0
    started = time.perf_counter()
    sizes = args.notes or ([1000] if args.quick else [1000, 10000])
    if args.with_100k and 100000 not in sizes:
        sizes.append(100000)
    bm_sizes = [] if args.no_basic_memory else [1000 if 1000 in sizes else min(sizes)]
    if args.bm_10k and 10000 in sizes and not args.no_basic_memory:
        bm_sizes.append(10000)
    vplan, bplan = plans(args)
    limits.ensure_ripgrep()  # before the versions are read, so the facts line names the one measured
    measured = versions({})  # the commit is read before the run: it is the code that gets measured
    bench = corpus.bench_dir()
    work = bench / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    results: report.Results = {}
    bm_facts: dict[str, Any] = {}
    load: dict[str, list[float]] = {"start": list(os.getloadavg())}
    for n in sizes:
        c = corpus.for_size(n, args.seed)
        print(f"== {n:,} notes ({c.root})", file=sys.stderr, flush=True)
        plan = vplan if n < 100000 else replace(vplan, cold_runs=1, restart_runs=3)
        systems: dict[str, dict[str, Figure]] = {}
        systems[VAULTD] = vaultd_bench.measure(c, plan, work)
        runs = plan.cold_runs
        lim = limits.fts(c, runs, plan.queries, work)
        lim["read_loop"] = limits.read_loop(c, runs)
        lim["ripgrep"] = limits.ripgrep(c, plan.queries)
        lim["create"] = limits.durable_create(work, plan.writes)
        print(
            f"  limits: FTS5 build {lim['cold_build'].p50:.2f} s, query p50 {lim['search'].p50 * 1e3:.2f} ms, "
            f"rg p50 {lim['ripgrep'].p50 * 1e3:.1f} ms, durable create p50 {lim['create'].p50 * 1e3:.2f} ms"
            if lim["ripgrep"].ok
            else "",
            file=sys.stderr,
            flush=True,
        )
        systems[LIMIT] = lim
        if n in bm_sizes:
            systems[BM], facts = basic_memory.measure(c, bplan, bench, work)
            bm_facts.update(facts)
        results[n] = systems
        load[f"after {n}"] = list(os.getloadavg())
    shutil.rmtree(work, ignore_errors=True)

    command = "python -m benchmarks.run" + (" " + " ".join(sys.argv[1:]) if argv is None else " " + " ".join(argv))
    goal_rows = report.goals(results)
    doc = {
        "command": command.strip(),
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "elapsed_s": round(time.perf_counter() - started, 1),
        "machine": machine_facts(),
        "load_average": load,
        "versions": {**measured, **({"basic-memory": bm_facts} if bm_facts else {})},
        "sizes": sizes,
        "basic_memory_sizes": bm_sizes,
        "seed": args.seed,
        "plan": {"vaultd": vplan.__dict__, "basic_memory": bplan.__dict__},
        "results": report.to_json(results),
        "goals": goal_rows,
    }
    md = render(doc, results, goal_rows)
    print(md)
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    for name in (f"bench-{stamp}", "latest"):
        (args.out / f"{name}.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        (args.out / f"{name}.md").write_text(md + "\n")
    print(f"wrote {args.out / 'latest.md'} and .json ({doc['elapsed_s']:.0f} s)", file=sys.stderr)
    return 0


def render(doc: dict[str, Any], results: report.Results, goal_rows: list[dict[str, Any]]) -> str:
    m, v = doc["machine"], doc["versions"]
    bm = v.get("basic-memory", {})
    facts = (
        f"`{doc['command']}` at {doc['when']} ({doc['elapsed_s']:.0f} s): {m['cpu_count']} CPUs "
        f"({m['cpu_model']}), {m['memory']}, Linux {m['kernel']}, Python {m['python']}; vaultd {v['vaultd']}"
        f" (git {v.get('git', '?')}{', with uncommitted changes' if v.get('git_dirty') else ''}), "
        f"SQLite {v['sqlite']}, apsw {v['apsw']}, mcp {v['mcp']}, {v['ripgrep']}"
        + (f", basic-memory {bm.get('version', '')}" if bm else "")
        + ". 1-minute load average: "
        + ", ".join(f"{k} {v[0]:.1f}" for k, v in doc["load_average"].items())
        + "."
    )
    parts = [facts, report.table(results)]
    if len(results) > 1:
        parts += ["How each figure grows with the vault (vaultd / the limit, medians unless p95):", report.scale_table(results)]
    return "\n\n".join([*parts, "Goals:", report.goals_table(goal_rows)])


if __name__ == "__main__":
    raise SystemExit(main())
