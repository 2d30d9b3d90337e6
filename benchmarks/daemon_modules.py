"""What a real daemon loads for a vault: the modules it imports and its resident size, serving no
vault, after a cold build and after a warm restart of the same home.

    .venv/bin/python -m benchmarks.daemon_modules [--notes 1000] [--tree DIR ...] [--top 25]

Each daemon is a new ``vaultd`` process (:mod:`benchmarks.timed_daemon`) run with
``PYTHONPROFILEIMPORTTIME``: the interpreter writes a line for every module it imports to the
daemon's standard error, with the microseconds the module's own body took (stretched alike for
every module by the profiling and by a loaded machine: read the shares, not the seconds). The
modules a vault added are those past the no-vault daemon's, grouped by package (``vaultd.``'s
by their first two names); the resident figures are ``/proc/PID/smaps_rollup`` a second after
the answer. ``--tree`` names other source trees of vaultd measured beside this one.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from benchmarks import corpus
from benchmarks.stats import cpu_seconds
from benchmarks.timed_daemon import VAULT_ID, Daemon, Home, answers_a_listing, call
from tests.support.wait import wait_until
from vaultctl.client import CallError

REPO = Path(__file__).resolve().parents[1]


def _rollup(pid: int) -> dict[str, float]:
    """``smaps_rollup``'s sizes in MB (Rss, Anonymous, ...)."""
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        key, _, value = line.partition(":")
        if value.strip().endswith("kB"):
            out[key] = int(value.split()[0]) / 1024
    return out


def _imports(log: str) -> list[tuple[str, int]]:
    """(module, its own import microseconds), in import order, from a ``PYTHONPROFILEIMPORTTIME`` log."""
    out = []
    for line in log.splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            own, _cumulative, name = line.removeprefix("import time:").split("|")
            out.append((name.strip(), int(own)))
    return out


def _group(name: str) -> str:
    parts = name.split(".")
    return ".".join(parts[:2]) if parts[0] == "vaultd" else parts[0]


@dataclass
class Facts:
    """One tree's daemon: (modules imported, ``smaps_rollup``) at each moment, and what the warm
    restart added."""

    moments: dict[str, tuple[int, dict[str, float]]] = field(default_factory=dict)
    warm_cpu: float = 0.0
    warm_added: list[tuple[str, int, int]] = field(default_factory=list)  #: (package, modules, own us)
    cold_only: list[str] = field(default_factory=list)


def _moment(facts: Facts, name: str, log: Path, pid: int) -> list[tuple[str, int]]:
    """The modules imported so far and the daemon's memory, once its last imports are logged
    (a second after the call that caused them), kept in ``facts`` under ``name``."""
    time.sleep(1.0)
    imported = _imports(log.read_text(errors="replace"))
    facts.moments[name] = (len(imported), _rollup(pid))
    return imported


def measure(tree: Path, c: corpus.Corpus, work: Path) -> Facts:
    """The daemon of ``tree``: serving no vault, after a cold build of ``c``, after a warm restart."""
    home = Home.create(work)
    home.env["PYTHONPATH"] = str(tree)
    home.env["PYTHONPROFILEIMPORTTIME"] = "1"
    c.copy_to(home.vault)
    log = home.root / "daemon.out"
    facts = Facts()
    try:
        daemon = Daemon(home)
        try:
            client = daemon.client()
            call(client, "daemon.status", {})
            empty = _moment(facts, "empty", log, daemon.pid)
            try:
                call(client, "vault.add", {"id": VAULT_ID, "path": str(home.vault)})
            except CallError:  # the call's own wait ran out: wait for the index
                wait_until(partial(answers_a_listing, client), 3600, "the index", poll=0.05)
            client.close()
            cold = _moment(facts, "cold", log, daemon.pid)
        finally:
            daemon.stop()
        log.unlink()
        daemon = Daemon(home)
        try:
            client = daemon.client()
            wait_until(partial(answers_a_listing, client), 3600, "the index", poll=0.02)
            facts.warm_cpu = cpu_seconds(daemon.pid)
            client.close()
            warm = _moment(facts, "warm", log, daemon.pid)
        finally:
            daemon.stop()
    finally:
        home.cleanup()
    known = {name for name, _ in empty}
    added: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    for name, own in warm:
        if name not in known:
            added[_group(name)] += own
            counts[_group(name)] += 1
    facts.warm_added = [(group, counts[group], us) for group, us in added.most_common()]
    facts.cold_only = sorted({name for name, _ in cold} - {name for name, _ in warm})
    return facts


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.daemon_modules")
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tree", type=Path, nargs="*", default=[], help="other vaultd source trees to measure beside this one")
    parser.add_argument("--top", type=int, default=25, help="packages listed by the import time they added")
    args = parser.parse_args()
    c = corpus.for_size(args.notes, args.seed)
    work = Path(tempfile.mkdtemp(prefix="modules", dir=corpus.bench_dir()))
    try:
        for tree in [REPO, *(t.resolve() for t in args.tree)]:
            f = measure(tree, c, work)
            print(f"\n{tree.name}, {args.notes:,} notes: warm restart CPU to the first answer {f.warm_cpu:.2f} s\n")
            print("| daemon | modules | RSS | anonymous |")
            print("|---|---|---|---|")
            for key, label in (("empty", "no vault"), ("cold", "after a cold build"), ("warm", "after a warm restart")):
                count, rollup = f.moments[key]
                print(f"| {label} | {count} | {rollup['Rss']:.1f} MB | {rollup['Anonymous']:.1f} MB |")
            print("\n| package (a warm restart's imports past the no-vault daemon's) | modules | own import time |")
            print("|---|---|---|")
            for group, count, us in f.warm_added[: args.top]:
                print(f"| {group} | {count} | {us / 1000:.1f} ms |")
            print(f"\nimported by the cold build and not by the warm restart: {', '.join(f.cold_only) or '-'}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
