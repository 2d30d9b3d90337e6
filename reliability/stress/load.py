"""Sustained mixed load on a generated 10,000-note vault, with memory and idle CPU watched.

    .venv/bin/python -m reliability.stress.load --seconds 60 --clients 16 --notes 10000

Generates the vault with /work/shared/bench/gen_vault.py (outside the repo, ``--out``), registers
it, then runs ``--clients`` socket clients for ``--seconds``: reads (search with the generator's
queries, read, links, list) and writes (create, patch of the client's own notes, append with the
``expected_sha`` just read to a few hot notes, where CONFLICT is expected and counted apart).
Reports throughput, p50/p99 latency per kind, errors, the daemon's RSS every 10 s, and its CPU
over 10 idle seconds afterwards.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reliability.stress.harness import CLK_TCK, SocketClient, cpu_ticks, percentile, rss_kib, start_daemon

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.support.harness import Home

GEN = Path("/work/shared/bench/gen_vault.py")
MIX = [("search", 0.35), ("read", 0.20), ("links", 0.12), ("list", 0.08), ("create", 0.08), ("patch", 0.09), ("append", 0.08)]
READS_ONLY = [(kind, weight) for kind, weight in MIX if kind in ("search", "read", "links", "list")]
HOT = 8  #: notes every client appends to, so writers contend


class Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.outcomes: Counter[str] = Counter()
        self.unexpected: list[str] = []

    def add(self, kind: str, seconds: float, outcome: str, detail: Any = None) -> None:
        with self.lock:
            self.latency[kind].append(seconds)
            self.outcomes[f"{kind}.{outcome}"] += 1
            if outcome not in ("OK", "CONFLICT") and len(self.unexpected) < 20:
                self.unexpected.append(f"{kind}: {detail!r:.300}")


def client_loop(
    i: int,
    home: Home,
    paths: list[str],
    hot: list[str],
    queries: list[str],
    until: float,
    stats: Stats,
    seed: int,
    mix: list[tuple[str, float]] = MIX,
) -> None:
    rnd = random.Random(seed * 7919 + i)
    c = SocketClient(home)
    own: list[tuple[str, int]] = []  # (path, marker counter) of notes this client created
    kinds, weights = zip(*mix, strict=True)
    n = 0
    while time.monotonic() < until:
        kind = rnd.choices(kinds, weights)[0]
        if kind == "patch" and not own:
            kind = "create"
        n += 1
        if kind == "search":
            r = c.call("note.search", {"query": rnd.choice(queries), "limit": 20})
        elif kind == "read":
            r = c.call("note.read", {"target": rnd.choice(paths)})
        elif kind == "links":
            r = c.call("note.links", {"target": rnd.choice(paths)})
        elif kind == "list":
            folder = rnd.choice(paths).rsplit("/", 1)[0]
            r = c.call("note.list", {"folder": folder, "limit": 100})
        elif kind == "create":
            path = f"load/c{i}/n{n}.md"
            r = c.call(
                "note.create", {"path": path, "title": f"Load {i} {n}", "body": f"# Load {i} {n}\n\nmarker c{i}n{n} 0\n\nloadword{i}x{n}\n"}
            )
            if r.ok:
                own.append((path, 0))
        elif kind == "patch":
            k = rnd.randrange(len(own))
            path, counter = own[k]
            read = c.call("note.read", {"target": path})
            stats.add("patch.read", read.seconds, read.code, read.value)
            r = c.call(
                "note.patch",
                {
                    "target": path,
                    "old": f"marker c{i}n{path_n(path)} {counter}",
                    "new": f"marker c{i}n{path_n(path)} {counter + 1}",
                    "expected_sha": read.value["sha256"],
                }
                if read.ok
                else {"target": path},
            )
            if r.ok:
                own[k] = (path, counter + 1)
        else:  # append to a hot note with the sha just read: CONFLICT under contention is expected
            path = rnd.choice(hot)
            read = c.call("note.read", {"target": path})
            stats.add("append.read", read.seconds, read.code, read.value)
            r = c.call(
                "note.append",
                {"target": path, "section": "Load log", "markdown": f"- c{i} op {n}", "expected_sha": read.value["sha256"]}
                if read.ok
                else {"target": path},
            )
        stats.add(kind, r.seconds, r.code, r.value)
    c.close()


def counting_failures(stats: Stats, loop: Callable[[], None]) -> None:
    """Run one client's loop, a failure counted instead of ending the thread unseen."""
    try:
        loop()
    except Exception as exc:  # noqa: BLE001 - a driver must count every failure
        stats.add("client", 0.0, "DIED", exc)


def path_n(path: str) -> str:
    return path.rsplit("/n", 1)[1].removesuffix(".md")


def generate(out: Path, notes: int, seed: int) -> float:
    if out.exists():
        if not (out / "manifest.jsonl").exists():
            raise SystemExit(f"{out} exists and is not a generated vault; pick another --out")
        shutil.rmtree(out)
    t0 = time.monotonic()
    subprocess.run([sys.executable, str(GEN), str(out), "--notes", str(notes), "--seed", str(seed)], check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=Path("/tmp/vaultd-load"))
    ap.add_argument("--idle-seconds", type=float, default=10.0)
    ap.add_argument("--reads-only", action="store_true", help="no writes: tells index growth from a leak")
    args = ap.parse_args(argv)
    if args.seconds > 3600 or args.clients > 256:
        raise SystemExit("bounded: at most 3600 s and 256 clients")
    gen_s = generate(args.out, args.notes, args.seed)
    manifest = [json.loads(ln) for ln in (args.out / "manifest.jsonl").read_text().splitlines()]
    paths = [m["path"] for m in manifest]
    queries = [q for q in (args.out / "queries.txt").read_text().splitlines() if q.strip()]
    rnd = random.Random(args.seed)
    hot = rnd.sample(paths, HOT)
    home, daemon = start_daemon()
    pid = daemon.proc.pid
    report: dict[str, Any] = {
        "notes": args.notes,
        "clients": args.clients,
        "seconds": args.seconds,
        "mix": "reads-only" if args.reads_only else "mixed",
        "generate_seconds": round(gen_s, 1),
    }
    try:
        setup = SocketClient(home)
        t0 = time.monotonic()
        added = setup.call("vault.add", {"id": "load", "path": str(args.out)})
        assert added.ok, added.value
        report["vault_add_seconds"] = round(time.monotonic() - t0, 2)
        report["indexed_notes"] = setup.call("vault.stats", {"fresh": True}).value["notes"]
        time.sleep(2)  # a quiet start: the baseline sample follows the indexing, not part of it
        samples = [{"t": 0, "rss_kib": rss_kib(pid), "cpu_s": cpu_ticks(pid) / CLK_TCK}]
        stats = Stats()
        start = time.monotonic()
        until = start + args.seconds
        threads = [
            threading.Thread(
                target=counting_failures,
                args=(
                    stats,
                    partial(client_loop, i, home, paths, hot, queries, until, stats, args.seed, READS_ONLY if args.reads_only else MIX),
                ),
            )
            for i in range(args.clients)
        ]
        for t in threads:
            t.start()
        next_sample = start + 10
        while any(t.is_alive() for t in threads) and time.monotonic() < until + 120:
            time.sleep(0.2)  # the tick of the sampler while the clients run; they end at ``until``
            if time.monotonic() >= next_sample and time.monotonic() < until + 1:
                samples.append({"t": round(time.monotonic() - start), "rss_kib": rss_kib(pid), "cpu_s": round(cpu_ticks(pid) / CLK_TCK, 1)})
                next_sample += 10
        for t in threads:
            t.join(5)
        elapsed = time.monotonic() - start
        stuck = sum(t.is_alive() for t in threads)
        samples.append({"t": round(elapsed), "rss_kib": rss_kib(pid), "cpu_s": round(cpu_ticks(pid) / CLK_TCK, 1)})
        time.sleep(2)  # let the last replies and watcher batches finish before idle is measured
        c0, t_idle = cpu_ticks(pid), time.monotonic()
        time.sleep(args.idle_seconds)  # the idle period measured
        idle_cpu = (cpu_ticks(pid) - c0) / CLK_TCK
        idle_wall = time.monotonic() - t_idle
        rss_after = rss_kib(pid)
        final_stats = setup.call("vault.stats", {"fresh": True}).value
        setup.close()
        total = sum(len(v) for k, v in stats.latency.items() if "." not in k)
        conflicts = sum(v for k, v in stats.outcomes.items() if k.endswith(".CONFLICT"))
        unexpected = sum(v for k, v in stats.outcomes.items() if not k.endswith((".OK", ".CONFLICT")))
        report.update(
            {
                "elapsed_seconds": round(elapsed, 1),
                "stuck_clients": stuck,
                "requests": total,
                "throughput_rps": round(total / elapsed, 1),
                "per_kind": {
                    k: {"n": len(v), "p50_ms": round(percentile(v, 0.5) * 1000, 1), "p99_ms": round(percentile(v, 0.99) * 1000, 1)}
                    for k, v in sorted(stats.latency.items())
                },
                "outcomes": dict(sorted(stats.outcomes.items())),
                "conflicts_expected": conflicts,
                "unexpected_errors": unexpected,
                "unexpected_samples": stats.unexpected,
                "rss_samples": samples,
                "rss_after_idle_kib": rss_after,
                "idle_cpu_seconds": round(idle_cpu, 3),
                "idle_wall_seconds": round(idle_wall, 1),
                "idle_cpu_percent": round(100 * idle_cpu / idle_wall, 2),
                "notes_after": final_stats["notes"],
                "daemon_alive": daemon.proc.poll() is None,
            }
        )
    finally:
        daemon.stop()
        log = home.home / "logs" / "vaultd.log"
        report["daemon_log_error_lines"] = (
            sum(1 for ln in log.read_text(errors="replace").splitlines() if '"level": "error"' in ln) if log.exists() else -1
        )
        home.cleanup()
    print(json.dumps(report, indent=1))
    bad = (
        report.get("unexpected_errors", 1)
        + report.get("stuck_clients", 1)
        + (not report.get("daemon_alive"))
        + report["daemon_log_error_lines"]
    )
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
