"""What the index of a generated vault holds in memory: resident size after a cold build, after
the heap's free pages are handed back (as the daemon does), cold and warm (a restart on the cache
the cold build left).

    .venv/bin/python -m benchmarks.index_memory [--notes 10000 30000] [--tree DIR ...] [--traced] [--breakdown]

Each build runs in a fresh interpreter, as the daemon's start-up builds (``IndexCache.open`` +
``VaultIndex.build``); "imports alone" is that interpreter before the build. The daemon's own
figure (``benchmarks.run``) adds its server and the rest of its imports. ``--tree`` names other
source trees of vaultd (a checkout of an older commit, say: ``git worktree add /tmp/old HEAD~3``)
measured side by side with this one, under the same interpreter and the same generated vault.
``--traced`` adds the Python heap that tracemalloc sees after the cold build, by the line that
allocated it (slow: tracing doubles the build). ``--breakdown`` adds, after each build, what each
of the index's structures holds (the objects reachable from it, each counted once, in the order
of the table: a path string the note table holds is not counted again in the maps), SQLite's own
memory (the cache's page caches and schema) and the rest of the resident size.
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

vault, work, traced, breakdown = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "1", sys.argv[4] == "1"

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
if breakdown:
    import apsw, msgspec
    seen = set()
    def size(root):
        total, stack = 0, [root]
        while stack:
            obj = stack.pop()
            if id(obj) in seen or obj is None or isinstance(obj, (bool, type)):
                continue
            seen.add(id(obj))
            total += sys.getsizeof(obj)
            if isinstance(obj, dict):
                stack.extend(obj.keys()); stack.extend(obj.values())
            elif isinstance(obj, (list, tuple, set, frozenset)):
                stack.extend(obj)
            elif isinstance(obj, msgspec.Struct):
                stack.extend(getattr(obj, f) for f in obj.__struct_fields__)
        return total
    r = index.resolver
    parts = [
        ("note table: paths and encoded records", [index.notes._blobs]),
        ("note table: records kept decoded", [index.notes._recent]),
        ("link targets: names, paths, path keys", [r._by_name, r._by_path, r._path_key, r._attachment_stems]),
        ("backlinks (link name -> linking notes)", [index._linkers]),
        ("aliases", [index._aliases]),
        ("titles and the suggester", [index._titles, index.suggester._processed]),
        ("folders, attachments, skipped, recent changes", [index._folders, index.attachments, index.skipped, index._recent]),
    ]
    facts["breakdown"] = [[name, sum(size(o) for o in objs)] for name, objs in parts]
    facts["breakdown"].append(["SQLite (page caches, schema; every connection)", apsw.memory_used()])
facts["notes"] = len(index.notes)
# records kept in memory rather than read from the cache file (older trees kept every one)
facts["in_memory"] = index.notes.in_memory() if hasattr(index.notes, "in_memory") else len(index.notes)
print(json.dumps(facts))
"""


def measure(tree: Path, vault: Path, work: str, traced: bool, breakdown: bool = False) -> dict[str, Any]:
    """One build in a fresh interpreter: cold when ``work`` holds no cache yet, else warm."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(vault), work, "1" if traced else "0", "1" if breakdown else "0"],
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
    parser.add_argument("--breakdown", action="store_true", help="what each of the index's structures holds")
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
                        f = measure(tree, vault, work, args.traced and kind == "cold", args.breakdown)
                        built = f"{_mb(f['built'])} ({_mb(f['peak'])})"
                        row = [f"{notes:,}", tree.name, kind, _mb(f["start"]), built, _mb(f["trimmed"]), _mb(f.get("traced"))]
                        print("| " + " | ".join(row) + " |", flush=True)
                        if args.breakdown:
                            print(f"| | | | records kept in memory | {f['in_memory']:,} of {f['notes']:,} | | |")
                        for where, size, count in f.get("traced_top", []):
                            print(f"| | {where} | | {size / 1e6:.1f} MB | {count:,} blocks | | |")
                        if "breakdown" in f:
                            counted = sum(size for _name, size in f["breakdown"])
                            rest = f["trimmed"] - f["start"] - counted
                            for name, size in [*f["breakdown"], ["the rest: the heap's free fragments, the parse's leftovers", rest]]:
                                print(f"| | | | {name} | {size / 1e6:.1f} MB | | |")


if __name__ == "__main__":
    main()
