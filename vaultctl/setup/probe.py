"""Doctor's view of the agent hosts: run each host's vaultd entry as the host would, and say what
it reaches.

A host file can say "vaultd" and still fail its user: the command moved, a leftover entry in a
nearer Claude Code scope wins, or the host starts servers with an environment of its own and the
shim finds another daemon (or none). So for each host with an entry, doctor starts exactly the
entry's command, arguments and ``env`` on top of a minimal environment (PATH and HOME, no vaultd
variables of this shell, no autostart), does the MCP handshake, lists the tools and asks
``daemon_status``, and compares the daemon it reached with this shell's. One row per host, and one
``guard:HOST`` row saying whether the host's hooks run ``vaultctl guard`` on every event setup
gives them (and whether that vaultctl is there to run), and a ``sandbox:HOST`` row saying whether
the host's own sandbox enforces the boundary, or its shell is kept off the vaults only by words.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from protocol.location import resolve_socket
from vaultctl.setup.errors import SetupError
from vaultctl.setup.guardcheck import guard_row
from vaultctl.setup.hosts import HOSTS
from vaultctl.setup.sandbox import sandbox_row
from vaultctl.setup.scopes import claude_shadows

if TYPE_CHECKING:
    from collections.abc import Mapping

PROBE_TIMEOUT_S = 20.0  #: per host: start, handshake, two calls
PROBE_VERSION = "2025-06-18"  #: what most hosts send today
STATUS_TOOL = "daemon_status"  #: the tool that says which daemon a shim reached
_MAX_LINE = 1 << 20


@dataclass(frozen=True, slots=True)
class HostRow:
    """One doctor row: LEVEL (ok, warn, fail), CHECK, FINDING."""

    level: str
    check: str
    finding: str


def host_rows(env: Mapping[str, str], cwd: Path) -> list[HostRow]:
    """A row for every host whose user file has a vaultd entry, one per shadowing entry, and a
    guard row for each host with an entry or with the guard's hooks."""
    rows: list[HostRow] = []
    for name, host in HOSTS.items():
        path = Path(os.path.abspath(host.config_path(env)))
        try:
            entry = _entry_of(name, path)
        except SetupError as exc:
            rows.append(HostRow("warn", f"host:{name}", f"{path}: {exc.message}"))
            entry = None
        else:
            if entry is not None:
                level, finding = probe(entry, env)
                rows.append(HostRow(level, f"host:{name}", f"{path}: {finding}"))
                if name == "claude":
                    rows.extend(HostRow("warn", "host:claude", s.advice()) for s in claude_shadows(env, cwd))
        guard = guard_row(name, env, has_entry=entry is not None)
        if guard is not None:
            rows.append(HostRow(*guard))
            sandbox = sandbox_row(name, env)
            if sandbox is not None:
                rows.append(HostRow(*sandbox))
    if not rows:
        rows.append(HostRow("ok", "hosts", "no agent host has a vaultd entry (`vaultctl setup HOST` adds one)"))
    return rows


def _entry_of(name: str, path: Path) -> dict[str, Any] | None:
    from vaultctl.setup import files
    from vaultctl.setup.entry import format_for

    snap = files.read(path)
    if snap is None:
        return None
    text = snap.data.decode("utf-8", "replace")
    found = format_for(HOSTS[name]).parse(text, path).entry()
    return found.value if found is not None and isinstance(found.value, dict) else None


def probe(entry: Mapping[str, Any], env: Mapping[str, str]) -> tuple[str, str]:
    """(level, finding) for one entry, started as a host with a minimal environment would."""
    command, args = entry.get("command"), entry.get("args", [])
    extra = entry.get("env", {})
    if not isinstance(command, str) or not isinstance(args, list) or not isinstance(extra, dict):
        return "fail", "the entry has no usable command, args or env"
    child_env = {
        "PATH": env.get("PATH", os.defpath),
        "HOME": env.get("HOME", ""),
        "VAULTD_NO_AUTOSTART": "1",
        **{str(k): str(v) for k, v in extra.items()},
    }
    try:
        proc = subprocess.Popen(
            [command, *with_status_tool([str(a) for a in args])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=child_env,
            cwd=env.get("HOME") or None,
        )
    except OSError as exc:
        return "fail", f"cannot run {command!r}: {exc.strerror or exc}"
    try:
        return _session(proc, env)
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def with_status_tool(args: list[str]) -> list[str]:
    """``args`` with ``daemon_status`` added to a ``--tools`` choice that may leave it out.

    The probe asks that tool which daemon the entry reaches; the entry's toolset is the user's
    choice for the agent's context and changes nothing about which daemon is reached.
    """
    out = list(args)
    for i, arg in enumerate(out):
        if arg == "--tools" and i + 1 < len(out):
            out[i + 1] = f"{out[i + 1]},{STATUS_TOOL}"
        elif arg.startswith("--tools="):
            out[i] = f"{arg},{STATUS_TOOL}"
    return out


def _session(proc: subprocess.Popen[bytes], env: Mapping[str, str]) -> tuple[str, str]:
    deadline = time.monotonic() + PROBE_TIMEOUT_S
    reader = _Lines(proc, deadline)
    try:
        init = reader.call(
            1,
            "initialize",
            {"protocolVersion": PROBE_VERSION, "capabilities": {}, "clientInfo": {"name": "vaultctl-doctor", "version": "1"}},
        )
        reader.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = reader.call(2, "tools/list", {})
        status = reader.call(3, "tools/call", {"name": STATUS_TOOL, "arguments": {}})
    except _ProbeFailed as exc:
        return "fail", str(exc)
    server = init.get("serverInfo", {}).get("name", "?")
    count = len(tools.get("tools", []))
    if status.get("isError"):
        text = " ".join(c.get("text", "") for c in status.get("content", []) if isinstance(c, dict))[:300]
        return "warn", (
            f"{server} answers ({count} tools) but reaches no daemon: {text.strip()} "
            "(run `vaultctl setup HOST --apply` from the shell you use vaultd in to record its locations)"
        )
    reached = status.get("structuredContent") or {}
    mine = str(resolve_socket(environ=env))
    if reached.get("socket") != mine:
        return "warn", (
            f"{server} answers ({count} tools) but reaches the daemon at {reached.get('socket')}, "
            f"not this shell's at {mine}; run `vaultctl setup HOST --apply` here to record it"
        )
    return "ok", f"{server} answers: {count} tools, this daemon (pid {reached.get('pid')})"


class _ProbeFailed(Exception):
    pass


class _Lines:
    """Newline-delimited JSON-RPC over the child's pipes, every wait bounded by one deadline."""

    def __init__(self, proc: subprocess.Popen[bytes], deadline: float) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.proc, self.deadline = proc, deadline
        self.buffer = b""
        self.selector = selectors.DefaultSelector()
        self.selector.register(proc.stdout, selectors.EVENT_READ)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message).encode() + b"\n")
            self.proc.stdin.flush()
        except OSError as exc:
            raise _ProbeFailed(f"the server exited (status {self.proc.poll()}) before the handshake ended") from exc

    def call(self, request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            message = self._next()
            if message.get("id") != request_id:
                continue  # a notification or a log message
            if "error" in message:
                raise _ProbeFailed(f"{method} was refused: {str(message['error'].get('message'))[:200]}")
            result = message.get("result")
            if not isinstance(result, dict):
                raise _ProbeFailed(f"{method} answered no result object")
            return result

    def _next(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while b"\n" not in self.buffer:
            left = self.deadline - time.monotonic()
            if left <= 0 or not self.selector.select(left):
                raise _ProbeFailed(f"no answer within {PROBE_TIMEOUT_S:g} s")
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise _ProbeFailed(f"the server exited (status {self.proc.wait()}) before answering")
            self.buffer += chunk
            if len(self.buffer) > _MAX_LINE:
                raise _ProbeFailed("the server sent a line over 1 MiB")
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            message = json.loads(line)
        except ValueError as exc:
            raise _ProbeFailed("the server wrote something other than JSON-RPC on stdout") from exc
        if not isinstance(message, dict):
            raise _ProbeFailed("the server wrote something other than JSON-RPC on stdout")
        return message
