"""What the index of a generated vault holds in memory: resident size after a cold build, after
the heap's free pages are handed back (as the daemon does), cold and warm (a restart on the cache
the cold build left).

    .venv/bin/python -m benchmarks.index_memory [--notes 10000 30000] [--tree DIR ...] [--traced]

Each build runs in a fresh interpreter, as the daemon's start-up builds (``IndexCache.open`` +
``VaultIndex.build``); "imports alone" is that interpreter before the build. The daemon's own
figure (``benchmarks.run``) adds its server and the rest of its imports. ``--tree`` names other
source trees of vaultd (a checkout of an older commit, say: ``git worktree add /tmp/old HEAD~3``)
measured side by side with this one, under the same interpreter and the same generated vault.
``--traced`` adds the Python heap that tracemalloc sees after the cold build, by the line that
allocated it (slow: tracing doubles the build).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import corpus

REPO = Path(__file__).resolve().parents[1]

_PROBE = r"""
import gc, json, sys, tracemalloc
from pathlib import Path
from vaultd.memory import give_back
from vaultd.vault.cache import IndexCache
from vaultd.vault.index import VaultIndex

vault, work, traced = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "1"

def status():
    out = {}
    for line in open("/proc/self/status"):
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) * 1024
    return out

facts = {"start": status()["VmRSS"]}
if traced:
    tracemalloc.start(1)
cache = IndexCache.open(work / "index.sqlite")
index = VaultIndex(vault, cache)
parsed, facts["reused"] = index.build()
facts["parsed"] = parsed if isinstance(parsed, int) else len(parsed.notes)  # older trees answered the parsed notes
gc.collect()
facts["built"], facts["peak"] = status()["VmRSS"], status()["VmHWM"]
if traced:
    top = tracemalloc.take_snapshot().statistics("lineno")
    facts["traced"] = sum(s.size for s in top)
    facts["traced_top"] = [[str(s.traceback), s.size, s.count] for s in top[:8]]
    tracemalloc.stop()
give_back()  # what the daemon does after a build
facts["trimmed"] = status()["VmRSS"]
facts["notes"] = len(index.notes)
print(json.dumps(facts))
"""


def measure(tree: Path, vault: Path, work: str, traced: bool) -> dict[str, Any]:
    """One build in a fresh interpreter: cold when ``work`` holds no cache yet, else warm."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(vault), work, "1" if traced else "0"],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    facts: dict[str, Any] = json.loads(out.stdout.splitlines()[-1])
    return facts


def _mb(value: object) -> str:
    return f"{value / 1e6:.1f} MB" if isinstance(value, int) else "-"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.index_memory")
    parser.add_argument("--notes", type=int, nargs="+", default=[10000])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tree", type=Path, nargs="*", default=[], help="other vaultd source trees to measure beside this one")
    parser.add_argument("--traced", action="store_true")
    args = parser.parse_args()
    trees = [REPO, *(t.resolve() for t in args.tree)]
    print("| notes | tree | build | imports alone | after the build (peak) | after handing back free pages | traced heap |")
    print("|---|---|---|---|---|---|---|")
    for notes in args.notes:
        c = corpus.ensure(notes, args.seed)
        with tempfile.TemporaryDirectory(prefix="idxvault", dir=corpus.bench_dir()) as folder:
            vault = c.copy_to(Path(folder) / "vault")
            for tree in trees:
                with tempfile.TemporaryDirectory(prefix="idxmem", dir=corpus.bench_dir()) as work:
                    for kind in ("cold", "warm"):
                        f = measure(tree, vault, work, args.traced and kind == "cold")
                        built = f"{_mb(f['built'])} ({_mb(f['peak'])})"
                        row = [f"{notes:,}", tree.name, kind, _mb(f["start"]), built, _mb(f["trimmed"]), _mb(f.get("traced"))]
                        print("| " + " | ".join(row) + " |", flush=True)
                        for where, size, count in f.get("traced_top", []):
                            print(f"| | {where} | | {size / 1e6:.1f} MB | {count:,} blocks | | |")


if __name__ == "__main__":
    main()
