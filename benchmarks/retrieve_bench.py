"""Retrieval quality and latency: recall@10 of known answer passages, BM25 alone and reranked, and
``note.retrieve`` latency p50/p95, on a generated vault.

Questions are built from the generator's manifest and notes, deterministically: for a sampled
note, one of its H2 sections is the answer; the question holds three of that section's rarer
words (not in the generator's common vocabulary, five letters or more, outside links), one word
of the note's title, question words, and one word from another note as noise. A question is
answered at k when one of the first k passages lies under that section's heading in that note.

    .venv/bin/python -m benchmarks.retrieve_bench --notes 10000 --questions 200

The corpus lives under ``$VAULTD_BENCH_DIR`` (never in the repository); results print as JSON
and as the table ``docs/performance.md`` quotes.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.corpus import Corpus, bench_dir, ensure
from benchmarks.stats import machine_facts, pct
from benchmarks.timed_daemon import VAULT_ID, Daemon, Home, call

K = 10
_WORD = re.compile(r"[a-z]{5,}")
_LINK = re.compile(r"\[\[[^\]]*\]\]|`[^`]*`|#\S+|\^\S+")
FILLER = ["what", "does", "the", "note", "say", "about"]


@dataclass(frozen=True)
class Question:
    text: str
    path: str  #: vault-relative, the answer's note
    heading: str  #: the answer's H2


def _sections(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    current: str | None = None
    in_code = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        if line.startswith("## "):
            current = line[3:].strip()
            out[current] = ""
        elif line.startswith("# "):
            current = None
        elif current is not None:
            out[current] += " " + line
    return out


def questions(corpus: Corpus, count: int, seed: int) -> list[Question]:
    gen = _generator_module()
    common = set(gen.COMMON)
    rng = random.Random(seed)
    manifest = [json.loads(line) for line in (corpus.root / "manifest.jsonl").read_text(encoding="utf-8").splitlines()]
    rng.shuffle(manifest)
    noise_pool = [w for m in manifest[:200] for w in _WORD.findall(m["title"].lower())]
    out: list[Question] = []
    for entry in manifest:
        if len(out) >= count or entry.get("cjk"):
            continue
        rel = entry["path"].removeprefix("notes/")
        text = (corpus.vault / rel).read_text(encoding="utf-8")
        sections = {h: body for h, body in _sections(text).items() if list(_sections(text)).count(h) == 1}
        candidates = [h for h, body in sections.items() if len(_rare(body, common)) >= 6]
        if not candidates:
            continue
        heading = rng.choice(sorted(candidates))
        rare = _rare(sections[heading], common)
        picked = rng.sample(rare, 3)
        title_words = _WORD.findall(entry["title"].lower()) or [entry["title"].split()[0].lower()]
        words = [*rng.sample(FILLER, 3), *picked, rng.choice(title_words), rng.choice(noise_pool)]
        rng.shuffle(words)
        out.append(Question(" ".join(words), rel, heading))
    return out


def _rare(body: str, common: set[str]) -> list[str]:
    return sorted({w for w in _WORD.findall(_LINK.sub(" ", body.lower())) if w not in common})


def _generator_module() -> Any:
    import importlib.util

    from benchmarks.corpus import GENERATOR

    spec = importlib.util.spec_from_file_location("gen_vault", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _hit_rank(passages: list[dict[str, Any]], q: Question) -> int | None:
    for rank, p in enumerate(passages, start=1):
        if p["path"] == q.path and q.heading in p["heading"]:
            return rank
    return None


def run(notes: int, seed: int, count: int, repeats: int) -> dict[str, Any]:
    corpus = ensure(notes, seed)
    asked = questions(corpus, count, seed)
    home = Home.create(bench_dir())
    vault = corpus.copy_to(home.vault)
    daemon = Daemon(home)
    try:
        client = daemon.client()
        started = time.perf_counter()
        call(client, "vault.add", {"id": VAULT_ID, "path": str(vault)})
        indexed = time.perf_counter() - started
        started = time.perf_counter()
        call(client, "note.retrieve", {"query": "warm up the chunk index", "rerank": False})
        chunk_build = time.perf_counter() - started
        call(client, "note.retrieve", {"query": "load the rerank model once", "rerank": True})
        results: dict[str, Any] = {}
        for mode, rerank in (("bm25", False), ("reranked", True)):
            times: list[float] = []
            first: list[float] = []
            ranks: list[int | None] = []
            status = ""
            for attempt in range(repeats):
                for q in asked:
                    t0 = time.perf_counter()
                    answer = call(client, "note.retrieve", {"query": q.text, "limit": K, "rerank": rerank})
                    times.append((time.perf_counter() - t0) * 1000)
                    if attempt == 0:
                        first.append(times[-1])
                        ranks.append(_hit_rank(answer["passages"], q))
                        status = answer["rerank"]
            found = [r for r in ranks if r is not None]
            results[mode] = {
                "rerank_status": status,
                "recall_at_1": len([r for r in found if r <= 1]) / len(asked),
                "recall_at_10": len(found) / len(asked),
                "mrr_at_10": sum(1 / r for r in found) / len(asked),
                "p50_ms": round(statistics.median(times), 2),
                "p95_ms": round(pct(times, 95), 2),
                "first_pass_p50_ms": round(statistics.median(first), 2),
                "first_pass_p95_ms": round(pct(first, 95), 2),
                "calls": len(times),
            }
        chunk_files = list((home.home / "indexes").glob("*-chunks-v1.sqlite"))
        return {
            "notes": notes,
            "seed": seed,
            "questions": len(asked),
            "repeats": repeats,
            "index_seconds": round(indexed, 2),
            "chunk_build_seconds": round(chunk_build, 2),
            "chunk_index_bytes": sum(f.stat().st_size for f in chunk_files),
            "modes": results,
            "sample_questions": [q.text for q in asked[:3]],
            "machine": machine_facts(),
        }
    finally:
        daemon.stop()
        shutil.rmtree(home.root, ignore_errors=True)


def table(result: dict[str, Any]) -> str:
    lines = [
        f"{result['notes']} notes, {result['questions']} questions × {result['repeats']} runs; index {result['index_seconds']} s, "
        f"chunk index built in {result['chunk_build_seconds']} s ({result['chunk_index_bytes'] / 1e6:.1f} MB)",
        "",
        "| mode | recall@1 | recall@10 | MRR@10 | p50 ms | p95 ms | first pass p50 / p95 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for mode, m in result["modes"].items():
        lines.append(
            f"| {mode} ({m['rerank_status']}) | {m['recall_at_1']:.3f} | {m['recall_at_10']:.3f} | {m['mrr_at_10']:.3f} "
            f"| {m['p50_ms']} | {m['p95_ms']} | {m['first_pass_p50_ms']} / {m['first_pass_p95_ms']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--notes", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs over the questions (recall is from the first)")
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args(argv)
    result = run(args.notes, args.seed, args.questions, args.repeats)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=2))
    print(table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
