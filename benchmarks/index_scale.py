"""The lean index's goals at each size, judged in one run: the daemon's cold build against the
bare FTS5 build, its resident size after indexing and after a warm restart, and the warm restart
to the first answer; and the daemon's own baseline, serving no vault: its resident size once it
has answered, and its start to that first answer.

    .venv/bin/python -m benchmarks.index_scale [--notes 1000 10000 100000] [--runs 3] [--tree DIR]

Each daemon runs in a fresh temporary home on a copy of the vault, as ``benchmarks.run`` starts
them (:mod:`benchmarks.timed_daemon`; the same figures, fewer of the others: reads, writes and
freshness are ``benchmarks.run``'s). ``--tree`` names another source tree of vaultd (``git
worktree add /tmp/old HEAD~3``) whose daemon is measured beside this one's, on the same vault,
in the same run: the cost of each change on the same table. Vaults past 40,000 notes are
composed of generated 10,000-note vaults (``benchmarks.corpus``); nothing is written in the
repository.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from functools import partial
from pathlib import Path

from benchmarks import corpus, limits
from benchmarks.report import RSS_MB, WARM_S, build_goal
from benchmarks.stats import Figure, Stopwatch, cpu_seconds, rss_bytes
from benchmarks.timed_daemon import VAULT_ID, Daemon, Home, answers_a_listing, call
from tests.support.wait import wait_until
from vaultctl.client import CallError, Client

REPO = Path(__file__).resolve().parents[1]

#: The daemon with no vault (MB): what every size's resident figure starts from.
EMPTY_RSS_MB = 35.0


def _resolves(client: Client, name: str) -> None:
    """A read by name: the index's name maps resolve it, so it answers once they are whole (an
    answer of any kind, a name two notes share too; the call itself waits for the index).
    ``note.links``, not ``note.read``: a read of a note with properties types them across the
    vault, every record read, which the resident size measured next would count."""
    try:
        call(client, "note.links", {"vault": VAULT_ID, "target": name, "limit": 1})
    except CallError as exc:
        if exc.data.code == "UNAVAILABLE":
            raise


def measure(tree: Path, c: corpus.Corpus, runs: int, work: Path) -> dict[str, Figure]:
    """Cold builds, then warm restarts of the last one's home, of the daemon of ``tree``.

    Each warm restart is timed to two answers: the first ``note.list`` (the note table), then
    the first read by a note's name (the name maps too), asked right after the list answers."""
    cold, cold_cpu, rss, warm, rss_warm = Figure("s"), Figure("s"), Figure("B"), Figure("s"), Figure("B")
    named, warm_cpu = Figure("s"), Figure("s")
    name = c.paths()[0].rpartition("/")[2].removesuffix(".md")
    home = Home.create(work)
    home.env["PYTHONPATH"] = str(tree)  # before the venv's own (editable) path
    daemon: Daemon | None = None
    try:
        for run in range(runs):
            if run:
                home.cleanup()
                home = Home.create(work)
                home.env["PYTHONPATH"] = str(tree)
            c.copy_to(home.vault)
            daemon = Daemon(home)
            client = daemon.client()
            before = cpu_seconds(daemon.pid)
            with Stopwatch() as sw:
                try:
                    call(client, "vault.add", {"id": VAULT_ID, "path": str(home.vault)})
                except CallError:  # the call's own wait ran out ("still indexing"): wait for the index
                    wait_until(partial(answers_a_listing, client), 3600, "the index", poll=0.05)
            cold.samples.append(sw.seconds)
            cold_cpu.samples.append(cpu_seconds(daemon.pid) - before)
            client.close()
            time.sleep(1.0)  # the build's last cache write and the hand-back of its free pages
            rss.samples.append(float(rss_bytes(daemon.pid)))
            if run < runs - 1:
                daemon.stop()
                daemon = None
        for _ in range(runs):
            assert daemon is not None
            daemon.stop()
            daemon = Daemon(home)
            client = daemon.client()
            wait_until(partial(answers_a_listing, client), 3600, "the index", poll=0.05)
            warm.samples.append(time.perf_counter() - daemon.started)
            warm_cpu.samples.append(cpu_seconds(daemon.pid))
            _resolves(client, name)
            named.samples.append(time.perf_counter() - daemon.started)
            client.close()
            time.sleep(1.0)
            rss_warm.samples.append(float(rss_bytes(daemon.pid)))
    finally:
        if daemon is not None:
            daemon.stop()
        home.cleanup()
    return {"cold": cold, "cold_cpu": cold_cpu, "rss": rss, "warm": warm, "rss_warm": rss_warm, "named": named, "warm_cpu": warm_cpu}


def measure_empty(tree: Path, runs: int, work: Path) -> dict[str, Figure]:
    """The daemon of ``tree`` serving no vault, started ``runs`` times in fresh homes: from its
    spawn to its first answer (``daemon.status``, wall and the process's CPU), and its resident
    size a second later (what it loaded to start and to answer, nothing of a vault)."""
    start, start_cpu, rss = Figure("s"), Figure("s"), Figure("B")
    for _ in range(runs):
        home = Home.create(work)
        home.env["PYTHONPATH"] = str(tree)
        daemon = Daemon(home)
        try:
            client = daemon.client()
            call(client, "daemon.status", {})
            start.samples.append(time.perf_counter() - daemon.started)
            start_cpu.samples.append(cpu_seconds(daemon.pid))
            client.close()
            time.sleep(1.0)
            rss.samples.append(float(rss_bytes(daemon.pid)))
        finally:
            daemon.stop()
            home.cleanup()
    return {"start": start, "start_cpu": start_cpu, "rss": rss}


def _verdict(value: float, goal: float | None) -> str:
    if goal is None:
        return "-"
    return "PASS" if value <= goal else "**MISS**"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.index_scale")
    parser.add_argument("--notes", type=int, nargs="*", default=[1000, 10000], help="sizes (none: the no-vault daemon alone)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runs", type=int, default=3, help="cold builds and warm restarts at each size")
    parser.add_argument("--tree", type=Path, nargs="*", default=[], help="other vaultd source trees to measure beside this one")
    args = parser.parse_args()
    trees = [REPO, *(t.resolve() for t in args.tree)]
    print("| notes | tree | figure | measured (median) | goal | verdict |")
    print("|---|---|---|---|---|---|")
    empty_work = Path(tempfile.mkdtemp(prefix="scale", dir=corpus.bench_dir()))
    try:
        for tree in trees:
            e = measure_empty(tree, args.runs, empty_work)
            rss_mb = e["rss"].p50 / 1e6
            shown = f"{e['start'].p50:.2f} s; CPU {e['start_cpu'].p50:.2f} s"
            print(f"| 0 | {tree.name} | daemon with no vault: spawn to its first answer (wall; CPU) | {shown} | - | - |")
            verdict = _verdict(rss_mb, EMPTY_RSS_MB)
            print(f"| 0 | {tree.name} | daemon RSS with no vault | {rss_mb:.1f} MB | <= {EMPTY_RSS_MB:g} MB | {verdict} |", flush=True)
    finally:
        shutil.rmtree(empty_work, ignore_errors=True)
    for notes in args.notes:
        c = corpus.for_size(notes, args.seed)
        work = Path(tempfile.mkdtemp(prefix="scale", dir=corpus.bench_dir()))
        try:
            bare = limits.fts(c, args.runs, 1, work)
            bare_wall, bare_cpu = bare["cold_build"].p50, bare["cold_build_cpu"].p50
            for tree in trees:
                f = measure(tree, c, args.runs, work)
                ratio = f["cold"].p50 / bare_wall
                ratio_goal = build_goal(notes)
                rss_goal, warm_goal = RSS_MB.get(notes), WARM_S.get(notes)  # named at these sizes only
                rows = [
                    (
                        "cold build, vaultd / bare FTS5 (wall; CPU)",
                        f"{f['cold'].p50:.2f} s / {bare_wall:.2f} s = {ratio:.2f}x; CPU {f['cold_cpu'].p50:.2f} / {bare_cpu:.2f} s",
                        ratio_goal,
                        ratio,
                        "x",
                    ),
                    ("daemon RSS after indexing", f"{f['rss'].p50 / 1e6:.1f} MB", rss_goal, f["rss"].p50 / 1e6, " MB"),
                    ("warm restart to the first note.list answer", f"{f['warm'].p50:.2f} s", warm_goal, f["warm"].p50, " s"),
                    ("warm restart: the daemon's CPU at that answer", f"{f['warm_cpu'].p50:.2f} s", None, 0.0, ""),
                    ("warm restart to the first note.links by name (name maps whole)", f"{f['named'].p50:.2f} s", None, 0.0, ""),
                    ("daemon RSS after a warm restart", f"{f['rss_warm'].p50 / 1e6:.1f} MB", None, 0.0, ""),
                ]
                for name, shown, goal, value, unit in rows:
                    target = "-" if goal is None else f"<= {goal:g}{unit}"
                    print(f"| {notes:,} | {tree.name} | {name} | {shown} | {target} | {_verdict(value, goal)} |", flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
