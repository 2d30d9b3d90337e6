"""What the agent-host guard costs a tool call: the whole ``vaultctl guard`` process, side by side
with a bare Python start, for the three kinds of call a host makes.

    .venv/bin/python -m benchmarks.guard_hook [--runs 30]

- ``python -c pass``: the floor any Python hook pays;
- a shell call naming no file (``ls -la``): parsed, never sent to the daemon;
- an edit outside every vault: one ``guard.check`` on the socket, let through;
- an edit inside a vault: one ``guard.check``, refused (exit 2 and the reason).

The runs are interleaved (one of each per round) so a noisy neighbour weighs on all alike.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from benchmarks.stats import pct
from benchmarks.timed_daemon import VAULTCTL, Daemon, Home
from tests.support.harness import copy_sample_vault


def _payload(tool: str, tool_input: dict[str, str]) -> bytes:
    return json.dumps({"hook_event_name": "PreToolUse", "cwd": "/", "tool_name": tool, "tool_input": tool_input}).encode()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.guard_hook", description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=30)
    args = p.parse_args(argv)
    home = Home.create()
    vault = copy_sample_vault(home.root / "vault")
    daemon = Daemon(home)
    try:
        daemon.client().close()
        added = subprocess.run([*VAULTCTL, "vault", "add", "bench", str(vault)], env=home.env, capture_output=True, check=False)
        assert added.returncode == 0, added.stderr
        cases: dict[str, tuple[list[str], bytes, int]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], b"", 0),
            "shell call naming no file": ([*VAULTCTL, "guard"], _payload("Bash", {"command": "ls -la"}), 0),
            "edit outside every vault": ([*VAULTCTL, "guard"], _payload("Edit", {"file_path": "/tmp/elsewhere.md"}), 0),
            "edit inside a vault (refused)": ([*VAULTCTL, "guard"], _payload("Edit", {"file_path": str(vault / "Home.md")}), 2),
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, (cmd, stdin, want) in cases.items():
                start = time.perf_counter()
                done = subprocess.run(cmd, input=stdin, env=home.env, capture_output=True, check=False)
                times[name].append((time.perf_counter() - start) * 1000)
                assert done.returncode == want, (name, done.returncode, done.stderr)
        floor = pct(times["python -c pass"], 50)
        print(f"| call | p50 ms | p95 ms | p50 over python |  (runs: {args.runs})")
        print("|---|---|---|---|")
        for name, values in times.items():
            print(f"| {name} | {pct(values, 50):.1f} | {pct(values, 95):.1f} | {pct(values, 50) - floor:+.1f} |")
    finally:
        daemon.stop()
        home.cleanup()


if __name__ == "__main__":
    main()
