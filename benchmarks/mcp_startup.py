"""Start-up figures of the MCP shim for docs/mcp.md: process start to a completed handshake, and
a tools/call round trip. Run: ``.venv/bin/python -m benchmarks.mcp_startup`` (starts its own
daemon in a temporary home)."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.harness import Daemon, Home  # noqa: E402 - after REPO is on sys.path, for a run as a script

INIT = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
    }
).encode()
SDK_SERVER = (
    "from mcp.server.mcpserver import MCPServer\n"
    "server = MCPServer('probe')\n"
    "@server.tool()\n"
    "def echo(text: str) -> str:\n"
    "    return text\n"
    "server.run('stdio')\n"
)


def start_to_initialize(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin and proc.stdout
    proc.stdin.write(INIT + b"\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    elapsed = time.perf_counter() - started
    if b'"protocolVersion"' not in line:
        raise RuntimeError(f"no initialize answer from {argv}: {line!r}")
    proc.stdin.close()
    proc.wait(10)
    proc.stdout.close()
    return elapsed


def wall(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, cwd=REPO, check=True, capture_output=True)
    return time.perf_counter() - started


VAULTS_CALL = {"name": "status", "arguments": {"view": "vaults"}}  #: the registry's list, as tools/list offers it


def round_trips(env: dict[str, str], n: int = 50) -> list[float]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultctl.main", "mcp"],
        env=env,
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin and proc.stdout
    stdin, stdout = proc.stdin, proc.stdout

    def ask(i: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}).encode() + b"\n")
        stdin.flush()
        reply: dict[str, Any] = json.loads(stdout.readline())
        return reply

    ask(0, "initialize", json.loads(INIT)["params"])
    ask(1, "tools/call", VAULTS_CALL)
    out = []
    for i in range(n):
        started = time.perf_counter()
        ask(i + 2, "tools/call", VAULTS_CALL)
        out.append(time.perf_counter() - started)
    proc.stdin.close()
    proc.wait(10)
    proc.stdout.close()
    return out


def main() -> None:
    home = Home.create()
    daemon = Daemon(home)
    try:
        env = {**home.env, "VAULTD_NO_AUTOSTART": "1"}
        py = sys.executable
        figures = {
            "python -c pass": [wall([py, "-c", "pass"], env) for _ in range(10)],
            "import mcp.server (SDK)": [wall([py, "-c", "import mcp.server"], env) for _ in range(10)],
            "start -> initialize answered: vaultctl mcp": [start_to_initialize([py, "-m", "vaultctl.main", "mcp"], env) for _ in range(10)],
            "start -> initialize answered: SDK MCPServer": [start_to_initialize([py, "-c", SDK_SERVER], env) for _ in range(10)],
        }
        trips = round_trips(env)
    finally:
        daemon.stop()
        home.cleanup()
    for name, values in figures.items():
        print(f"{name}: median {statistics.median(values) * 1000:.0f} ms (min {min(values) * 1000:.0f})")
    print(
        f"tools/call status (view vaults) round trip: p50 {statistics.median(trips) * 1000:.2f} ms, "
        f"p95 {sorted(trips)[int(len(trips) * 0.95)] * 1000:.2f} ms"
    )


if __name__ == "__main__":
    main()
