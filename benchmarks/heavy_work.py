"""Whether vault-wide work starves the other clients: search and writes while it runs.

    .venv/bin/python -m benchmarks.heavy_work                          # 20,000 notes, 60 s a scenario
    .venv/bin/python -m benchmarks.heavy_work --notes 50000 --seconds 90
    .venv/bin/python -m benchmarks.heavy_work --only idle lint         # some scenarios only

One daemon in a fresh home holds a generated vault (``bench``, ``benchmarks.corpus``) and a small
one (``side``). Two probes run on connections of their own throughout, each waiting 20 ms between
requests: a **search** of ``bench`` (the generated queries in turn), and a **write** to ``side``
(``note.create`` of a small note). Their round trips are recorded per scenario:

- **idle**: nothing else runs.
- **communities**: a third client asks ``graph.communities`` of ``bench`` back to back, each time
  with another resolution so every request computes Leiden anew (an agent asking after each
  write does the same).
- **pipelined rebuilds**: four more connections each send 60 ``vault.rebuild`` of ``bench`` at
  once (within every per-connection bound before vault-wide work was bounded) and read their
  replies; the daemon's log counts the rebuilds that ran. After the measurement the scenario
  waits for every reply (every accepted rebuild done), so none runs into the next scenario.
- **lint**: a third client asks ``vault.lint`` of ``bench`` back to back, and a third probe
  writes to ``bench`` itself (``note.create``), the vault being linted; idle has that probe too,
  for comparison. (Each write changes the vault, so each lint resolves every link anew.)
- **lintfix**: the same, with ``lint.fix`` previews (every one looks for fixes in the whole vault)
  in place of the lints.
- **tidy**: the same, with ``vault.tidy`` previews (every one runs the migration rules over every
  note) in place of the lints.

The goal: while either runs, search p95 under 50 ms and a write to the other vault under 100 ms;
while a lint runs, a write to the vault being linted waits for none of it.
The JSON report goes to ``benchmarks/out/heavy_work.json``; the table to stdout.
"""

from __future__ import annotations

import argparse
import json
import platform
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks import corpus
from benchmarks.stats import Figure
from benchmarks.timed_daemon import Daemon, Home, call
from tests.support.harness import RawClient

if TYPE_CHECKING:
    from collections.abc import Callable

    from vaultctl.client import Client

OUT = Path(__file__).resolve().parent / "out"
BIG, SIDE = "bench", "side"
PAUSE_S = 0.02  #: between a probe's requests
REBUILD_CONNECTIONS, REBUILDS_EACH = 4, 60
DRAIN_S = 900.0  #: how long the rebuilds scenario waits, after its measurement, for its last replies
SCENARIOS = ("idle", "communities", "rebuilds", "lint", "lintfix", "tidy")
PROBES = ("search", "write", "write_same")


class Probe:
    """One client on its own thread, timing one request after another until stopped."""

    def __init__(self, daemon: Daemon, name: str, request: Callable[[Client, int], None]) -> None:
        self.figure = Figure("s", note=name)
        self.errors = 0
        self._client = daemon.client()
        self._request = request
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            started = time.perf_counter()
            try:
                self._request(self._client, n)
            except Exception:  # noqa: BLE001 - a benchmark counts failures, it does not stop at one
                self.errors += 1
            else:
                self.figure.samples.append(time.perf_counter() - started)
            n += 1
            time.sleep(PAUSE_S)

    def stop(self) -> Figure:
        self._stop.set()
        self._thread.join()
        self._client.close()
        return self.figure


def _probes(daemon: Daemon, queries: list[str], scenario: str, same_vault: bool) -> dict[str, Probe]:
    def search(client: Client, n: int) -> None:
        call(client, "note.search", {"vault": BIG, "query": queries[n % len(queries)], "limit": 10})

    def write(client: Client, n: int) -> None:
        call(client, "note.create", {"vault": SIDE, "path": f"{scenario}/w{n:05d}.md", "body": f"written {n}\n"})

    def write_same(client: Client, n: int) -> None:
        call(client, "note.create", {"vault": BIG, "path": f"probe-{scenario}/w{n:05d}.md", "body": f"written {n}\n"})

    probes = {"search": Probe(daemon, f"search of {BIG}", search), "write": Probe(daemon, f"note.create in {SIDE}", write)}
    if same_vault:
        probes["write_same"] = Probe(daemon, f"note.create in {BIG}", write_same)
    return probes


def _measure(
    daemon: Daemon,
    queries: list[str],
    scenario: str,
    seconds: float,
    load: Callable[[threading.Event], dict[str, Any]],
    *,
    same_vault: bool = False,
) -> dict[str, Any]:
    probes = _probes(daemon, queries, scenario, same_vault)
    stop = threading.Event()
    facts: dict[str, Any] = {}
    loader = threading.Thread(target=lambda: facts.update(load(stop)), daemon=True)
    loader.start()
    time.sleep(seconds)
    figures = {name: probe.stop() for name, probe in probes.items()}
    stop.set()
    loader.join(timeout=900)
    return {**figures, "errors": sum(probe.errors for probe in probes.values()), **facts}


def _idle(stop: threading.Event) -> dict[str, Any]:
    stop.wait()
    return {}


def _communities(daemon: Daemon) -> Callable[[threading.Event], dict[str, Any]]:
    def load(stop: threading.Event) -> dict[str, Any]:
        client = daemon.client(timeout=600)
        runs: list[float] = []
        k = 0
        while not stop.is_set():
            started = time.perf_counter()
            call(client, "graph.communities", {"vault": BIG, "resolution": round(1.0 + k * 0.001, 3), "limit": 5})
            runs.append(time.perf_counter() - started)
            k += 1
        client.close()
        return {"communities_runs": len(runs), "communities_s": [round(r, 2) for r in runs]}

    return load


def _lints(daemon: Daemon, method: str = "vault.lint", key: str = "lint") -> Callable[[threading.Event], dict[str, Any]]:
    def load(stop: threading.Event) -> dict[str, Any]:
        client = daemon.client(timeout=600)
        runs: list[float] = []
        refused = 0
        while not stop.is_set():
            started = time.perf_counter()
            try:
                call(client, method, {"vault": BIG})
            except Exception:  # noqa: BLE001 - a lint past its time bound answers LIMIT (a fix CONFLICT); counted
                refused += 1
            runs.append(time.perf_counter() - started)
        client.close()
        return {f"{key}_runs": len(runs), f"{key}_refused": refused, f"{key}_s": [round(r, 2) for r in runs]}

    return load


def _rebuilds(home: Home) -> Callable[[threading.Event], dict[str, Any]]:
    def load(stop: threading.Event) -> dict[str, Any]:
        clients = []
        for _ in range(REBUILD_CONNECTIONS):
            client = RawClient(home.socket, timeout=1.0)
            client.hello()
            frames = b"".join(
                json.dumps({"jsonrpc": "2.0", "id": i, "method": "vault.rebuild", "params": {"vault": BIG}}).encode() + b"\n"
                for i in range(1, REBUILDS_EACH + 1)
            )
            client.send_bytes(frames)
            clients.append(client)
        replies = [0] * len(clients)
        answered, refused = 0, 0

        def read(i: int, client: RawClient) -> None:
            nonlocal answered, refused
            try:
                reply = client.recv_message()
            except (TimeoutError, OSError):
                return
            replies[i] += 1
            if "error" in reply:
                refused += 1
            else:
                answered += 1

        while not stop.is_set():
            for i, client in enumerate(clients):
                read(i, client)
        # The rebuilds accepted run on after the measurement: wait for every reply, so none of
        # them runs into the next scenario's figures (closing the connections would not stop them).
        measured = answered + refused
        drain_started = time.perf_counter()
        while min(replies) < REBUILDS_EACH and time.perf_counter() - drain_started < DRAIN_S:
            for i, client in enumerate(clients):
                if replies[i] < REBUILDS_EACH:
                    read(i, client)
        for client in clients:
            client.close()
        return {
            "rebuilds_answered": answered,
            "rebuilds_refused": refused,
            "replies_after_the_measurement": answered + refused - measured,
            "drain_s": round(time.perf_counter() - drain_started, 1),
            "drained": min(replies) == REBUILDS_EACH,
        }

    return load


def _rebuilds_run(home: Home) -> int:
    if not home.log_file.exists():
        return 0
    return sum(1 for line in home.log_file.read_text(errors="replace").splitlines() if '"index rebuilt"' in line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.heavy_work", description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=60.0, help="how long each scenario is measured")
    parser.add_argument("--out", type=Path, default=OUT / "heavy_work.json")
    parser.add_argument("--only", nargs="+", choices=SCENARIOS, default=list(SCENARIOS), help="the scenarios to run")
    args = parser.parse_args(argv)

    source = corpus.for_size(args.notes, args.seed)
    queries = source.queries()
    home = Home.create()
    results: dict[str, dict[str, Any]] = {}
    try:
        vault = source.copy_to(home.vault)
        side = home.root / "side"
        side.mkdir()
        (side / "Home.md").write_text("# Home\n")
        daemon = Daemon(home)
        try:
            setup = daemon.client(timeout=600)
            call(setup, "vault.add", {"id": BIG, "path": str(vault)})
            call(setup, "vault.add", {"id": SIDE, "path": str(side)})
            call(setup, "note.search", {"vault": BIG, "query": queries[0]})  # the index is ready
            setup.close()
            if "idle" in args.only:
                same = bool({"lint", "lintfix", "tidy"} & set(args.only))
                results["idle"] = _measure(daemon, queries, "idle", args.seconds / 2, _idle, same_vault=same)
            if "communities" in args.only:
                results["communities"] = _measure(daemon, queries, "communities", args.seconds, _communities(daemon))
            if "rebuilds" in args.only:
                before = _rebuilds_run(home)
                results["pipelined rebuilds"] = _measure(daemon, queries, "rebuilds", args.seconds, _rebuilds(home))
                results["pipelined rebuilds"]["rebuilds_run"] = _rebuilds_run(home) - before
            if "lint" in args.only:
                results["lint"] = _measure(daemon, queries, "lint", args.seconds, _lints(daemon), same_vault=True)
            if "lintfix" in args.only:
                fixes = _lints(daemon, "lint.fix", "lintfix")
                results["lintfix"] = _measure(daemon, queries, "lintfix", args.seconds, fixes, same_vault=True)
            if "tidy" in args.only:
                tidies = _lints(daemon, "vault.tidy", "tidy")
                results["tidy"] = _measure(daemon, queries, "tidy", args.seconds, tidies, same_vault=True)
        finally:
            daemon.stop()
    finally:
        home.cleanup()

    print(f"vault-wide work, {args.notes:,} notes, {args.seconds:g} s a scenario ({platform.machine()}, {platform.python_version()})")
    print(f"{'scenario':<20}{'probe':<26}{'p50':>10}{'p95':>10}{'max':>10}{'n':>7}")
    for name, r in results.items():
        for probe in PROBES:
            f = r.get(probe)
            if isinstance(f, Figure) and f.samples:
                print(
                    f"{name:<20}{f.note:<26}{f.p50 * 1000:>8.1f}ms{f.p95 * 1000:>8.1f}ms{max(f.samples) * 1000:>8.0f}ms{len(f.samples):>7}"
                )
    for name, r in results.items():
        extra = {k: v for k, v in r.items() if k not in PROBES}
        if extra:
            print(f"{name}: {extra}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "notes": args.notes,
        "seconds": args.seconds,
        "scenarios": {name: {k: (v.to_json() if isinstance(v, Figure) else v) for k, v in r.items()} for name, r in results.items()},
    }
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
