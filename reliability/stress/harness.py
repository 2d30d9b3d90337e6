"""What the stress drivers share: a daemon in a temp home (from :mod:`tests.support.harness`),
three kinds of client, /proc probes.

Every client exposes one call shape, ``call(method, params) -> Reply``, whether it speaks to the
socket directly, runs one ``vaultctl`` process per call, or drives a ``vaultctl mcp`` shim with raw
JSON lines on its stdin. All traffic goes to the local Unix socket of a daemon started here.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.harness import REPO, VAULTCTL, Home, RawClient
from tests.support.harness import start_daemon as start_daemon  # the drivers start theirs here

SHIM = [sys.executable, "-m", "vaultctl.main", "mcp"]
CALL_TIMEOUT = 60.0  #: a request unanswered this long counts as a hang


@dataclass
class Reply:
    ok: bool
    value: Any  #: the result, or the error's ``data`` ({code, message, issues})
    seconds: float
    sent: float  #: monotonic time the request left
    answered: float  #: monotonic time the answer arrived

    @property
    def code(self) -> str:
        return "OK" if self.ok else str((self.value or {}).get("code", "?"))


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class SocketClient:
    kind = "raw"

    def __init__(self, home: Home, channel: str = "cli") -> None:
        self.raw = RawClient(home.socket, timeout=CALL_TIMEOUT)
        self.raw.hello(channel)

    def call(self, method: str, params: dict[str, Any]) -> Reply:
        t0 = time.monotonic()
        reply = self.raw.request(method, params)
        t1 = time.monotonic()
        if "error" in reply:
            data = reply["error"].get("data") or {"code": str(reply["error"]["code"]), "message": reply["error"]["message"]}
            return Reply(False, data, t1 - t0, t0, t1)
        return Reply(True, reply["result"], t1 - t0, t0, t1)

    def close(self) -> None:
        self.raw.close()


_EXIT_CODES = {1: "REFUSED", 2: "USAGE", 69: "UNAVAILABLE", 70: "INTERNAL", 75: "CONFLICT"}


class CliClient:
    """One ``vaultctl ... --json`` process per call, as a shell script would use it."""

    kind = "cli"

    def __init__(self, home: Home) -> None:
        self.env = {**home.env, "VAULTD_NO_AUTOSTART": "1"}

    def _argv(self, method: str, p: dict[str, Any]) -> list[str]:
        sha = ["--expected-sha", p["expected_sha"]] if p.get("expected_sha") else []
        if method == "note.read":
            return ["show", p["target"], "--max-bytes", "65536"]
        if method == "note.create":
            body = ["--body", "-"] if p.get("body") else []
            return ["new", p["path"], *body]
        if method == "note.patch":
            return ["patch", p["target"], "--old", p["old"], "--new", p["new"], *sha]
        if method == "note.append":
            return ["append", p["target"], "--section", p["section"], "--markdown", p["markdown"], *sha]
        if method == "note.set_frontmatter":
            return ["set", p["target"], "--set", json.dumps(p["set"]), *sha]
        raise ValueError(f"no CLI form for {method}")

    def call(self, method: str, params: dict[str, Any]) -> Reply:
        argv = [*VAULTCTL, *self._argv(method, params), "--json"]
        t0 = time.monotonic()
        proc = subprocess.run(argv, env=self.env, input=params.get("body"), capture_output=True, text=True, cwd=REPO, timeout=CALL_TIMEOUT)
        t1 = time.monotonic()
        if proc.returncode == 0:
            return Reply(True, json.loads(proc.stdout), t1 - t0, t0, t1)
        code = _EXIT_CODES.get(proc.returncode, f"EXIT{proc.returncode}")
        return Reply(False, {"code": code, "message": proc.stderr.strip()[-400:]}, t1 - t0, t0, t1)

    def close(self) -> None:
        pass


class McpClient:
    """A ``vaultctl mcp`` shim driven with raw JSON lines: initialize, then tools/call."""

    kind = "mcp"

    def __init__(self, home: Home, stderr_dir: Path) -> None:
        self._err = open(stderr_dir / f"shim-{time.monotonic_ns()}.err", "wb")  # closed in close()
        self.proc = subprocess.Popen(
            SHIM, env={**home.env, "VAULTD_NO_AUTOSTART": "1"}, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._ids = itertools.count(1)
        self._pump_thread = threading.Thread(target=self._pump, daemon=True)
        self._pump_thread.start()
        reply = self._request(
            "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "vaultd-stress", "version": "1"}}
        )
        assert "result" in reply, reply
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def _request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        rid = next(self._ids)
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            msg: dict[str, Any] = json.loads(self._lines.get(timeout=CALL_TIMEOUT))
            if msg.get("id") == rid:
                return msg

    def call(self, method: str, params: dict[str, Any]) -> Reply:
        t0 = time.monotonic()
        reply = self._request("tools/call", {"name": method.replace(".", "_"), "arguments": params})
        t1 = time.monotonic()
        if "error" in reply:
            return Reply(False, {"code": f"RPC{reply['error']['code']}", "message": reply["error"]["message"]}, t1 - t0, t0, t1)
        result = reply["result"]
        structured = result.get("structuredContent")
        if structured is None:
            structured = json.loads(result["content"][0]["text"])
        return Reply(not result["isError"], structured, t1 - t0, t0, t1)

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._pump_thread.join(10)
        if self.proc.stdout:
            self.proc.stdout.close()
        self._err.close()


# -- /proc probes ----------------------------------------------------------------------------------


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def cpu_ticks(pid: int) -> int:
    """utime + stime of the process, in clock ticks."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


CLK_TCK = os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]
