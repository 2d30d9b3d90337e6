"""Large renames: a note linked from thousands of files, previewed, applied and undone.

One daemon on a copy of a generated vault; for each size asked for, the note whose backlinking
files come nearest to it (from the generator's manifest) is renamed with ``note.move``, and for
each ``--hubs`` size a note ``hub-N`` that the first N generated notes link to (one ``[[hub-N]]``
line appended to each, in the copy, before the vault is registered):

* preview: the first call (plans and validates every rewrite), its wall time and reply bytes;
* apply: the confirm call (plans again, checks the fingerprint, journals, writes every file);
* undo: ``op.undo`` of it (one operation, every file back);
* peak memory: the daemon's VmHWM over each call (the peak is reset before each with
  ``/proc/<pid>/clear_refs``), and its VmRSS after.

``python -m benchmarks.rename --notes 20000 --sizes 500,1000,2000`` prints a table and writes
``benchmarks/out/rename-latest.json``. The vault is generated under ``$VAULTD_BENCH_DIR``, never
in the repository.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.corpus import Corpus, bench_dir, ensure
from benchmarks.stats import rss_bytes
from benchmarks.timed_daemon import VAULT_ID, Daemon, Home, call

if TYPE_CHECKING:
    from vaultctl.client import Client

OUT = Path(__file__).resolve().parent / "out"


def backlinkers(corpus: Corpus) -> dict[str, int]:
    """Vault-relative note path -> how many other notes link to it (the manifest's truth)."""
    sources: dict[str, set[str]] = defaultdict(set)
    with open(corpus.root / "manifest.jsonl", encoding="utf-8") as f:
        for line in f:
            note = json.loads(line)
            for link in note.get("links", []):
                if link.get("resolved") and link["resolved"] != note["path"]:
                    sources[link["resolved"]].add(note["path"])
    return {path.removeprefix("notes/"): len(found) for path, found in sources.items()}


def _peak_reset(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def _peak(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM")


def _timed(daemon: Daemon, client: Client, method: str, params: dict[str, Any]) -> tuple[float, int, int, Any]:
    """(seconds, reply bytes, peak RSS during the call, decoded reply or error)"""
    _peak_reset(daemon.pid)
    t = time.perf_counter()
    raw = client.call_raw(method, params)
    seconds = time.perf_counter() - t
    return seconds, len(raw), _peak(daemon.pid), json.loads(raw)


def add_hubs(vault: Path, hubs: list[int]) -> dict[str, int]:
    """``hub-N.md`` for each N, linked from the first N notes of the vault (in path order)."""
    notes = sorted(vault.rglob("*.md"))
    for n in hubs:
        if n > len(notes):
            raise SystemExit(f"a hub of {n} needs at least {n} notes; the vault has {len(notes)}")
        (vault / f"hub-{n}.md").write_text(f"# Hub {n}\n\nLinked from {n} notes.\n")
        for note in notes[:n]:
            with open(note, "a", encoding="utf-8") as f:
                f.write(f"\n[[hub-{n}]]\n")
    return {f"hub-{n}.md": n for n in hubs}


def measure(corpus: Corpus, sizes: list[int], hubs: list[int], work: Path) -> list[dict[str, Any]]:
    counts = backlinkers(corpus)
    home = Home.create(work)
    corpus.copy_to(home.vault)
    hub_counts = add_hubs(home.vault, hubs)
    daemon = Daemon(home)
    rows: list[dict[str, Any]] = []
    try:
        client = daemon.client()
        call(client, "vault.add", {"id": VAULT_ID, "path": str(home.vault)})
        idle = rss_bytes(daemon.pid)
        used: set[str] = set()
        targets = []
        for size in sizes:
            target = min((p for p in counts if p not in used), key=lambda p: (abs(counts[p] - size), p))
            used.add(target)
            targets.append((size, target, counts[target]))
        targets += [(n, path, n) for path, n in hub_counts.items()]
        for size, target, linked in targets:
            params = {"target": target, "to": f"renamed/{Path(target).stem}-x"}
            row: dict[str, Any] = {"asked": size, "note": target, "backlinkers": linked, "rss_idle": idle}
            seconds, size_b, peak, preview = _timed(daemon, client, "note.move", params)
            row.update(preview_s=seconds, preview_bytes=size_b, preview_peak=peak)
            if "fingerprint" not in preview:
                row["refused"] = preview
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
                continue
            row["files"] = len(preview["changes"])
            seconds, size_b, peak, done = _timed(
                daemon, client, "note.move", {**params, "confirm": True, "fingerprint": preview["fingerprint"]}
            )
            row.update(apply_s=seconds, apply_peak=peak, applied=done.get("outcome") == "applied")
            if done.get("outcome") == "applied":
                seconds, _, peak, undone = _timed(daemon, client, "op.undo", {"op_id": done["op_id"]})
                row.update(undo_s=seconds, undo_peak=peak, undone=undone.get("applied", False))
            else:
                row["refused"] = done
            row["rss_after"] = rss_bytes(daemon.pid)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
        client.close()
    finally:
        daemon.stop()
        home.cleanup()
    return rows


def _mib(n: int) -> str:
    return f"{n / 2**20:.0f}"


def table(rows: list[dict[str, Any]]) -> str:
    head = "| backlinkers | files written | preview s | preview KiB | apply s | undo s | peak MiB (preview/apply/undo) | idle MiB |"
    lines = [head, "|" + "---|" * 8]
    for r in rows:
        if "apply_s" not in r:
            lines.append(f"| {r['backlinkers']} | refused: {r['refused'].get('error', r['refused'])} | {r['preview_s']:.2f} | | | | | |")
            continue
        lines.append(
            f"| {r['backlinkers']} | {r['files']} | {r['preview_s']:.2f} | {r['preview_bytes'] / 1024:.0f} | {r['apply_s']:.2f} | "
            f"{r.get('undo_s', 0):.2f} | {_mib(r['preview_peak'])}/{_mib(r['apply_peak'])}/{_mib(r.get('undo_peak', 0))} | "
            f"{_mib(r['rss_idle'])} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--notes", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sizes", default="500,1000,2000", help="backlinking files to aim at among the generated notes, comma-separated")
    ap.add_argument("--hubs", default="", help="synthetic hubs: notes linked from this many files, comma-separated")
    args = ap.parse_args()
    corpus = ensure(args.notes, args.seed)
    work = bench_dir() / "work"
    work.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    hubs = [int(s) for s in args.hubs.split(",") if s]
    rows = measure(corpus, sizes, hubs, work)
    print(table(rows))
    OUT.mkdir(exist_ok=True)
    (OUT / "rename-latest.json").write_text(json.dumps({"notes": args.notes, "seed": args.seed, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
