"""Lost writes below the process: the vault lives on :mod:`reliability.lazyfs`, and each cycle
ends in a simulated power loss (the daemon is SIGKILLed, sometimes mid-operation, and everything
not made durable by an fsync is dropped). The filesystem is remounted from its durable state, the
daemon restarts, and the invariants of :mod:`reliability.checks` must hold; in particular every
acknowledged operation must have survived.

    .venv/bin/python -m reliability.lostwrites --cycles 30 --seed 1
    .venv/bin/python -m reliability.lostwrites --cycles 10 --faults crash=after-rename@1
    .venv/bin/python -m reliability.lostwrites --cycles 5 --negative-control

``--negative-control`` runs a daemon whose folder fsyncs were removed
(:mod:`reliability.nofsync_daemon`); the harness must then report violations (exit 0 when it
does, 1 when it misses them). Skips with a message where /dev/fuse, fusermount3 or mfusepy is
unavailable.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
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
from reliability.session import Died, Proc, connect_ready, register
from reliability.workload import Workload
from tests.support.harness import Home, copy_sample_vault
from tests.support.wait import wait_until

if TYPE_CHECKING:
    from pathlib import Path


def unavailable() -> str | None:
    """Why this suite cannot run here, or None."""
    if not os.path.exists("/dev/fuse"):
        return "/dev/fuse is not available"
    if shutil.which("fusermount3") is None:
        return "fusermount3 is not installed (apt-get install fuse3)"
    try:
        import mfusepy  # type: ignore[import-untyped]  # noqa: F401 - the import is the probe: it loads libfuse
    except (ImportError, OSError) as exc:
        return f"mfusepy cannot load libfuse: {exc}"
    return None


class Mount:
    """One mount of the lossy filesystem over ``backing`` at ``point``."""

    def __init__(self, backing: Path, point: Path, durable_out: Path) -> None:
        self.backing, self.point, self.durable_out = backing, point, durable_out
        log = point.parent / "lazyfs.out"
        self.log = open(log, "ab")  # closed in unmount()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "reliability.lazyfs", str(backing), str(point), "--durable-out", str(durable_out)],
            stdout=self.log,
            stderr=self.log,
        )

        def mounted() -> bool:
            if self.proc.poll() is not None:
                raise RuntimeError(f"lazyfs exited with {self.proc.returncode} before mounting: see {log}")
            return os.path.ismount(point)

        wait_until(mounted, 20, f"lazyfs to mount {point} (see {log})")

    def unmount(self) -> Path:
        """Unmount; returns the folder holding the durable state."""

        def unmounted() -> bool:
            return subprocess.run(["fusermount3", "-u", str(self.point)], capture_output=True).returncode == 0

        try:
            wait_until(unmounted, 5.0, f"{self.point} to unmount", poll=0.05)
        except TimeoutError:  # still busy: detach it lazily rather than leave it mounted
            subprocess.run(["fusermount3", "-u", "-z", str(self.point)], capture_output=True)
        self.proc.wait(60)
        self.log.close()
        return self.durable_out


class LostWritesRun:
    def __init__(self, home: Home, seed: int, module: str, rebuild_every: int, faults: str | None = None) -> None:
        self.home = home
        self.faults = faults
        self.rng = random.Random(seed)
        self.tally = Tally()
        self.module = module
        self.rebuild_every = rebuild_every
        self.point = home.root / "mnt"
        self.point.mkdir()
        backing = copy_sample_vault(home.root / "disk0")
        self.generation = 0
        self.mount = Mount(backing, self.point, home.root / "disk1")
        register(home, self.point)
        self.model = disk_state(self.point)
        self.workload = Workload(self.rng, self.model, self.tally)
        self.log_bytes = (self.point / "log.md").read_bytes() if (self.point / "log.md").exists() else b""
        self.baseline = parse_issues(self.point)

    def power_loss(self, p: Proc) -> None:
        p.kill()
        durable = self.mount.unmount()
        old = self.mount.backing
        self.generation += 1
        self.mount = Mount(durable, self.point, self.home.root / f"disk{self.generation + 2}")
        shutil.rmtree(old, ignore_errors=True)
        self.tally.add("power_losses")

    def cycle(self, n: int) -> None:
        p = Proc(self.home, self.faults, module=self.module)
        if not p.listening():
            self.tally.violation("restart-failed", f"cycle {n}: the daemon did not start")
            return
        c = connect_ready(self.home)
        where = f"cycle {n}"
        # the state the last power loss left: recovered, checked
        self.tally.add("recoveries")
        disk = disk_state(self.point)
        self.workload.resolve(disk, where)
        compare_state(self.tally, self.model, disk, where)
        for left in leftovers(self.point):
            self.tally.violation("leftover", f"{where}: {left}")
        for bad in parse_issues(self.point) - self.baseline:
            self.tally.violation("unparsable", f"{where}: {bad}")
        self.log_bytes = check_log(self.tally, self.point, self.log_bytes, where)
        check_index(self.tally, index_view(c), disk, where)
        if (n + 1) % self.rebuild_every == 0:
            view = index_view(c)
            c.close()
            p.stop()
            self.tally.add("rebuild_checks")
            if rebuild_view(self.point) != view:
                self.tally.violation("index-not-rebuild", f"{where}: the recovered index differs from a fresh build")
            p = Proc(self.home, self.faults, module=self.module)
            p.listening()
            c = connect_ready(self.home)
        # a few operations, then power loss: at a random moment, or right after the last ack
        timer = None
        if self.faults is None and self.rng.random() < 0.5:
            timer = threading.Timer(self.rng.uniform(0.01, 0.5), p.kill_now)
            timer.start()
        try:
            for _ in range(self.rng.randint(2, 8)):
                self.workload.step(c)
        except Died:
            pass
        finally:
            if timer is not None:
                timer.cancel()
            c.close()
        self.power_loss(p)

    def run(self, cycles: int) -> dict[str, Any]:
        for n in range(cycles + 1):
            if n == cycles:  # the last power loss is checked too
                p = Proc(self.home, module=self.module)
                p.listening()
                c = connect_ready(self.home)
                disk = disk_state(self.point)
                self.workload.resolve(disk, "final")
                compare_state(self.tally, self.model, disk, "final")
                for left in leftovers(self.point):
                    self.tally.violation("leftover", f"final: {left}")
                check_index(self.tally, index_view(c), disk, "final")
                c.close()
                p.stop()
                break
            self.cycle(n)
        self.mount.unmount()
        return self.tally.report()


def run(
    cycles: int, seed: int, negative_control: bool = False, rebuild_every: int = 5, keep: bool = False, faults: str | None = None
) -> dict[str, Any]:
    reason = unavailable()
    if reason:
        return {"skipped": reason}
    home = Home.create()
    module = "reliability.nofsync_daemon" if negative_control else "vaultd.main"
    try:
        started = time.monotonic()
        report = LostWritesRun(home, seed, module, rebuild_every, faults).run(cycles)
        report["seconds"] = round(time.monotonic() - started, 1)
        report["seed"] = seed
        report["daemon"] = module
        report["faults"] = faults
        if keep:
            report["kept"] = str(home.root)
        return report
    finally:
        if os.path.ismount(home.root / "mnt"):
            subprocess.run(["fusermount3", "-u", "-z", str(home.root / "mnt")], capture_output=True)
        if not keep:
            home.cleanup()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m reliability.lostwrites", description=__doc__.split("\n\n")[0])
    ap.add_argument("--cycles", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--negative-control", action="store_true", help="run a daemon without folder fsyncs; succeed only if violations are found"
    )
    ap.add_argument("--rebuild-every", type=int, default=5)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument(
        "--faults", help="VAULTD_FAULTS for the daemon, e.g. crash=after-rename@1: the power loss then follows a crash at that point"
    )
    args = ap.parse_args(argv)
    report = run(args.cycles, args.seed, args.negative_control, args.rebuild_every, args.keep, args.faults)
    json.dump(report, sys.stdout, indent=2, sort_keys=True)
    print()
    if "skipped" in report:
        print(f"skipped: {report['skipped']}", file=sys.stderr)
        return 0
    if args.negative_control:
        return 0 if report["violations"] else 1
    return 1 if report["violations"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
