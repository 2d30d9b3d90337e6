"""What one event costs the subscriptions' path filters, at the documented bounds, in process.

    .venv/bin/python -m benchmarks.filter_micro            # per glob (the old way) and compiled at the bound
    .venv/bin/python -m benchmarks.filter_micro --unbounded   # also 3,200 distinct compiled filters (compiling takes minutes)

200 connections x 16 subscriptions x 64 globs is 3,200 subscriptions; with ``MAX_FILTER_GLOBS``
(4,096) at most 64 of them hold distinct filters of 64 globs, the rest share.
"""

from __future__ import annotations

import argparse
import time

from protocol.methods.subscriptions import MAX_FILTER_GLOBS
from vaultd.policy.glob_match import GlobSet
from vaultd.policy.paths import matching_glob

SUBSCRIPTIONS, GLOBS = 3200, 64
PATH = "projects/p17/3/deep/er/note.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.filter_micro", description=__doc__.splitlines()[0])
    parser.add_argument("--unbounded", action="store_true")
    args = parser.parse_args(argv)
    subs = [[f"projects/p{k}/{j}/**/*.md" for j in range(GLOBS)] for k in range(SUBSCRIPTIONS)]

    started = time.perf_counter()
    per_glob = sum(matching_glob(PATH, globs) is not None for globs in subs)
    print(f"per glob, {SUBSCRIPTIONS:,} subscriptions x {GLOBS} globs: {(time.perf_counter() - started) * 1000:,.1f} ms ({per_glob} match)")

    bounded = [GlobSet(globs) for globs in subs[: MAX_FILTER_GLOBS // GLOBS]]
    started = time.perf_counter()
    hits = sum(s.matches(PATH) for s in bounded)
    print(f"compiled, {len(bounded)} distinct filters x {GLOBS} globs: {(time.perf_counter() - started) * 1000:,.2f} ms ({hits} match)")

    if args.unbounded:
        every = [GlobSet(globs) for globs in subs]
        started = time.perf_counter()
        hits = sum(s.matches(PATH) for s in every)
        print(f"compiled, {len(every):,} distinct filters (no bound): {(time.perf_counter() - started) * 1000:,.1f} ms ({hits} match)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
