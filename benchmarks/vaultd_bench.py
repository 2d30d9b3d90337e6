"""vaultd's figures on one corpus: cold build, warm restart, reads, MCP, CLI, writes, freshness,
memory, idle CPU and cache size. Every daemon runs in a fresh temporary home on a copy of the vault.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from mcp.client.stdio import StdioServerParameters

from benchmarks import mcp_drive
from benchmarks.stats import (
    Figure,
    Stopwatch,
    cpu_seconds,
    dir_bytes,
    missing,
    pct,
    rss_bytes,
    tree_rss_bytes,
)
from benchmarks.timed_daemon import VAULT_ID, VAULTCTL, Daemon, Home, call
from protocol.table import METHODS
from tests.support.wait import wait_until
from vaultctl.client import CallError, Client

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from benchmarks.corpus import Corpus

NOT_BUILT = "not built yet"


@dataclass(frozen=True)
class Plan:
    cold_runs: int = 5
    restart_runs: int = 5
    queries: int = 200
    reads: int = 200
    cli_runs: int = 20
    writes: int = 200
    history_lines: int = 10_000  #: earlier events put in the operation log before the creates timed against it
    history_writes: int = 50
    fresh_writes: int = 50
    checkout_files: int = 3000
    checkout_runs: int = 3
    idle_seconds: float = 30.0
    mcp: bool = True


def _log(msg: str) -> None:
    print(f"  vaultd: {msg}", file=sys.stderr, flush=True)


def measure(corpus: Corpus, plan: Plan, work: Path) -> dict[str, Figure]:
    figs: dict[str, Figure] = {}
    cold, ready, rss, socket_up = Figure("s"), Figure("s"), Figure("B"), Figure("s")
    cold_cpu = Figure("s", note="the daemon's utime+stime during vault.add (steadier than wall on a busy machine)")
    cold.note = "vault.add call until it returns (index ready), fresh home, files in page cache"
    ready.note = "the daemon's own 'index ready' seconds from its JSON log"
    rss.note = "VmRSS after vault.add returned"
    socket_up.note = "spawn to first accepted session, empty home"
    kept: tuple[Home, Daemon] | None = None
    for run in range(plan.cold_runs):
        home = Home.create(work)
        corpus.copy_to(home.vault)
        daemon = Daemon(home)
        client = daemon.client()
        socket_up.samples.append(time.perf_counter() - daemon.started)
        cpu = cpu_seconds(daemon.pid)
        with Stopwatch() as sw:
            call(client, "vault.add", {"id": VAULT_ID, "path": str(home.vault)})
        cold_cpu.samples.append(cpu_seconds(daemon.pid) - cpu)
        client.close()
        cold.samples.append(sw.seconds)
        ready.samples.extend(home.ready_seconds()[-1:])
        rss.samples.append(rss_bytes(daemon.pid))
        _log(f"cold build {run + 1}/{plan.cold_runs}: {sw.seconds:.2f} s")
        if run == plan.cold_runs - 1:
            kept = (home, daemon)
        else:
            daemon.stop()
            home.cleanup()
    figs.update(cold_build=cold, cold_build_cpu=cold_cpu, cold_build_log=ready, rss_indexed=rss, daemon_start=socket_up)
    assert kept is not None
    home, daemon = kept
    running = [daemon]  # the restarts replace it; whatever runs last is stopped below
    try:
        figs["index_cache"] = Figure("B", [float(dir_bytes(home.home / "indexes"))], "files under $VAULTD_HOME/indexes")
        figs.update(_reads(daemon, corpus, plan))
        if plan.mcp:
            figs["mcp_search"], figs["rss_mcp"] = _mcp(home, corpus, plan)
            figs["mcp_raw_search"] = _mcp_raw(home, corpus, plan)
        figs["cli_search"] = _cli(home, corpus, plan)
        figs.update(_writes(daemon, plan))
        figs["create_long_log"] = _create_after_history(daemon, home, plan)
        figs.update(_freshness(daemon, home, plan))
        figs.update(_checkout(daemon, home, plan))
        figs["rss_after_run"] = Figure("B", [float(rss_bytes(daemon.pid))], "VmRSS after the reads and writes")
        figs["idle_cpu"] = _idle(daemon, plan.idle_seconds)
        figs.update(_restarts(home, running, plan))
    finally:
        running[-1].stop()
        home.cleanup()
    return figs


def _reads(daemon: Daemon, corpus: Corpus, plan: Plan) -> dict[str, Figure]:
    client = daemon.client()
    queries = corpus.queries()[: plan.queries]
    for q in queries[:20]:  # warm the connection pool and the page cache
        call(client, "note.search", {"query": q, "vault": VAULT_ID})
    search, hits = Figure("s", note="note.search over the generated queries, limit 20, one socket session"), 0
    for q in queries:
        with Stopwatch() as sw:
            result = call(client, "note.search", {"query": q, "vault": VAULT_ID})
        search.samples.append(sw.seconds)
        hits += len(result["hits"])
    search.note += f"; {hits / len(queries):.1f} hits/query"
    paths = corpus.paths()
    step = max(1, len(paths) // plan.reads)
    read = Figure("s", note="note.read by path, default max_bytes")
    for path in paths[::step][: plan.reads]:
        with Stopwatch() as sw:
            call(client, "note.read", {"target": path, "vault": VAULT_ID})
        read.samples.append(sw.seconds)
    client.close()
    _log(f"search p50 {search.p50 * 1e3:.2f} ms, read p50 {read.p50 * 1e3:.2f} ms")
    return {"search": search, "read": read}


def _mcp(home: Home, corpus: Corpus, plan: Plan) -> tuple[Figure, Figure]:
    server = StdioServerParameters(command=VAULTCTL[0], args=[*VAULTCTL[1:], "mcp"], env=home.env)
    calls = [("note_search", {"query": q, "vault": VAULT_ID}) for q in corpus.queries()[: plan.queries]]
    shim = Figure("B", note="VmRSS of the `vaultctl mcp` process after the searches (the daemon's is apart)")

    async def after(_session: object, _times: object) -> None:
        pid = mcp_drive.child_pid(b"vaultctl", b"mcp")
        if pid is not None:
            shim.samples.append(float(tree_rss_bytes(pid)))

    try:
        times = mcp_drive.drive(server, calls, home.root / "mcp.err", warmup=5, after=after)
    except Exception as exc:  # noqa: BLE001 - a product under test failed: report it, run on
        cause: BaseException = exc.exceptions[0] if isinstance(exc, BaseExceptionGroup) else exc
        if "unknown tool" in str(cause):
            return missing("s", NOT_BUILT), shim
        return missing("s", f"failed: {type(cause).__name__}: {str(cause)[:200]}"), shim
    if "note_search" not in times.tools:
        return missing("s", NOT_BUILT), shim
    fig = Figure(
        "s", times.latencies, f"tools/call note_search via `vaultctl mcp` (mcp SDK client, stdio); handshake {times.handshake:.2f} s"
    )
    if times.errors:
        fig.note += f"; {len(times.errors)} tool errors, first: {times.errors[0][:120]}"
    _log(f"mcp search p50 {fig.p50 * 1e3:.2f} ms")
    return fig, shim


def _mcp_raw(home: Home, corpus: Corpus, plan: Plan) -> Figure:
    """The shim alone: the same tools/call lines written on its stdin with no SDK client."""
    calls = [("note_search", {"query": q, "vault": VAULT_ID}) for q in corpus.queries()[: plan.queries]]
    try:
        times = mcp_drive.drive_raw([*VAULTCTL, "mcp"], home.env, calls, warmup=5)
    except (OSError, RuntimeError, ValueError, KeyError) as exc:
        return missing("s", f"failed: {type(exc).__name__}: {str(exc)[:200]}")
    if "note_search" not in times.tools:
        return missing("s", NOT_BUILT)
    fig = Figure("s", times.latencies, "tools/call note_search as bare JSON-RPC lines on `vaultctl mcp`'s stdin (no client library)")
    if times.errors:
        fig.note += f"; {len(times.errors)} tool errors, first: {times.errors[0][:120]}"
    _log(f"mcp search without a client library p50 {fig.p50 * 1e3:.2f} ms")
    return fig


NO_MATCH = 1  #: vaultctl search's exit status when nothing matches (it says "no notes match")


def _cli(home: Home, corpus: Corpus, plan: Plan) -> Figure:
    fig = Figure("s", note="whole `vaultctl search QUERY --vault bench` command, process start to exit")
    for q in (corpus.queries() * 2)[: plan.cli_runs]:
        with Stopwatch() as sw:
            out = subprocess.run([*VAULTCTL, "search", q, "--vault", VAULT_ID], env=home.env, capture_output=True, check=False)
        nothing = out.returncode == NO_MATCH and b"no notes match" in out.stderr  # as grep says it: still a whole command
        if out.returncode != 0 and not nothing:
            return missing("s", f"failed ({out.returncode}): {out.stderr.decode(errors='replace')[:200]}")
        fig.samples.append(sw.seconds)
    _log(f"cli search median {fig.p50 * 1e3:.0f} ms")
    return fig


def _timed(client: Client, method: str, calls: Iterable[dict[str, Any]], fig: Figure) -> Figure:
    """Make the calls one after the other on one session, each call's time a sample of ``fig``."""
    for params in calls:
        with Stopwatch() as sw:
            call(client, method, params)
        fig.samples.append(sw.seconds)
    if len(fig.samples) >= 40:  # a latency that grows with the number of writes shows here
        first, last = (pct(fig.samples[sl], 50) * 1e3 for sl in (slice(0, 20), slice(-20, None)))
        fig.note += f"; p50 of the first 20: {first:.1f} ms, of the last 20: {last:.1f} ms"
    return fig


def _refused(exc: CallError) -> Figure:
    return missing("s", f"refused: {exc.data.code}: {exc.data.message[:200]}")


def _writes(daemon: Daemon, plan: Plan) -> dict[str, Figure]:
    figs = {"create": missing("s", NOT_BUILT), "patch": missing("s", NOT_BUILT), "writes_per_s": missing("/s", NOT_BUILT)}
    if "note.create" not in METHODS:
        return figs
    creates = (
        {
            "vault": VAULT_ID,
            "path": f"bench-writes/w{i:05d}.md",
            "title": f"Bench write {i}",
            "body": f"A benchmark note, number {i}, with the word benchpatchold{i}.\n",
        }
        for i in range(plan.writes)
    )
    patches = (
        {"vault": VAULT_ID, "target": f"bench-writes/w{i:05d}.md", "old": f"benchpatchold{i}", "new": f"benchpatchnew{i}"}
        for i in range(plan.writes)
    )
    client = daemon.client()
    try:
        started = time.perf_counter()
        create = _timed(client, "note.create", creates, Figure("s", note="note.create of a new note (path, title, body), sequential"))
        figs["create"] = create
        figs["writes_per_s"] = Figure(
            "/s", [plan.writes / (time.perf_counter() - started)], "sequential note.create calls per second, one session"
        )
        _log(f"create p50 {create.p50 * 1e3:.2f} ms")
    except CallError as exc:
        client.close()
        figs["create"] = _refused(exc)
        return figs
    if "note.patch" in METHODS:
        try:
            figs["patch"] = _timed(client, "note.patch", patches, Figure("s", note="note.patch replacing one unique word, sequential"))
        except CallError as exc:
            figs["patch"] = _refused(exc)
    client.close()
    return figs


HISTORY_LINE = "2026-01-01 09:00  EXTRACT  -  vaultd:note.create → history/h{i:06d}.md  —  create history/h{i:06d}.md ({i:08d})\n"


def _create_after_history(daemon: Daemon, home: Home, plan: Plan) -> Figure:
    """note.create once the operation log holds a long history, as in a vault of many past writes:
    every write appends to the log, so its cost must not grow with the lines already there."""
    log = home.vault / "log.md"
    with log.open("a", encoding="utf-8") as fh:  # the lines of earlier operations, in the log's own format
        fh.writelines(HISTORY_LINE.format(i=i) for i in range(plan.history_lines))
    kib = log.stat().st_size / 1024
    fig = Figure("s", note=f"note.create with {plan.history_lines:,} earlier lines in log.md ({kib:.0f} KiB), sequential")
    creates = (
        {"vault": VAULT_ID, "path": f"bench-history/h{i:05d}.md", "title": f"After history {i}", "body": f"Note {i}.\n"}
        for i in range(plan.history_writes)
    )
    client = daemon.client()
    try:
        _timed(client, "note.create", creates, fig)
    except CallError as exc:
        return _refused(exc)
    finally:
        client.close()
    _log(f"create after {plan.history_lines} log lines p50 {fig.p50 * 1e3:.2f} ms")
    return fig


def _finds(client: Client, word: str) -> bool:
    """Whether note.search finds a note holding ``word`` now."""
    return bool(call(client, "note.search", {"query": word, "vault": VAULT_ID})["hits"])


def _freshness(daemon: Daemon, home: Home, plan: Plan) -> dict[str, Figure]:
    """An outside write (as an editor makes), then how long until search finds its unique word."""
    client = daemon.client()
    folder = home.vault / "bench-fresh"
    folder.mkdir(exist_ok=True)
    polled = Figure("s", note="external file write until note.search (polled every 2 ms) finds its word")
    barrier = Figure("s", note="external file write, then one note.search with fresh: true that finds it")
    misses = 0

    for i in range(plan.fresh_writes):
        word = f"freshpoll{i}q"
        started = time.perf_counter()
        (folder / f"p{i}.md").write_text(f"# Fresh {i}\n\nThe word {word} is new.\n", encoding="utf-8")
        try:
            wait_until(partial(_finds, client, word), 10, f"a hit for {word}", poll=0.002)
        except TimeoutError:
            misses += 1
        polled.samples.append(time.perf_counter() - started)
        time.sleep(0.05)  # let the watcher settle so each write starts from quiet
    for i in range(plan.fresh_writes):
        word = f"freshsync{i}q"
        started = time.perf_counter()
        (folder / f"s{i}.md").write_text(f"# Fresh {i}\n\nThe word {word} is new.\n", encoding="utf-8")
        found = call(client, "note.search", {"query": word, "vault": VAULT_ID, "fresh": True})["hits"]
        barrier.samples.append(time.perf_counter() - started)
        misses += 0 if found else 1
        time.sleep(0.05)  # the same quiet before the next write
    client.close()
    if misses:
        polled.note += f"; {misses} writes not found in time"
    _log(f"freshness p50 {polled.p50 * 1e3:.1f} ms, fresh:true p50 {barrier.p50 * 1e3:.1f} ms")
    return {"freshness": polled, "freshness_barrier": barrier}


def _checkout(daemon: Daemon, home: Home, plan: Plan) -> dict[str, Figure]:
    """A checkout's worth of new notes written at once, until every one of them is searchable.

    ``plan.checkout_files`` notes land in one new folder as fast as Python writes them (what a
    ``git checkout`` of a branch does to a worktree), each with a word of its own. The clock runs
    from the first write until the last note written and a sample spread over the rest are all
    found (polled every 5 ms); then, untimed, every one of the words is searched, and any not found
    is named in the figure's note, so the figure can only be as good as the whole batch. The
    writes alone are timed too: where making a file is slow (0.7 ms each on some virtual disks),
    they are most of the total, and what vaultd adds is the time after the last one.
    """
    client = daemon.client()
    total, written, after = (Figure("s") for _ in range(3))
    unfound = 0
    for run in range(plan.checkout_runs):
        folder = home.vault / f"bench-checkout-{run}"
        words = [f"chk{run}x{i}q" for i in range(plan.checkout_files)]
        probe = [words[-1], *words[:: max(1, len(words) // 20)]]

        def all_found(probe: list[str] = probe) -> bool:
            return all(_finds(client, w) for w in probe)

        started = time.perf_counter()
        folder.mkdir()
        for i, word in enumerate(words):
            (folder / f"c{i:05d}.md").write_text(f"# Checked out {i}\n\nThe word {word} arrives with a checkout.\n", encoding="utf-8")
        last_write = time.perf_counter()
        try:
            wait_until(all_found, 120, "every checked-out note found", poll=0.005)
        except TimeoutError:
            pass  # counted below, word by word
        found = time.perf_counter()
        total.samples.append(found - started)
        written.samples.append(last_write - started)
        after.samples.append(found - last_write)
        unfound += sum(not _finds(client, w) for w in words)
        _log(
            f"checkout {run + 1}/{plan.checkout_runs}: {plan.checkout_files} notes searchable after {total.samples[-1]:.2f} s "
            f"({written.samples[-1]:.2f} s writing them)"
        )
        shutil.rmtree(folder)  # checked out again the other way: the vault is as it was for what follows

        def gone(last: str = words[-1]) -> bool:
            return not _finds(client, last)

        wait_until(gone, 120, "the checked-out notes removed from the index", poll=0.05)
        time.sleep(1.0)  # quiet before the next run, as between two checkouts
    client.close()
    found_note = f"; {unfound} notes NOT found after the wait" if unfound else "; every note then found"
    total.note = f"{plan.checkout_files} new notes written at once in a new folder, until the last and a sample of 20 are found{found_note}"
    written.note = "the same writes alone, from the first to the last (no waiting)"
    after.note = f"from the last write until the last and a sample of 20 are found{found_note}"
    return {"checkout": total, "checkout_writes": written, "checkout_after": after}


def _idle(daemon: Daemon, seconds: float) -> Figure:
    time.sleep(1.0)  # let the last watcher batch and log writes finish
    before, t = cpu_seconds(daemon.pid), time.perf_counter()
    time.sleep(seconds)  # the idle period measured
    used, elapsed = cpu_seconds(daemon.pid) - before, time.perf_counter() - t
    return Figure("%", [100 * used / elapsed], f"utime+stime over {seconds:.0f} s with no file activity or calls")


READY_LOG_WAIT_S = 300.0  #: how long a restart's "index ready" line is waited for


def _restarts(home: Home, running: list[Daemon], plan: Plan) -> dict[str, Figure]:
    warm = Figure("s", note="SIGTERM, then spawn to the first note.list answer (once the note table is whole)")
    logged = Figure("s", note="the daemon's own 'index ready' seconds after a restart (its name maps whole)")
    rss = Figure("B", note="VmRSS after a warm restart")
    for _ in range(plan.restart_runs):
        running[-1].stop()
        seen = len(home.ready_seconds())
        daemon = Daemon(home)
        running.append(daemon)
        client = daemon.client()
        call(client, "note.list", {"vault": VAULT_ID, "limit": 1})
        warm.samples.append(time.perf_counter() - daemon.started)
        client.close()
        # A listing answers before the name maps are whole, so before this restart's "index
        # ready" line: wait for it rather than read the one before.
        give_up = time.monotonic() + READY_LOG_WAIT_S
        while len(home.ready_seconds()) <= seen and time.monotonic() < give_up:
            time.sleep(0.05)
        logged.samples.extend(home.ready_seconds()[seen:][-1:])
        rss.samples.append(rss_bytes(daemon.pid))
    _log(f"warm restart median {warm.p50:.2f} s")
    return {"warm_restart": warm, "warm_restart_log": logged, "rss_restarted": rss}
