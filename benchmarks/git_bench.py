"""What git costs a write, and what a sync costs, on a generated 10,000-note vault.

    .venv/bin/python -m benchmarks.git_bench                  # 10,000 notes, 60 writes of each kind
    .venv/bin/python -m benchmarks.git_bench --notes 1000 --writes 20

Side by side in one daemon: two copies of the same corpus, one a plain folder (``git: off``), one a
repository with every note committed (``git: checkpoint``). The same write goes to each in turn,
so both see the same machine load; the figure is the median of the per-write difference, and the
ratio of the medians. Then a bare remote and a second clone: a sync with nothing to do, a sync
that integrates 100 changed notes, and one that integrates 1,000 (a second clone registered in
the same daemon). Every figure is a median of several runs; nothing here is a timed assertion.

Vaults live under ``$VAULTD_BENCH_DIR`` (see :mod:`benchmarks.corpus`); the report goes to
``benchmarks/out/git-latest.md`` and ``.json`` (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks import corpus
from benchmarks.stats import Figure, machine_facts, pct
from benchmarks.timed_daemon import Daemon, Home

if TYPE_CHECKING:
    from vaultctl.client import Client

OUT = Path(__file__).resolve().parent / "out"
GIT_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=GIT_ENV).stdout.strip()


def _log(message: str) -> None:
    print(f"[git-bench] {message}", file=sys.stderr, flush=True)


def _repo(folder: Path) -> None:
    git(folder, "init", "-q", "-b", "main")
    git(folder, "config", "user.name", "Bench")
    git(folder, "config", "user.email", "bench@example.org")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "the corpus")


def _call(client: Client, method: str, params: dict[str, Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = client.call_raw(method, params)
    return time.perf_counter() - started, json.loads(result)


def _writes(client: Client, n: int) -> dict[str, Figure]:
    """Interleaved: each write goes to the plain vault, then the same write to the git vault (creates
    of new notes, then patches of those notes)."""
    figs: dict[str, Figure] = {}
    for kind in ("create", "patch"):
        plain, checkpoint, delta = (
            Figure("s", note=f"note.{kind}, git: off"),
            Figure("s", note=f"note.{kind}, git: checkpoint"),
            Figure("s"),
        )
        for i in range(n):
            for vault, fig in (("plain", plain), ("gitv", checkpoint)):
                if kind == "create":
                    params = {"vault": vault, "path": f"bench-git/w{i:04d}.md", "body": f"A benchmark note {i}, word gitbenchold{i}.\n"}
                    seconds, reply = _call(client, "note.create", params)
                else:
                    params = {"vault": vault, "target": f"bench-git/w{i:04d}.md", "old": f"gitbenchold{i}", "new": f"gitbenchnew{i}"}
                    seconds, reply = _call(client, "note.patch", params)
                if vault == "gitv" and not reply.get("commit"):
                    raise SystemExit(f"{kind} on the git vault made no commit: {reply.get('warnings')}")
                fig.samples.append(seconds)
            delta.samples.append(checkpoint.samples[-1] - plain.samples[-1])
        delta.note = (
            f"per-write difference, checkpoint minus off (p50 off {plain.p50 * 1e3:.1f} ms, checkpoint {checkpoint.p50 * 1e3:.1f} ms)"
        )
        figs[f"{kind}_off"], figs[f"{kind}_checkpoint"], figs[f"{kind}_added"] = plain, checkpoint, delta
        _log(f"{kind}: off {plain.p50 * 1e3:.1f} ms, checkpoint {checkpoint.p50 * 1e3:.1f} ms, added {delta.p50 * 1e3:.1f} ms (p50)")
    return figs


def _syncs(client: Client, work: Path, source: Path, runs: int) -> dict[str, Figure]:
    """A bare remote of the git vault, a second clone ('peer'); syncs of 0, 100 and 1,000 notes."""
    remote = work / "remote.git"
    git(work, "clone", "-q", "--bare", str(source), str(remote))
    git(source, "remote", "add", "origin", str(remote))
    git(source, "fetch", "-q", "origin")
    peer = work / "peer"
    git(work, "clone", "-q", str(remote), str(peer))
    git(peer, "config", "user.name", "Peer")
    git(peer, "config", "user.email", "peer@example.org")
    client.call_raw("vault.git", {"id": "gitv", "remote": str(remote)})
    client.call_raw("vault.add", {"id": "peer", "path": str(peer), "kind": "org", "git": "checkpoint", "remote": str(remote)})
    for vid in ("gitv", "peer"):
        _call(client, "vault.sync", {"vault": vid})
    figs: dict[str, Figure] = {"sync_noop": Figure("s", note="vault.sync with nothing to integrate or push (fetch and checks)")}
    for _ in range(runs):
        seconds, _reply = _call(client, "vault.sync", {"vault": "peer"})
        figs["sync_noop"].samples.append(seconds)
    notes = sorted(p.relative_to(source).as_posix() for p in source.glob("*.md") if p.name != "log.md")
    for size in (100, 1000):
        fig = Figure("s", note=f"vault.sync integrating {size} notes changed on the other clone (fetch, {size} writes, commit)")
        for r in range(runs):
            batch = notes[r * size % len(notes) :][:size]
            for rel in batch:
                with open(source / rel, "a", encoding="utf-8") as fh:
                    fh.write(f"\nsynced line {r}\n")
            _call(client, "vault.snapshot", {"vault": "gitv"})
            _call(client, "vault.sync", {"vault": "gitv"})
            seconds, reply = _call(client, "vault.sync", {"vault": "peer"})
            if reply["incoming"] != len(batch):
                raise SystemExit(f"the peer's sync did not integrate {len(batch)} notes: {reply}")
            fig.samples.append(seconds)
        figs[f"sync_{size}"] = fig
        _log(f"sync of {size} notes: p50 {fig.p50:.2f} s")
    figs["snapshot_scan"] = Figure("s", note="vault.snapshot with nothing to commit (what a quiet snapshot checks)")
    for _ in range(runs):
        seconds, _reply = _call(client, "vault.snapshot", {"vault": "gitv"})
        figs["snapshot_scan"].samples.append(seconds)
    return figs


def _cpu() -> float:
    """CPU seconds of this process and its finished children (microsecond resolution)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _checkpoint_cost(repo: Path, n: int, label: str = "") -> dict[str, Figure]:
    """The commit alone, in process (no daemon): wall time, and CPU time of vaultd and its git
    processes together. On a loaded machine the wall time waits for the cores; the CPU time is
    what a checkpoint costs an idle machine (git fsyncs nothing here, so little else is waited on)."""
    import anyio

    from protocol.methods.git_settings import GitMode
    from protocol.methods.vaults import VaultEntry
    from vaultd.git import checkpoint
    from vaultd.git.keeper import GitKeeper
    from vaultd.txn.plan import Change, Plan

    keeper = GitKeeper(repo, VaultEntry(id="cost", path=str(repo), git=GitMode.CHECKPOINT), anyio.Lock())
    keeper.prepare()
    where = f" ({label})" if label else ""
    wall, cpu = Figure("s", note=f"a checkpoint commit (note.patch of one note and the log), in process{where}: wall time"), Figure("s")
    cpu.note = f"the same{where}, CPU time of vaultd and its git processes (what it costs an idle machine)"
    target = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*.md") if ".git" not in p.parts and p.name != "log.md")[0]
    for i in range(n):
        before = (repo / target).read_bytes()
        after = before + f"\ncost {i}\n".encode()
        (repo / target).write_bytes(after)
        plan = Plan(op="note.patch", changes=[Change(path=target, before=before, after=after)], summary=f"patched {target}")
        record = checkpoint.record_for(plan, f"20990101T000000.{i:06d}-00000000", channel="cli", client="bench", session=None)
        t0, c0 = time.perf_counter(), _cpu()
        made, warnings = keeper._flush(record)
        c1 = _cpu()
        if made is None:
            raise SystemExit(f"the checkpoint was not made: {warnings}")
        wall.samples.append(time.perf_counter() - t0)
        cpu.samples.append(c1 - c0)
    _log(f"checkpoint in process{where}: wall p50 {wall.p50 * 1e3:.1f} ms, CPU p50 {cpu.p50 * 1e3:.1f} ms")
    suffix = "_" + label.split()[0] if label else ""
    return {f"checkpoint_wall{suffix}": wall, f"checkpoint_cpu{suffix}": cpu}


def _foldered(source: corpus.Corpus, dest: Path, folders: int = 100) -> Path:
    """The same notes spread over ``folders`` folders, committed: a vault organised in folders."""
    for i, path in enumerate(sorted(p for p in source.vault.rglob("*.md"))):
        target = dest / f"f{i % folders:03d}" / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            shutil.copyfile(path, target)
    _repo(dest)
    return dest


def measure(notes: int, writes: int, runs: int, work: Path) -> dict[str, Figure]:
    source = corpus.ensure(notes, 1)
    plain, gitv = work / "plain", work / "gitv"
    for dest in (plain, gitv):
        source.copy_to(dest)
    _log(f"committing {notes} notes")
    _repo(gitv)
    home = Home.create()
    daemon = Daemon(home)
    try:
        client = daemon.client()
        for vid, path, mode in (("plain", plain, "off"), ("gitv", gitv, "checkpoint")):
            client.call_raw("vault.add", {"id": vid, "path": str(path), "git": mode})
        figs = _writes(client, writes)
        figs.update(_syncs(client, work, gitv, runs))
        client.close()
    finally:
        daemon.stop()
        home.cleanup()
    figs.update(_checkpoint_cost(gitv, writes, "flat: 9,774 notes in the root folder"))
    figs.update(_checkpoint_cost(_foldered(source, work / "foldered"), writes, "foldered: the same notes in 100 folders"))
    return figs


def report(figs: dict[str, Figure], notes: int) -> str:
    rows = ["| figure | p50 | p95 | n | what |", "|---|---|---|---|---|"]
    for name, fig in figs.items():
        unit = 1e3 if fig.unit == "s" else 1.0
        p50 = statistics.median(fig.samples) * unit
        rows.append(f"| {name} | {p50:.1f} ms | {pct(fig.samples, 95) * unit:.1f} ms | {len(fig.samples)} | {fig.note} |")
    for kind in ("create", "patch"):
        off, on = figs[f"{kind}_off"], figs[f"{kind}_checkpoint"]
        rows.append(f"| {kind} ratio | {on.p50 / off.p50:.2f}x | | | checkpoint p50 over off p50 |")
    return f"# git costs on a {notes}-note vault\n\n" + "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.git_bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--notes", type=int, default=10_000)
    p.add_argument("--writes", type=int, default=60, help="writes of each kind to each vault")
    p.add_argument("--runs", type=int, default=5, help="runs of each sync figure")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    work = corpus.bench_dir() / f"git-{args.notes}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        figs = measure(args.notes, args.writes, args.runs, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = report(figs, args.notes)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "git-latest.md").write_text(text + "\n" + json.dumps(machine_facts()) + "\n", encoding="utf-8")
    (args.out / "git-latest.json").write_text(json.dumps({k: v.to_json() for k, v in figs.items()}, indent=2), encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
