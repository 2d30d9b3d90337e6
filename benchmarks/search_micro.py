"""Search in-process, one warm index cache: the generated queries and the query language's forms.

``python -m benchmarks.search_micro --notes 10000`` builds the cache of a generated vault in a
temporary folder (its ``queries.txt`` are 1-3 plain words, some CJK), then reports the median
and p95 CPU time of a search (best of 3 per query) and, for each form of the syntax (phrase, OR,
NOT, a CJK term under OR, a filter alone, a negation alone, a typo and its "did you mean"), the
CPU time of one search and of the suggestion. CPU time, not wall: steadier on a shared machine.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from benchmarks.corpus import ensure
from vaultd.vault.cache import IndexCache
from vaultd.vault.index import VaultIndex

if TYPE_CHECKING:
    from collections.abc import Callable

FORMS = {
    "phrase": '"system memory"',
    "OR": "system OR memory",
    "NOT": "system -memory",
    "CJK under OR": "사업 OR system",
    "a filter alone": "tag:#engineering",
    "a negation alone": "-system",
    "a typo": "systme memroy",
}


def _cpu_ms(fn: Callable[..., object], *args: object) -> float:
    start = time.process_time()
    fn(*args)
    return (time.process_time() - start) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--notes", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    corpus = ensure(args.notes, args.seed)
    with tempfile.TemporaryDirectory(prefix="vaultd-search-") as work:
        cache = IndexCache.open(Path(work) / "c.sqlite")
        VaultIndex(corpus.vault, cache).build()
        queries = corpus.queries()
        per = [min(_cpu_ms(cache.search, q) for _ in range(3)) for q in queries]
        per.sort()
        print(f"{len(per)} generated queries: median {statistics.median(per):.2f} ms, p95 {per[int(len(per) * 0.95)]:.2f} ms of CPU")
        for name, query in FORMS.items():
            hits = len(cache.search(query))
            search_ms = min(_cpu_ms(cache.search, query) for _ in range(3))
            suggest_ms = _cpu_ms(cache.suggest, query)
            shown = f"{name:18} {query!r:24} {hits:3} hits  search {search_ms:7.2f} ms"
            print(f"{shown}  suggest {suggest_ms:6.2f} ms -> {cache.suggest(query)!r}")
        cache.close()


if __name__ == "__main__":
    main()
