"""How long a person waits for ``vaultctl``: a whole command, process start to exit, and a Tab.

Each command runs as ``python -m vaultctl.main`` against one daemon (this checkout's) holding the
sample vault, or a generated one with ``--notes N``. ``--base DIR`` times the same commands from
another checkout (e.g. ``git worktree add /tmp/base main``) side by side, alternating run by run,
so both see the same machine load; the ratio column is this checkout over the base.

    .venv/bin/python -m benchmarks.cli_latency                        # this checkout alone
    .venv/bin/python -m benchmarks.cli_latency --base /tmp/base       # and the base, side by side
    .venv/bin/python -m benchmarks.cli_latency --notes 10000 --runs 31

Completion (``__complete``) exists only in checkouts that have it; the base column is then empty.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.harness import Daemon, Home, copy_sample_vault  # noqa: E402 - after REPO is on sys.path, for a run as a script

COMMANDS: tuple[tuple[str, list[str]], ...] = (
    ("vaultctl --help", ["--help"]),
    ("vaultctl status", ["status"]),
    ("vaultctl search alpha", ["search", "alpha"]),
    ("vaultctl list --limit 20", ["list", "--limit", "20"]),
    ("Tab: vaultctl se", ["__complete", "bash", "vaultctl se"]),
    ("Tab: vaultctl show --no-p", ["__complete", "bash", "vaultctl show --no-p"]),
    ("Tab: vaultctl show <name prefix>", ["__complete", "bash", "vaultctl show {prefix}"]),
    ("Tab: vaultctl show (every name, the first 200)", ["__complete", "bash", "vaultctl show "]),
    ("Tab: vaultctl search x --vault ", ["__complete", "bash", "vaultctl search x --vault "]),
)


def _run(checkout: Path, env: dict[str, str], args: list[str]) -> tuple[float, float, bool]:
    """Wall seconds, CPU seconds (user and system, the process and any it waited for) and whether
    the command answered. CPU is the figure to compare on a busy machine: waiting for a share of a
    core stretches the wall time but not the work."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "vaultctl.main", *args],
        env={**env, "PYTHONPATH": str(checkout)},
        cwd=checkout,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    answered = proc.returncode == 0 and (not args or args[0] != "__complete" or len(proc.stdout.splitlines()) > 1)
    return elapsed, cpu, answered


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.cli_latency", description=__doc__.split("\n\n")[0])
    p.add_argument("--base", type=Path, help="another checkout to time side by side")
    p.add_argument("--runs", type=int, default=21, help="runs per command and checkout (median reported)")
    p.add_argument("--notes", type=int, help="a generated vault of this many notes instead of the sample vault")
    args = p.parse_args(argv)
    home = Home.create(prefix="vl")
    daemon = None
    try:
        if args.notes:
            from benchmarks import corpus

            vault = corpus.ensure(args.notes, 1).copy_to(home.vault)
        else:
            vault = copy_sample_vault(home.vault)
        env = {**home.env, "VAULTD_NO_AUTOSTART": "1", "VAULTD_VAULT": "bench", "NO_COLOR": "1"}
        daemon = Daemon(home)
        subprocess.run(
            [sys.executable, "-m", "vaultctl.main", "vault", "add", "bench", str(vault)], env=env, check=True, capture_output=True
        )
        stem = next(iter(sorted(vault.rglob("*.md")))).stem
        prefix = stem[: max(3, len(stem) // 3)].replace(" ", "\\ ")
        checkouts = [("this", REPO)] + ([("base", args.base.resolve())] if args.base else [])
        vault_kind = f"{args.notes} generated notes" if args.notes else "sample"
        print(f"vault: {vault_kind}; runs: {args.runs}; machine load: {os.getloadavg()[0]:.2f}")
        columns = [f"{name} (median ms, CPU ms)" for name, _ in checkouts]
        print(f"| command | {' | '.join(columns)}{' | ratio (wall, CPU)' if args.base else ''} |")
        print("|---|" + "---|" * (len(checkouts) + (1 if args.base else 0)))
        for label, command in COMMANDS:
            command = [c.replace("{prefix}", prefix) for c in command]
            times: dict[str, list[float]] = {name: [] for name, _ in checkouts}
            cpus: dict[str, list[float]] = {name: [] for name, _ in checkouts}
            answered: dict[str, bool] = {name: True for name, _ in checkouts}
            for _ in range(args.runs):
                for name, checkout in checkouts:
                    elapsed, cpu, ok = _run(checkout, env, command)
                    times[name].append(elapsed)
                    cpus[name].append(cpu)
                    answered[name] = answered[name] and ok
            wall = {n: statistics.median(times[n]) for n, _ in checkouts}
            work = {n: statistics.median(cpus[n]) for n, _ in checkouts}
            cells = [f"{wall[n] * 1000:.0f}, {work[n] * 1000:.0f}" if answered[n] else "-" for n, _ in checkouts]
            ratio = ""
            if args.base:
                ratio = f" | {wall['this'] / wall['base']:.2f}x, {work['this'] / work['base']:.2f}x" if answered["base"] else " | -"
            print(f"| `{label.replace('<name prefix>', prefix)}` | {' | '.join(cells)}{ratio} |")
    finally:
        if daemon is not None:
            daemon.stop()
        shutil.rmtree(home.root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
