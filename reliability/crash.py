"""Crash driver: randomized operation streams against a daemon that is SIGKILLed at every named
fault point (cycling through the points and their @N hits, journal pruning included) and at random
moments, restarted, and checked (see :mod:`reliability.checks`).

    .venv/bin/python -m reliability.crash --ops 1000 --seed 1

Prints one JSON object with the counts (operations, kills by point, recoveries, violations by
kind) and exits 1 when any violation was found.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

from reliability.checks import (
    Tally,
    check_index,
    check_log,
    compare_state,
    disk_state,
    index_view,
    leftovers,
    parse_issues,
    rebuild_view,
)
from reliability.session import Client, Died, Proc, connect_ready, register
from reliability.workload import Workload
from tests.support.harness import Home, copy_sample_vault, snapshot

if TYPE_CHECKING:
    from pathlib import Path

#: One kill per entry, in this order, round and round. ``during-recovery`` first leaves an
#: uncommitted operation (crash before its commit), then crashes the restart while it restores.
#: ``during-prune`` kills between a pruned journal's rename out of the live namespace and its
#: deletion, after the operation that pruned it committed and before its receipt.
SCHEDULE = (
    "after-journal",
    "after-rename@1",
    "random",
    "after-rename@2",
    "before-commit",
    "random",
    "after-rename@3",
    "after-commit",
    "random",
    "during-recovery",
    "after-rename@5",
    "random",
    "during-prune",
    "after-journal@9",
    "after-rename@13",
    "random",
    "before-commit@6",
    "after-commit@11",
    "random",
    "during-prune@4",
    "after-rename@21",
)
SEGMENT_OPS = 40  #: a point that has not fired after this many operations is given up on
JOURNAL_KEEP = 8  #: committed journals kept (VAULTD_JOURNAL_KEEP), so nearly every operation prunes one


class CrashRun:
    def __init__(self, vault: Path, home: Home, seed: int, *, check_rebuild_every: int = 1) -> None:
        self.vault, self.home = vault, home
        self.rng = random.Random(seed)
        self.tally = Tally()
        self.model = disk_state(vault)
        self.workload = Workload(self.rng, self.model, self.tally)
        self.log_bytes = (vault / "log.md").read_bytes() if (vault / "log.md").exists() else b""
        self.baseline_issues = parse_issues(vault)
        self.check_rebuild_every = check_rebuild_every
        self.cycles = 0
        self.progress = False
        self.first: tuple[tuple[dict[str, bytes], list[str]], dict[str, Any]] | None = None

    # -- one segment: start with a fault, stream operations until the daemon dies ----------------
    def segment(self, kind: str, ops_left: int) -> int:
        point = {"random": None, "during-recovery": "before-commit"}.get(kind, kind)
        faults = f"crash={point}" if point else None
        p = Proc(self.home, faults)
        if not p.listening():
            self.tally.violation("restart-failed", f"the daemon exited before listening (faults {faults})")
            return 0
        c = connect_ready(self.home)
        self._second_restart(c)
        timer = None
        if kind == "random":
            delay = self.rng.uniform(0.01, 1.5)
            timer = threading.Timer(delay, p.kill_now)
            timer.start()
        done = 0
        try:
            while done < min(ops_left, SEGMENT_OPS) or kind == "random":
                before = self.tally.counts.get("ops", 0)
                self.workload.step(c)
                done += self.tally.counts.get("ops", 0) - before
                if kind == "random" and done >= ops_left:
                    break
        except Died:
            pass
        finally:
            c.close()
            if timer is not None:
                timer.cancel()
        p.exited_within(3.0)  # the socket closes a moment before the process is reaped
        if p.alive():
            if kind != "random" or done >= ops_left:
                self.tally.add("point_not_reached" if kind != "random" else "timer_not_fired")
            p.kill()  # not reached: kill it anyway, idle or mid-operation
        p.wait()
        if not p.killed:
            self.tally.violation("unexpected-exit", f"the daemon exited with {p.proc.returncode} ({kind})")
        self.tally.add("kills")
        self.tally.add(f"kill:{kind if kind != 'during-recovery' else 'before-commit'}")
        if kind == "during-recovery":
            self._crash_recovery()
        return done

    def _crash_recovery(self) -> None:
        p = Proc(self.home, "crash=during-recovery")
        try:
            if p.listening():
                try:
                    connect_ready(self.home).close()
                except Died:
                    pass
        except TimeoutError:
            pass
        if not p.exited_within(0.05):  # one that reached the crash point is gone by now
            self.tally.add("during_recovery_not_reached")  # nothing was left to restore
            p.kill()
            return
        p.wait()
        if p.killed:
            self.tally.add("kills")
            self.tally.add("kill:during-recovery")

    # -- after every kill: restart, recover, check everything ---------------------------------
    def check(self) -> None:
        self.cycles += 1
        where = f"cycle {self.cycles}"
        p = Proc(self.home)
        if not p.listening():
            self.tally.violation("restart-failed", f"{where}: the daemon did not come back (lock or socket)")
            raise SystemExit(json.dumps(self.tally.report()))
        c = connect_ready(self.home)
        self.tally.add("recoveries")
        disk = disk_state(self.vault)
        self.workload.resolve(disk, where)
        compare_state(self.tally, self.model, disk, where)
        for left in leftovers(self.vault):
            self.tally.violation("leftover", f"{where}: {left}")
        for bad in parse_issues(self.vault) - self.baseline_issues:
            self.tally.violation("unparsable", f"{where}: {bad}")
        self.log_bytes = check_log(self.tally, self.vault, self.log_bytes, where)
        view1 = index_view(c)
        check_index(self.tally, view1, disk, where)
        c.close()
        p.stop()
        self.first = (self._files(), view1)
        if self.cycles % self.check_rebuild_every == 0:
            self.tally.add("rebuild_checks")
            if rebuild_view(self.vault) != view1:
                self.tally.violation("index-not-rebuild", f"{where}: the recovered index differs from a fresh build")

    def _files(self) -> tuple[dict[str, bytes], list[str]]:
        journal = self.vault / ".vaultd" / "journal"
        return snapshot(self.vault), sorted(os.listdir(journal)) if journal.is_dir() else []

    def _second_restart(self, c: Client) -> None:
        """Recovery run twice equals once: the next start must find exactly what the last one left."""
        if self.first is None:
            return
        files, view = self.first
        self.first = None
        self.tally.add("second_restarts")
        if self._files() != files or index_view(c) != view:
            self.tally.violation("recovery-not-idempotent", f"cycle {self.cycles}: a second restart changed the vault or the index")

    def _budget(self, kind: str, ops: int, kills: int | None) -> int:
        """The operations a segment may run. A named point takes what it needs from what is left;
        a random kill lands after as many operations as its timer allows, so with a number of kills
        asked for it gets its share of what is left: faster writes must not let one timer spend the
        whole run's operations and leave the kills asked for undone."""
        left = ops - self.tally.counts.get("ops", 0)
        if kind != "random" or kills is None:
            return left
        return max(1, math.ceil(left / max(1, kills - self.cycles)))

    def run(self, ops: int, kills: int | None = None) -> dict[str, Any]:
        i = 0
        while self.tally.counts.get("ops", 0) < ops and (kills is None or self.cycles < kills):
            kind = SCHEDULE[i % len(SCHEDULE)]
            i += 1
            self.segment(kind, self._budget(kind, ops, kills))
            self.check()
            if self.progress:
                n = self.tally.counts
                print(
                    f"cycle {self.cycles}: ops {n.get('ops', 0)} kills {n.get('kills', 0)} violations {len(self.tally.violations)}",
                    file=sys.stderr,
                    flush=True,
                )
        p = Proc(self.home)
        if p.listening():
            c = connect_ready(self.home)
            self._second_restart(c)
            c.close()
        p.stop()
        return self.tally.report()


def run(
    ops: int, seed: int, kills: int | None = None, keep: bool = False, check_rebuild_every: int = 1, progress: bool = False
) -> dict[str, Any]:
    """One crash run on a fresh copy of the sample vault; returns the counted results."""
    home = Home.create()
    home.env["VAULTD_JOURNAL_KEEP"] = str(JOURNAL_KEEP)
    try:
        vault = copy_sample_vault(home.root / "vault")
        register(home, vault)
        started = time.monotonic()
        crash_run = CrashRun(vault, home, seed, check_rebuild_every=check_rebuild_every)
        crash_run.progress = progress
        report = crash_run.run(ops, kills)
        report["seconds"] = round(time.monotonic() - started, 1)
        report["seed"] = seed
        if keep:
            report["kept"] = str(home.root)
        return report
    finally:
        if not keep:
            home.cleanup()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m reliability.crash", description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", type=int, default=200, help="operations to apply (default 200)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kills", type=int, default=None, help="stop after this many kill-and-check cycles")
    ap.add_argument("--rebuild-every", type=int, default=1, help="compare with a fresh build every N cycles")
    ap.add_argument("--keep", action="store_true", help="keep the temporary home and vault")
    ap.add_argument("--progress", action="store_true", help="a line on stderr after every cycle")
    args = ap.parse_args(argv)
    report = run(args.ops, args.seed, args.kills, args.keep, args.rebuild_every, args.progress)
    json.dump(report, sys.stdout, indent=2, sort_keys=True)
    print()
    return 1 if report["violations"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
