"""Where a cold and a warm index build spend their time: cProfile of the daemon's build, in-process.

    .venv/bin/python -m benchmarks.profile_index [--notes 10000] [--top 25] [--warm]
    .venv/bin/python -m benchmarks.profile_index --timed [--notes 1000 10000] [--runs 3] [--tree DIR]
    .venv/bin/python -m benchmarks.profile_index --split [--notes 10000] [--runs 3] [--tree DIR]

Builds the index of a generated vault (a private copy, a new cache file) exactly as the daemon's
start-up does (``IndexCache.open`` + ``VaultIndex.build``), under cProfile, and prints the top
functions by own time and by cumulative time. ``--warm`` profiles a second build on the cache
the first one left (a restart). The daemon's watcher and socket are not involved; for the whole
daemon use py-spy (see docs/performance.md).

``--timed`` builds without the profiler, each build in a fresh interpreter, and prints its wall
time, the CPU seconds of the building process and those of its parsing processes (a build of
2,000 notes or more parses on a process per core, whose CPU the daemon's own figure leaves out).
``--tree`` names another source tree of vaultd (``git worktree add /tmp/old HEAD~3``) built
beside this one, alternating, on the same vault.

``--split`` builds the same way, timing the parts of the build's two threads in the daemon's
process by the CPU of the thread that runs each (``time.thread_time``, which the load of a shared
machine inflates less than wall time): the building thread waiting for the parsing processes'
frames (wall), decoding them and putting each record in the index; the cache's writer making its
rows ready in Python, inserting them, and committing. The parts are found by name and left out
where a tree has no such function.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import corpus
from vaultd.vault.cache import IndexCache
from vaultd.vault.index import VaultIndex

REPO = Path(__file__).resolve().parents[1]


def build(vault: Path, cache_file: Path) -> None:
    cache = IndexCache.open(cache_file)
    try:
        VaultIndex(vault, cache).build()
    finally:
        cache.close()


#: One cold build in a fresh interpreter, of the vaultd its PYTHONPATH names; prints ``wall cpu
#: children_cpu`` (seconds). Kept as text: the other tree may not have this module.
TIMED_BUILD = """
import resource, sys, time
from pathlib import Path
from vaultd.vault.cache import IndexCache
from vaultd.vault.index import VaultIndex
wall, cpu = time.perf_counter(), time.process_time()
cache = IndexCache.open(Path(sys.argv[2]))
VaultIndex(Path(sys.argv[1]), cache).build()
cache.close()
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
children = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{wall:.4f} {cpu:.4f} {children.ru_utime + children.ru_stime:.4f}")
"""


#: One cold build in a fresh interpreter with the parts of its threads timed; prints one
#: ``part=seconds`` per line. Kept as text, like TIMED_BUILD.
SPLIT_BUILD = """
import sys, time
from pathlib import Path
from vaultd.vault import index, parse_pool
from vaultd.vault.cache import IndexCache, records
from vaultd.vault.cache import index_cache
parts = {}
def timed(owner, name, part, wall=False):
    f = getattr(owner, name, None)
    if f is None:
        return
    clock = time.perf_counter if wall else time.thread_time
    def g(*a, **k):
        t = clock()
        try:
            return f(*a, **k)
        finally:
            parts[part] = parts.get(part, 0.0) + clock() - t
    setattr(owner, name, g)
timed(parse_pool, "read_frame", "build: waiting for a parsed chunk (wall)", wall=True)
timed(parse_pool, "decode_parsed", "build: decoding a chunk")
timed(index.VaultIndex, "_put_note", "build: a record into the index (encode, maps)")
timed(records, "_prepare", "writer: rows made ready (Python)")
timed(records, "_store", "writer: inserts")
timed(index_cache.IndexCache, "_commit_handing_over", "writer: commits")
wall, cpu = time.perf_counter(), time.process_time()
cache = IndexCache.open(Path(sys.argv[2]))
index.VaultIndex(Path(sys.argv[1]), cache).build()
cache.close()
parts["the build (wall)"] = time.perf_counter() - wall
parts["the build's process (CPU)"] = time.process_time() - cpu
for part, seconds in parts.items():
    print(f"{part}={seconds:.4f}")
"""


def _child_build(script: str, tree: Path, vault: Path, cache: Path) -> str:
    """What ``script`` printed, run in a new interpreter on ``tree``'s code with the vault and
    the cache file as its arguments (each build starts with nothing imported)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [sys.executable, "-c", script, str(vault), str(cache)], env=env, cwd=cache.parent, check=True, capture_output=True, text=True
    ).stdout


def split(notes: int, seed: int, runs: int, trees: list[Path]) -> None:
    c = corpus.for_size(notes, seed)
    figures: dict[Path, dict[str, list[float]]] = {tree: {} for tree in trees}
    work = Path(tempfile.mkdtemp(prefix="prof", dir=corpus.bench_dir()))
    loads: list[str] = []
    try:
        for run in range(runs):
            for tree in trees:
                vault = c.copy_to(work / f"vault{run}")
                loads.append(_load())
                out = _child_build(SPLIT_BUILD, tree, vault, work / f"cache{run}.sqlite").splitlines()
                for line in out:
                    part, _, seconds = line.rpartition("=")
                    figures[tree].setdefault(part, []).append(float(seconds))
                shutil.rmtree(vault)
                for leftover in work.glob(f"cache{run}.sqlite*"):
                    leftover.unlink()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    parts = list(dict.fromkeys(part for tree in trees for part in figures[tree]))
    print(f"{notes:,} notes, medians of {runs} builds; 1-minute load {', '.join(loads)}")
    print(f"| part, seconds of its thread's CPU unless marked | {' | '.join(tree.name for tree in trees)} |")
    print(f"|---|{'---|' * len(trees)}")
    for part in parts:
        shown = [f"{statistics.median(figures[tree][part]):.2f}" if part in figures[tree] else "-" for tree in trees]
        print(f"| {part} | {' | '.join(shown)} |", flush=True)


def _load() -> str:
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "?"


def timed(notes: list[int], seed: int, runs: int, trees: list[Path]) -> None:
    print("| notes | tree | wall (median) | CPU, the building process | CPU, its parsing processes | 1-minute load |")
    print("|---|---|---|---|---|---|")
    for size in notes:
        c = corpus.for_size(size, seed)
        figures: dict[Path, list[tuple[float, float, float]]] = {tree: [] for tree in trees}
        loads: dict[Path, list[str]] = {tree: [] for tree in trees}
        work = Path(tempfile.mkdtemp(prefix="prof", dir=corpus.bench_dir()))
        try:
            for run in range(runs):
                for tree in trees:
                    vault = c.copy_to(work / f"vault{run}")
                    loads[tree].append(_load())
                    out = _child_build(TIMED_BUILD, tree, vault, work / f"cache{run}.sqlite").split()
                    figures[tree].append((float(out[0]), float(out[1]), float(out[2])))
                    shutil.rmtree(vault)
                    for leftover in work.glob(f"cache{run}.sqlite*"):
                        leftover.unlink()
        finally:
            shutil.rmtree(work, ignore_errors=True)
        for tree in trees:
            wall, cpu, children = (statistics.median(f[i] for f in figures[tree]) for i in range(3))
            print(f"| {size:,} | {tree.name} | {wall:.2f} s | {cpu:.2f} s | {children:.2f} s | {', '.join(loads[tree])} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile_index")
    parser.add_argument("--notes", type=int, nargs="+", default=[10000])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--warm", action="store_true", help="profile a build that reuses the cache")
    parser.add_argument("--timed", action="store_true", help="time builds without the profiler, each in a fresh interpreter")
    parser.add_argument("--split", action="store_true", help="time the parts of the build's threads, each build in a fresh interpreter")
    parser.add_argument("--runs", type=int, default=3, help="builds per tree and size (--timed, --split)")
    parser.add_argument(
        "--tree", type=Path, nargs="*", default=[], help="other vaultd source trees to time beside this one (--timed, --split)"
    )
    args = parser.parse_args()
    if args.timed:
        timed(args.notes, args.seed, args.runs, [REPO, *(t.resolve() for t in args.tree)])
        return
    if args.split:
        for notes in args.notes:
            split(notes, args.seed, args.runs, [REPO, *(t.resolve() for t in args.tree)])
        return
    notes = args.notes[0]
    c = corpus.ensure(notes, args.seed)
    work = Path(tempfile.mkdtemp(prefix="prof", dir=corpus.bench_dir()))
    try:
        vault = c.copy_to(work / "vault")
        cache_file = work / "index.sqlite"
        if args.warm:
            build(vault, cache_file)
        wall, cpu = time.perf_counter(), time.process_time()
        profile = cProfile.Profile()
        profile.runcall(build, vault, cache_file)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(
            f"{'warm' if args.warm else 'cold'} build of {notes:,} notes under cProfile: "
            f"{wall:.2f} s wall, {cpu:.2f} s CPU (profiling inflates both)"
        )
        stats = pstats.Stats(profile)
        stats.sort_stats("tottime").print_stats(args.top)
        stats.sort_stats("cumulative").print_stats(args.top)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
