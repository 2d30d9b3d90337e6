"""What subscriptions cost: how soon a change reaches a subscriber, and what ten subscribers cost a write.

    .venv/bin/python -m benchmarks.subscriptions                 # 1,000 notes, 200 samples each
    .venv/bin/python -m benchmarks.subscriptions --notes 10000 --samples 400

Three figures, on a generated vault in a fresh home (``benchmarks.corpus``, never in the repo):

- **editor write -> event**: a file appended to by another process (as an editor saves), until a
  subscriber holds its ``note.changed``. One write at a time, each to another note.
- **operation reply -> event**: after a client has ``note.append``'s reply, how much longer until
  another connection's subscriber holds its ``operation.applied`` (the event is recorded before
  the reply is sent, so this is the gap between two sends on two sockets).
- **write latency, 0 vs 10 subscribers**: ``note.append`` round trips by one client, in blocks
  that alternate between no subscriber and ten subscribers that each read every event on its
  own connection, so both sides see the same machine load over time. The ratio of medians is
  the cost of the subscribers to a writer.

The JSON report goes to ``benchmarks/out/subscriptions.json``; the table to stdout.
"""

from __future__ import annotations

import argparse
import json
import platform
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from benchmarks import corpus
from benchmarks.stats import Figure
from benchmarks.timed_daemon import VAULT_ID, Daemon, Home, call
from tests.support.events import Subscriber, has

if TYPE_CHECKING:
    from vaultctl.client import Client

OUT = Path(__file__).resolve().parent / "out"


class Reader:
    """A subscriber that reads every event on its own thread until stopped."""

    def __init__(self, home: Home) -> None:
        self.sub = Subscriber(home.socket)
        self.sub.subscribe(vaults=[VAULT_ID])
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sub.read_for(0.1)
            self.sub.events.clear()  # count nothing, keep nothing: a consumer that keeps up

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sub.close()


def editor_latency(home: Home, vault: Path, notes: list[str], samples: int) -> Figure:
    sub = Subscriber(home.socket)
    sub.subscribe(vaults=[VAULT_ID], kinds=["note.changed"])
    figure = Figure("s", note="append to a note file from this process, until its note.changed arrives")
    for n in range(samples):
        rel = notes[n % len(notes)]
        sub.events.clear()
        started = time.perf_counter()
        with open(vault / rel, "a", encoding="utf-8") as f:
            f.write(f"\nedit {n}\n")
        sub.read_until(has("note.changed", path=rel), 10, f"note.changed of {rel}")
        figure.samples.append(time.perf_counter() - started)
    sub.close()
    return figure


def _append(client: Client, rel: str, n: int) -> str:
    receipt = call(client, "note.append", {"target": rel, "section": "Bench", "markdown": f"line {n}"})
    return str(receipt["op_id"])


def operation_latency(daemon: Daemon, home: Home, notes: list[str], samples: int) -> Figure:
    sub = Subscriber(home.socket)
    sub.subscribe(vaults=[VAULT_ID], kinds=["operation.applied"])
    client = daemon.client()
    figure = Figure("s", note="note.append's reply read, until its operation.applied is read on another connection")
    for n in range(samples):
        sub.events.clear()
        op_id = _append(client, notes[n % len(notes)], n)
        replied = time.perf_counter()
        sub.read_until(has("operation.applied", op_id=op_id), 10, "operation.applied")
        figure.samples.append(time.perf_counter() - replied)
    client.close()
    sub.close()
    return figure


def write_cost(daemon: Daemon, home: Home, notes: list[str], samples: int, block: int = 20) -> tuple[Figure, Figure]:
    alone = Figure("s", note="note.append round trip, no subscriber")
    watched = Figure("s", note="note.append round trip, 10 subscribers reading every event")
    client = daemon.client()
    n = 0
    for round_ in range(max(1, samples // block)):
        order = [(alone, 0), (watched, 10)] if round_ % 2 == 0 else [(watched, 10), (alone, 0)]
        for figure, subscribers in order:
            readers = [Reader(home) for _ in range(subscribers)]
            for _ in range(block):
                started = time.perf_counter()
                _append(client, notes[n % len(notes)], n)
                figure.samples.append(time.perf_counter() - started)
                n += 1
            for reader in readers:
                reader.close()
    client.close()
    return alone, watched


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.subscriptions", description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args(argv)

    source = corpus.ensure(args.notes, args.seed)
    home = Home.create()
    try:
        vault = source.copy_to(home.vault)
        daemon = Daemon(home)
        try:
            setup = daemon.client()
            call(setup, "vault.add", {"id": VAULT_ID, "path": str(vault)})
            setup.close()
            paths = source.paths()
            figures = {
                "editor write -> event": editor_latency(home, vault, paths, args.samples),
                "operation reply -> event": operation_latency(daemon, home, paths, args.samples),
            }
            alone, watched = write_cost(daemon, home, paths, args.samples)
            figures["write, 0 subscribers"] = alone
            figures["write, 10 subscribers"] = watched
        finally:
            daemon.stop()
    finally:
        home.cleanup()

    ratio = watched.p50 / alone.p50
    print(f"subscriptions, {args.notes:,} notes, {args.samples} samples each ({platform.machine()}, {platform.python_version()})")
    print(f"{'figure':<26}{'p50 ms':>10}{'p95 ms':>10}")
    for name, fig in figures.items():
        print(f"{name:<26}{fig.p50 * 1000:>10.1f}{fig.p95 * 1000:>10.1f}")
    print(f"write p50 with 10 subscribers / without: {ratio:.2f}")
    OUT.mkdir(exist_ok=True)
    report = {
        "notes": args.notes,
        "samples": args.samples,
        "figures": {k: v.to_json() for k, v in figures.items()},
        "write_ratio_p50": ratio,
    }
    (OUT / "subscriptions.json").write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
