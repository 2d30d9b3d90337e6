"""base.query on generated vaults: a filter on a property and a tag, sorted, grouped.

    .venv/bin/python -m benchmarks.bases                      # 10,000 notes, 20 rounds
    .venv/bin/python -m benchmarks.bases --notes 10000 100000 # and 100,000 notes
    .venv/bin/python -m benchmarks.bases --no-daemon          # in-process figures only

The vault is written under ``$VAULTD_BENCH_DIR`` (never in the repository): notes with a
``status`` (four values), a ``priority`` (1-5), an ``estimate`` and tags, a tenth of them tagged
``#project``. The Base keeps ``status != "done"`` notes tagged ``project``, sorted by priority
(descending) then name, grouped by status, with a formula and a Sum summary.

* ``in process``: :func:`vaultd.obsidian.bases.run_view` over a built index, the figure of the
  evaluator alone (p50 and p95 of ``--rounds``);
* ``daemon``: ``base.query`` over the socket through vaultctl's client, the figure a caller sees
  (p50 and p95; the first call apart, after ``fresh``), and the daemon's CPU seconds per call
  (utime + stime over the rounds), which a loaded machine does not inflate as it does wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.corpus import bench_dir
from benchmarks.stats import cpu_seconds, machine_facts, pct
from benchmarks.timed_daemon import VAULT_ID, Daemon, Home, call
from vaultd.memory import collector_paused
from vaultd.obsidian.bases import Universe, read_base, run_view
from vaultd.vault.index import VaultIndex
from vaultd.vault.link_targets import ResolutionStatus

if TYPE_CHECKING:
    from collections.abc import Callable

OUT = Path(__file__).resolve().parent / "out"
BASE = """filters:
  and:
    - file.hasTag("project")
    - 'status != "done"'
formulas:
  effort: 'estimate * priority'
views:
  - type: table
    name: Open projects
    order: [file.name, status, priority, formula.effort]
    sort:
      - property: priority
        direction: DESC
      - property: file.name
        direction: ASC
    groupBy:
      property: status
      direction: ASC
    summaries:
      formula.effort: Sum
"""
STATUSES = ("active", "waiting", "done", "someday")


def make_vault(notes: int, seed: int) -> Path:
    """The generated vault (reused when it is already there)."""
    root = bench_dir() / f"bases-{notes}-{seed}"
    marker = root / ".complete"
    if marker.exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    rng = random.Random(seed)
    for n in range(notes):
        folder = root / f"area-{n % 50:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        tags = ["project"] if n % 10 == 0 else []
        tags += rng.sample(["reading", "idea", "meeting", "person", "log"], k=rng.randint(0, 2))
        front = (
            f"---\nstatus: {rng.choice(STATUSES)}\npriority: {rng.randint(1, 5)}\nestimate: {rng.randint(1, 40)}\n"
            f"tags: [{', '.join(tags)}]\ndue: 2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}\n---\n"
        )
        body = f"# Note {n}\n\nSee [[Note {rng.randrange(notes)}]] and [[Note {rng.randrange(notes)}]].\n"
        (folder / f"Note {n}.md").write_text(front + body)
    (root / "Projects.base").write_text(BASE)
    marker.write_text("")
    return root


def timed(fn: Callable[[], Any], rounds: int, cpu: list[float] | None = None) -> tuple[list[float], Any]:
    """Wall seconds of each round (and this process's CPU seconds into ``cpu``), and the last result."""
    times: list[float] = []
    result = None
    for _ in range(rounds):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        times.append(time.perf_counter() - start)
        if cpu is not None:
            cpu.append(time.process_time() - start_cpu)
    return times, result


def in_process(vault: Path, rounds: int) -> dict[str, Any]:
    index = VaultIndex(vault, None)
    index.build()
    base = read_base(BASE)

    def resolve(target: str, source: str) -> str | None:
        found = index.resolver.resolve(target, source)
        return found.path if found.status is ResolutionStatus.RESOLVED else None

    def query() -> Any:
        with collector_paused():
            universe = Universe(notes=index.notes, files=index.attachments, resolve=resolve, backlinks=lambda p: [])
            return run_view(base, None, universe, paths=sorted([*index.notes, *index.attachments]))

    cpu: list[float] = []
    times, result = timed(query, rounds, cpu)
    return {
        "p50_s": pct(times, 50),
        "p95_s": pct(times, 95),
        "cpu_p50_s": pct(cpu, 50),
        "rows": len(result.rows),
        "groups": len(result.groups),
        "steps": result.steps,
    }


def through_daemon(vault: Path, rounds: int) -> dict[str, Any]:
    home = Home.create()
    daemon = Daemon(home)
    try:
        client = daemon.client()
        call(client, "vault.add", {"id": VAULT_ID, "path": str(vault)})
        params = {"vault": VAULT_ID, "path": "Projects.base", "limit": 50, "fresh": True}
        first, _ = timed(lambda: call(client, "base.query", params), 1)
        params["fresh"] = False
        before = cpu_seconds(daemon.proc.pid)
        times, result = timed(lambda: call(client, "base.query", params), rounds)
        daemon_cpu = (cpu_seconds(daemon.proc.pid) - before) / rounds
        return {"first_s": first[0], "p50_s": pct(times, 50), "p95_s": pct(times, 95), "cpu_mean_s": daemon_cpu, "rows": result["returned"]}
    finally:
        daemon.stop()
        home.cleanup()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bases", description=__doc__.split("\n\n")[0])
    p.add_argument("--notes", type=int, nargs="+", default=[10000], help="vault sizes (default 10000)")
    p.add_argument("--rounds", type=int, default=20, help="rounds per figure (default 20)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-daemon", action="store_true", help="in-process figures only")
    args = p.parse_args(argv)
    rows = []
    for notes in args.notes:
        print(f"{notes} notes: writing the vault", file=sys.stderr, flush=True)
        vault = make_vault(notes, args.seed)
        row: dict[str, Any] = {"notes": notes, "in_process": in_process(vault, args.rounds)}
        if not args.no_daemon:
            row["daemon"] = through_daemon(vault, args.rounds)
        rows.append(row)
    print("| notes | rows returned | in process p50 / p95 (CPU p50) | base.query p50 / p95 (daemon CPU per call) | first call |")
    print("|---|---|---|---|---|")
    for r in rows:
        ip, d = r["in_process"], r.get("daemon") or {}

        def ms(v: float | None) -> str:
            return f"{v * 1000:.1f} ms" if v is not None else "-"

        print(
            f"| {r['notes']:,} | {ip['rows']:,} | {ms(ip['p50_s'])} / {ms(ip['p95_s'])} ({ms(ip['cpu_p50_s'])}) | "
            f"{ms(d.get('p50_s'))} / {ms(d.get('p95_s'))} ({ms(d.get('cpu_mean_s'))}) | {ms(d.get('first_s'))} |"
        )
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {args.rounds} rounds")
    OUT.mkdir(exist_ok=True)
    report = {"rows": rows, "rounds": args.rounds, "seed": args.seed, "machine": machine_facts(), "load": os.getloadavg()}
    (OUT / "bases-latest.json").write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
