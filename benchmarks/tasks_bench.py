"""task.list at scale, and what tasks and typed properties add to the daemon's memory.

Two daemons index two copies of one generated vault, each note given the same appended section of
list items: in the first copy they are checklist items with the Tasks plugin's and Dataview's fields
(``- [ ] ... 📅 date ⏫``, ``[due:: date]``, some done), in the second the same text as plain
bullets (``- ...``), so the two indexes differ by the task fields alone. For each:

* RSS after the index is built (the daemon's VmRSS, after a settle), and the difference: the RSS
  the task fields add;
* ``task.list`` of open tasks (the first page, limit 100) and of open tasks due in the next seven
  days, each timed ``--calls`` times after 20 warm-up calls; p50 and p95;
* ``vault.properties`` (types inferred over every note), timed the same way;
* in-process, on an index built from the same copy: the CPU time (``time.thread_time``) of the
  handler's own work for each page (:func:`vaultd.obsidian.tasks.select`, the page's items and
  their JSON), without the socket, the client or the event loop: what the call costs on an idle
  core, which a loaded machine's wall time hides.

``python -m benchmarks.tasks_bench --notes 10000`` prints a table and writes
``benchmarks/out/tasks-latest.json``. The vault is generated under ``$VAULTD_BENCH_DIR``, never in the
repository.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import random
import time
from pathlib import Path
from typing import Any

import msgspec

from benchmarks.corpus import bench_dir, ensure
from benchmarks.stats import pct, rss_bytes
from benchmarks.timed_daemon import VAULT_ID, Daemon, Home, call
from vaultd.obsidian.tasks import DateRange, TaskFilter, select, task_table
from vaultd.vault.index import VaultIndex

OUT = Path(__file__).resolve().parent / "out"
TODAY = dt.date.today()


def _section(rng: random.Random, checkbox: bool) -> str:
    """A note's appended list: 0 to 6 items, some with dates, priorities, tags or Dataview fields."""
    lines = ["", "## Tasks", ""]
    for k in range(rng.randrange(7)):
        due = (TODAY + dt.timedelta(days=rng.randrange(-30, 60))).isoformat()
        extra = rng.choice(["", f" 📅 {due}", f" 📅 {due} ⏫", f" [due:: {due}]", " #work", f" ⏳ {due} 🔁 every week"])
        box = ("[x] " if rng.random() < 0.3 else "[ ] ") if checkbox else ""
        lines.append(f"- {box}item {k} of this note{extra}")
    return "\n".join(lines) + "\n"


def _prepare(vault: Path, seed: int, checkbox: bool) -> int:
    rng = random.Random(seed)
    items = 0
    for note in sorted(vault.rglob("*.md")):
        section = _section(rng, checkbox)
        items += section.count("\n- ")
        with open(note, "a", encoding="utf-8") as f:
            f.write(section)
    return items


def _timed(client: Any, method: str, params: dict[str, Any], calls: int) -> list[float]:
    for _ in range(20):
        call(client, method, params)
    out = []
    for _ in range(calls):
        t = time.perf_counter()
        call(client, method, params)
        out.append(time.perf_counter() - t)
    return out


def in_process(vault: Path, calls: int) -> dict[str, list[float]]:
    """The open-tasks page and the due-this-week page, computed as the handler computes them."""
    index = VaultIndex(vault, None)
    index.build()
    week = DateRange(after=(TODAY - dt.timedelta(days=1)).isoformat(), before=(TODAY + dt.timedelta(days=7)).isoformat())
    out: dict[str, list[float]] = {}
    for name, wanted in (("open", TaskFilter()), ("week", TaskFilter(due=week))):
        samples = []
        for k in range(calls + 20):
            t = time.thread_time()
            page, total, _ = select(task_table(index), wanted, lambda p: True, None, 100)
            msgspec.json.encode({"tasks": [msgspec.to_builtins(task) for _, task in page], "total": total})
            if k >= 20:
                samples.append(time.thread_time() - t)
        out[name] = samples
    return out


def measure(notes: int, seed: int, calls: int) -> dict[str, Any]:
    corpus = ensure(notes, seed)
    work = bench_dir() / "work"
    work.mkdir(parents=True, exist_ok=True)
    row: dict[str, Any] = {"notes": notes, "seed": seed, "calls": calls}
    for checkbox in (True, False):
        home = Home.create(work)
        corpus.copy_to(home.vault)
        items = _prepare(home.vault, seed, checkbox)
        if checkbox:
            local = in_process(home.vault, calls)
            row["local_open_s"], row["local_week_s"] = local["open"], local["week"]
        daemon = Daemon(home)
        try:
            client = daemon.client()
            call(client, "vault.add", {"id": VAULT_ID, "path": str(home.vault)})
            gc.collect()
            time.sleep(3)
            kind = "tasks" if checkbox else "bullets"
            row[f"rss_{kind}"] = rss_bytes(daemon.pid)
            row[f"items_{kind}"] = items
            if checkbox:
                week = {"status": "open", "due_after": "yesterday", "due_before": "+7d", "limit": 100}
                first = call(client, "task.list", {"status": "open", "limit": 100})
                row["open_tasks"] = first["total"]
                row["open_s"] = _timed(client, "task.list", {"status": "open", "limit": 100}, calls)
                row["week_s"] = _timed(client, "task.list", week, calls)
                row["week_tasks"] = call(client, "task.list", week)["total"]
                row["properties_s"] = _timed(client, "vault.properties", {}, max(calls // 5, 10))
            client.close()
        finally:
            daemon.stop()
            home.cleanup()
    row["rss_added"] = row["rss_tasks"] - row["rss_bullets"]
    return row


def table(row: dict[str, Any]) -> str:
    def ms(key: str, p: float) -> str:
        return f"{pct(row[key], p) * 1000:.1f}"

    return "\n".join(
        [
            "| notes | tasks (open) | task.list open p50 / p95 ms | due this week p50 / p95 ms | in-process CPU open / week p50 ms "
            "| vault.properties p50 ms | RSS tasks / bullets MiB | added MiB |",
            "|---|---|---|---|---|---|---|---|",
            f"| {row['notes']} | {row['items_tasks']} ({row['open_tasks']}) | {ms('open_s', 50)} / {ms('open_s', 95)} | "
            f"{ms('week_s', 50)} / {ms('week_s', 95)} | {ms('local_open_s', 50)} / {ms('local_week_s', 50)} | {ms('properties_s', 50)} | "
            f"{row['rss_tasks'] / 2**20:.0f} / {row['rss_bullets'] / 2**20:.0f} | {row['rss_added'] / 2**20:.1f} |",
        ]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--notes", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    row = measure(args.notes, args.seed, args.calls)
    print(table(row))
    OUT.mkdir(exist_ok=True)
    (OUT / "tasks-latest.json").write_text(json.dumps(row, indent=1))


if __name__ == "__main__":
    main()
