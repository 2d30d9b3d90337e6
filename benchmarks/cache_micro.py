"""Micro-benchmark of the index cache (vaultd/vault/cache/) against a bare FTS5 insert.

    python3 /work/shared/bench/gen_vault.py /tmp/cachebench10k --notes 10000 --seed 1
    .venv/bin/python benchmarks/cache_micro.py /tmp/cachebench10k [--rounds 3] [--work /tmp/cachebench-work]

Measures, on the generated corpus (records and search documents are built crudely here; the
parse is not timed):

* cold build: ``IndexCache.open`` on a new file + one ``apply`` of every note, against a bare
  FTS5 table (same pragmas, same three columns) filled with one ``executemany``;
* ``load_encoded`` on a reopened cache; ``open`` with and without ``quick_check``;
* search latency p50/p95 over ``queries.txt``; cache file size.

Writes only under ``--work`` (default: a temp folder). Never commit its output files.
"""

from __future__ import annotations

import argparse
import gc
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Self

import apsw
import yaml  # type: ignore[import-untyped]  # PyYAML ships no type information

from vaultd.vault.cache import IndexCache, SearchDoc
from vaultd.vault.cache.sqlite_file import _FTS_HASH_BYTES
from vaultd.vault.model import Heading, Link, LinkKind, NoteRecord, Tag

_LINK = re.compile(r"\[\[([^\]|#]*)(#[^\]|]*)?(\|[^\]]*)?\]\]")
_TAG = re.compile(r"(?<![\w/])#([\w/-]+)")
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_corpus(root: Path) -> list[tuple[NoteRecord, SearchDoc]]:
    """Crude records: frontmatter by YAML, headings, links and tags by regex."""
    out = []
    for file in sorted((root / "notes").rglob("*.md")):
        text = file.read_text(encoding="utf-8")
        fm: dict[str, object] | None = None
        offset = 0
        if text.startswith("---\n"):
            end = text.find("\n---\n", 4)
            if end != -1:
                try:
                    loaded = yaml.load(text[4:end], Loader=_Loader)
                    fm = loaded if isinstance(loaded, dict) else None
                except yaml.YAMLError:
                    fm = None
                offset = end + 5
        fm = {str(k): (v if isinstance(v, (str, int, float, list)) else str(v)) for k, v in (fm or {}).items()}
        lines = text[offset:].splitlines()
        headings = [
            Heading(level=len(line) - len(line.lstrip("#")), text=line.lstrip("#").strip(), line=n)
            for n, line in enumerate(lines, 1)
            if line.startswith("#") and line.lstrip("#").startswith(" ")
        ]
        links = [
            Link(
                kind=LinkKind.WIKI,
                target=m.group(1),
                anchor=m.group(2),
                label=m.group(3),
                line=0,
                start=m.start(),
                end=m.end(),
            )
            for m in _LINK.finditer(text, offset)
        ]
        listed_tags = fm.get("tags")
        tags = [Tag(name=str(t), line=0) for t in listed_tags] if isinstance(listed_tags, list) else []
        tags += [Tag(name=m.group(1), line=0) for m in _TAG.finditer(text, offset)]
        aliases = fm.get("aliases")
        st = file.stat()
        record = NoteRecord(
            path=str(file.relative_to(root / "notes")),
            size=st.st_size,
            mtime_ns=st.st_mtime_ns,
            ino=st.st_ino,
            sha256="0" * 64,
            title=str(fm.get("title") or file.stem),
            frontmatter=fm or None,
            aliases=[str(a) for a in aliases] if isinstance(aliases, list) else [],
            tags=tags,
            headings=headings,
            blocks=[],
            links=links,
            issues=[],
            words=len(text.split()),
            body_offset=offset,
        )
        out.append((record, SearchDoc.from_note(record, text)))
    return out


def bare_fts(path: Path, corpus: list[tuple[NoteRecord, SearchDoc]], hashsize: int | None = None) -> tuple[float, float]:
    """One executemany into a lone FTS5 table; ``hashsize`` as the cache sets it, or SQLite's default."""
    con = apsw.Connection(str(path))
    con.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
    con.execute("CREATE VIRTUAL TABLE fts USING fts5(title, meta, body, tokenize='unicode61 remove_diacritics 2')")
    if hashsize:
        con.execute(f"INSERT INTO fts(fts, rank) VALUES ('hashsize', {hashsize})")
    rows = [(d.title, "\n".join([*d.aliases, d.description]), d.body) for _, d in corpus]
    with Clock() as clock, con:
        con.executemany("INSERT INTO fts(title, meta, body) VALUES (?, ?, ?)", rows)
    con.close()
    return clock.wall, clock.cpu


def cache_build(path: Path, corpus: list[tuple[NoteRecord, SearchDoc]]) -> tuple[float, float]:
    with Clock() as clock:
        cache = IndexCache.open(path)
        cache.apply(corpus)
    stats = cache.stats()
    print(f"  after apply: file {stats.bytes / 1e6:.1f} MB, wal {stats.wal_bytes / 1e6:.1f} MB", file=sys.stderr)
    cache.close()
    return clock.wall, clock.cpu


class Clock:
    """Wall and CPU seconds of a block; CPU time is the steadier figure on a shared machine."""

    def __enter__(self) -> Self:
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self._wall
        self.cpu = time.process_time() - self._cpu


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="cachebench-"))
    work.mkdir(parents=True, exist_ok=True)

    t = time.perf_counter()
    corpus = load_corpus(args.corpus)
    text_mb = sum(len(d.title) + len(d.description) + len(d.body) for _, d in corpus) / 1e6
    print(f"corpus: {len(corpus)} notes, {text_mb:.1f} M chars of text (loaded in {time.perf_counter() - t:.1f}s)")

    bare_times, tuned_times, cache_times = [], [], []
    for n in range(args.rounds):  # interleaved, so drift in machine load hits all three alike
        for f in work.glob("*.sqlite*"):
            f.unlink()
        bare_times.append(bare_fts(work / f"bare{n}.sqlite", corpus))
        tuned_times.append(bare_fts(work / f"tuned{n}.sqlite", corpus, hashsize=_FTS_HASH_BYTES))
        cache_times.append(cache_build(work / f"cache{n}.sqlite", corpus))
    # Medians, and minimums (the least disturbed round) for a machine shared with other work.
    for kind, k in (("wall", 0), ("cpu", 1)):
        for stat_name, pick in (("median", statistics.median), ("min", min)):
            bare, tuned, built = (pick(t[k] for t in x) for x in (bare_times, tuned_times, cache_times))
            print(
                f"[{kind} {stat_name}] bare FTS5 {bare:.2f}s, bare FTS5 with hashsize {_FTS_HASH_BYTES >> 20} MiB"
                f" {tuned:.2f}s, cache open+apply {built:.2f}s: ratio {built / bare:.2f}x the default bare insert,"
                f" {built / tuned:.2f}x the same-hashsize one"
            )
    for name, times in (("bare", bare_times), ("tuned", tuned_times), ("cache", cache_times)):
        print(f"  rounds {name}: " + ", ".join(f"{w:.2f}/{c:.2f}" for w, c in times) + " (wall/cpu s)")
    del corpus  # load_encoded below runs on a small heap, as at daemon start

    path = work / f"cache{args.rounds - 1}.sqlite"
    bare_path = work / f"bare{args.rounds - 1}.sqlite"
    print(f"bare FTS5 file: {bare_path.stat().st_size / 1e6:.1f} MB")
    gc.collect()
    for verify in (False, True):
        t = time.perf_counter()
        cache = IndexCache.open(path, verify=verify)
        print(f"open (verify={verify}): {(time.perf_counter() - t) * 1000:.0f} ms, outcome {cache.outcome}")
        cache.close()
    cache = IndexCache.open(path, verify=False)
    loads = []
    for _ in range(5):
        with Clock() as clock:
            records = cache.load_encoded()
        loads.append(clock)
    print(
        f"load_encoded: {len(records)} records, median wall {statistics.median(c.wall for c in loads) * 1000:.0f} ms"
        f" (min {min(c.wall for c in loads) * 1000:.0f}), cpu {statistics.median(c.cpu for c in loads) * 1000:.0f} ms"
    )
    del records
    stats = cache.stats()
    print(f"cache file: {stats.bytes / 1e6:.1f} MB (+ wal {stats.wal_bytes / 1e6:.1f} MB), {stats.rows} rows, {stats.cjk_rows} with CJK")

    queries = [q for q in (args.corpus / "queries.txt").read_text(encoding="utf-8").splitlines() if q.strip()]
    cache.search(queries[0])  # warm the pool and page cache
    lat, cpu, hits = [], [], 0
    for _ in range(3):
        for q in queries:
            with Clock() as clock:
                hits += len(cache.search(q, limit=20))
            lat.append(clock.wall)
            cpu.append(clock.cpu)
    print(
        f"search over {len(queries)} queries x3: wall p50 {pct(lat, 50) * 1000:.2f} ms, "
        f"p95 {pct(lat, 95) * 1000:.2f} ms, max {max(lat) * 1000:.1f} ms; cpu p50 {pct(cpu, 50) * 1000:.2f} ms, "
        f"p95 {pct(cpu, 95) * 1000:.2f} ms; {hits / 3 / len(queries):.1f} hits/query"
    )
    cache.close()
    print(f"work folder: {work}", file=sys.stderr)


if __name__ == "__main__":
    main()
