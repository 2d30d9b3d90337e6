"""What the web console costs, for docs/dependencies.md: imports, start-up, a sign-in, memory.

    .venv/bin/python -m benchmarks.console_startup            # 15 samples of each import, 10 cold starts
    .venv/bin/python -m benchmarks.console_startup --samples 30

Figures (medians, with p95), each in a fresh interpreter or against a daemon in a temporary home:

- **imports**: a bare interpreter; the daemon's own modules (``vaultd.daemon``, what vaultd
  loads either way); the console process's modules (``vaultctl.console.main``: Starlette, uvicorn,
  markdown-it-py); and both at once, which is what serving the console inside the daemon would
  have cost every daemon start, console or not. Interleaved, so load on the machine falls on all.
- **console.open, cold**: from the request to the answer with a token, the console not running
  (the daemon spawns it, waits for its Ready, asks for a token).
- **console.open, warm**: the same with the console running (one token over the pipe).
- **sign-in and first page**: the token exchanged for the cookie, then the page and its session.
- **memory**: the console process's resident set after the sign-ins above.
"""

from __future__ import annotations

import argparse
import http.client
import json
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

from benchmarks.stats import Figure
from tests.support.harness import REPO, Daemon, Home, RawClient, copy_sample_vault, vaultctl

IMPORTS = {
    "bare interpreter": "pass",
    "daemon modules (vaultd.daemon)": "import vaultd.daemon",
    "console modules (vaultctl.console.main)": "import vaultctl.console.main",
    "daemon + console in one process": "import vaultd.daemon, vaultctl.console.main",
}


def _import_seconds(code: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO, check=True)
    return time.perf_counter() - started


def _http(origin: str, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, list[str]]:
    parts = urlsplit(origin)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=10)
    try:
        conn.request(method, path, body=body, headers={"Host": parts.netloc, **(headers or {})})
        response = conn.getresponse()
        response.read()
        return response.status, [v for k, v in response.getheaders() if k.lower() == "set-cookie"]
    finally:
        conn.close()


def _rss_bytes(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return float(line.split()[1]) * 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=15)
    parser.add_argument("--starts", type=int, default=10)
    args = parser.parse_args()

    home = Home.create()
    daemon = Daemon(home)
    figures: dict[str, Figure] = {name: Figure("s") for name in IMPORTS}
    try:
        for _ in range(args.samples):
            for name, code in IMPORTS.items():
                figures[name].samples.append(_import_seconds(code, home.env))
        vault = copy_sample_vault(home.vault)
        assert vaultctl(home, "vault", "add", "sample", str(vault)).code == 0
        person = RawClient(home.socket, timeout=60)
        person.hello()
        cold, warm, first_page = Figure("s"), Figure("s"), Figure("s")
        opened: dict[str, object] = {}
        for _ in range(args.starts):
            person.call("console.stop", {})
            started = time.perf_counter()
            opened = person.call("console.open", {})
            cold.samples.append(time.perf_counter() - started)
        for _ in range(args.samples * 3):
            started = time.perf_counter()
            opened = person.call("console.open", {})
            warm.samples.append(time.perf_counter() - started)
            origin, url = str(opened["origin"]), str(opened["url"])
            token = urlsplit(url).fragment.split("&")[0].removeprefix("token=")
            started = time.perf_counter()
            status, cookies = _http(
                origin, "POST", "/api/login", json.dumps({"token": token}).encode(), {"Origin": origin, "Content-Type": "application/json"}
            )
            cookie = cookies[0].split(";")[0]
            assert status == 200 and _http(origin, "GET", "/", headers={"Cookie": cookie})[0] == 200
            assert _http(origin, "GET", "/api/session", headers={"Cookie": cookie})[0] == 200
            first_page.samples.append(time.perf_counter() - started)
        memory = Figure("B", [_rss_bytes(int(str(opened["pid"])))])
        figures.update(
            {
                "console.open, cold (spawn to token)": cold,
                "console.open, warm (token over the pipe)": warm,
                "sign-in and first page": first_page,
                "console process RSS": memory,
            }
        )
    finally:
        daemon.stop()
        home.cleanup()
    print("| figure | median | p95 | n |\n|---|---|---|---|")
    for name, fig in figures.items():
        if fig.unit == "B":
            print(f"| {name} | {fig.p50 / 2**20:.1f} MiB | | {len(fig.samples)} |")
        else:
            print(f"| {name} | {fig.p50 * 1000:.0f} ms | {fig.p95 * 1000:.0f} ms | {len(fig.samples)} |")


if __name__ == "__main__":
    main()
