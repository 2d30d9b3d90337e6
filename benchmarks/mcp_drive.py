"""Driving a stdio MCP server with the official ``mcp`` SDK client, timing each tool call.

Used for both ``vaultctl mcp`` and basic-memory's MCP server, so both pay the same client costs;
:func:`drive_raw` times the same calls with no client library, to isolate the server's own.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

from benchmarks.stats import descendants


@dataclass
class CallTimes:
    handshake: float = 0.0  #: spawn to ``initialize`` answered, seconds
    tools: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)  #: seconds per tool call, in order
    errors: list[str] = field(default_factory=list)  #: text of calls that answered isError
    texts: list[str] = field(default_factory=list)  #: the first content text of each call (bounded)
    extra: dict[str, Any] = field(default_factory=dict)


Hook = Callable[[ClientSession, CallTimes], Awaitable[None]]


def child_pid(*words: bytes) -> int | None:
    """A descendant of this process whose command line has an argument ending in each of ``words``."""
    for pid in descendants(os.getpid()):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if all(any(arg.endswith(w) for arg in argv) for w in words):
            return pid
    return None


def text_of(result: CallToolResult) -> str:
    """The first text content of a tool call's result (bounded), or ""."""
    for item in result.content:
        if isinstance(item, TextContent):
            return item.text[:2000]
    return ""


async def _drive(
    server: StdioServerParameters,
    calls: Sequence[tuple[str, dict[str, Any]]],
    err: TextIO,
    read_timeout_s: float,
    warmup: int,
    before: Hook | None,
    after: Hook | None,
) -> CallTimes:
    times = CallTimes()
    started = time.perf_counter()
    async with (
        stdio_client(server, errlog=err) as (read, write),
        ClientSession(read, write, read_timeout_seconds=read_timeout_s) as session,
    ):
        await session.initialize()
        times.handshake = time.perf_counter() - started
        times.tools = [t.name for t in (await session.list_tools()).tools]
        if before is not None:
            await before(session, times)
        for name, args in calls[:warmup]:
            await session.call_tool(name, args)
        for name, args in calls:
            t = time.perf_counter()
            result = await session.call_tool(name, args)
            times.latencies.append(time.perf_counter() - t)
            text = text_of(result)
            times.texts.append(text)
            if result.is_error:
                times.errors.append(text[:300])
        if after is not None:
            await after(session, times)
    return times


def drive(
    server: StdioServerParameters,
    calls: Sequence[tuple[str, dict[str, Any]]],
    errlog: Path,
    *,
    read_timeout_s: float = 120.0,
    warmup: int = 0,
    before: Hook | None = None,
    after: Hook | None = None,
) -> CallTimes:
    """Start the server, hand-shake, list tools, run ``warmup`` untimed calls, then time every call.

    ``read_timeout_s`` bounds the wait for each answer (the SDK's per-request read timeout), so a
    server that stops answering fails the run instead of hanging it.
    """
    with open(errlog, "a") as err:
        return anyio.run(_drive, server, calls, err, read_timeout_s, warmup, before, after)


def drive_raw(command: Sequence[str], env: dict[str, str], calls: Sequence[tuple[str, dict[str, Any]]], *, warmup: int = 0) -> CallTimes:
    """The same calls as :func:`drive`, written as bare JSON-RPC lines on the server's stdin.

    No SDK on the client side: what is timed is the pipe and the server, so the difference
    from a socket call is the shim's own cost, not the cost of a host's client library.
    """
    times = CallTimes()
    started = time.perf_counter()
    proc = subprocess.Popen([*command], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout
    ids = iter(range(1, 1 << 30))

    def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
        rid = next(ids)
        stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode() + b"\n")
        stdin.flush()
        while line := stdout.readline():
            message = json.loads(line)
            if message.get("id") == rid:
                return message  # type: ignore[no-any-return]
        raise RuntimeError(f"the server closed its output before answering {method}")

    try:
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "vaultd-bench", "version": "0"}}
        ask("initialize", hello)
        stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        stdin.flush()
        times.handshake = time.perf_counter() - started
        times.tools = [t["name"] for t in ask("tools/list", {})["result"]["tools"]]
        for name, args in calls[:warmup]:
            ask("tools/call", {"name": name, "arguments": args})
        for name, args in calls:
            t = time.perf_counter()
            answer = ask("tools/call", {"name": name, "arguments": args})
            times.latencies.append(time.perf_counter() - t)
            result = answer.get("result") or {}
            if "error" in answer or result.get("isError"):
                times.errors.append(json.dumps(answer)[:300])
    finally:
        stdin.close()
        proc.wait(timeout=30)
    return times
