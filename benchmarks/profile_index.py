"""Where a cold and a warm index build spend their time: cProfile of the daemon's build, in-process.

    .venv/bin/python -m benchmarks.profile_index [--notes 10000] [--top 25] [--warm]

Builds the index of a generated vault (a private copy, a new cache file) exactly as the daemon's
start-up does (``IndexCache.open`` + ``VaultIndex.build``), under cProfile, and prints the top
functions by own time and by cumulative time. ``--warm`` profiles a second build on the cache
the first one left (a restart). The daemon's watcher and socket are not involved; for the whole
daemon use py-spy (see docs/performance.md).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import shutil
import tempfile
import time
from pathlib import Path

from benchmarks import corpus
from vaultd.vault.cache import IndexCache
from vaultd.vault.index import VaultIndex


def build(vault: Path, cache_file: Path) -> None:
    cache = IndexCache.open(cache_file)
    try:
        VaultIndex(vault, cache).build()
    finally:
        cache.close()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile_index")
    parser.add_argument("--notes", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--warm", action="store_true", help="profile a build that reuses the cache")
    args = parser.parse_args()
    c = corpus.ensure(args.notes, args.seed)
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
            f"{'warm' if args.warm else 'cold'} build of {args.notes:,} notes under cProfile: "
            f"{wall:.2f} s wall, {cpu:.2f} s CPU (profiling inflates both)"
        )
        stats = pstats.Stats(profile)
        stats.sort_stats("tottime").print_stats(args.top)
        stats.sort_stats("cumulative").print_stats(args.top)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
