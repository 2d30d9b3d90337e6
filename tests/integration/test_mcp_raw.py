"""`vaultctl mcp` fed by hand: one JSON per line on stdin, replies read from stdout.

Every bad input gets its JSON-RPC answer (or, for a notification, none) and the shim goes on
answering; stdout carries nothing but protocol lines; end of input exits 0.
"""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest

from protocol.limits import MAX_FRAME_BYTES
from protocol.table import METHODS
from tests.support.harness import REPO, Daemon, Home, register
from tests.support.mcp_results import tool_error
from vaultctl.mcp.tools import ToolCatalogue
from vaultctl.mcp.versions import (
    ALL_VERSIONS,
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE,
    PROTOCOL_VERSION_META_KEY,
    STATELESS_VERSIONS,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

SHIM = [sys.executable, "-m", "vaultctl.main", "mcp"]
STATELESS = STATELESS_VERSIONS[-1]
MAX_INSTRUCTIONS_BYTES = 2048  #: the full toolset's instructions: the preamble and the shared arguments, about 1.6 KB


def _envelope(version: str = STATELESS) -> dict[str, Any]:
    return {
        "_meta": {
            PROTOCOL_VERSION_META_KEY: version,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"},
        }
    }


class ShimProcess:
    """`vaultctl mcp` as a subprocess with pipes; a thread collects stdout lines."""

    def __init__(self, home: Home, env: dict[str, str] | None = None, args: list[str] | None = None) -> None:
        self.stderr_path = home.root / f"shim-{time.monotonic_ns()}.err"
        self._err = open(self.stderr_path, "wb")  # closed in close()
        self.proc = subprocess.Popen(
            [*SHIM, *(args or [])],
            env={**home.env, **(env or {})},
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._ids = itertools.count(1000)
        self._pump_thread = threading.Thread(target=self._pump, daemon=True)
        self._pump_thread.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.proc.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def recv(self, timeout: float = 30.0) -> dict[str, Any]:
        line = self._lines.get(timeout=timeout)
        message = json.loads(line)  # stdout carries protocol lines only
        assert isinstance(message, dict) and message["jsonrpc"] == "2.0", line
        return message

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        request_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        reply = self.recv()
        assert reply["id"] == request_id, reply
        return reply

    def initialize(self, version: str = LATEST_HANDSHAKE) -> dict[str, Any]:
        reply = self.request(
            "initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw-test", "version": "1"}}
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def call(self, tool: str, arguments: Any = None, **extra: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"name": tool, **extra}
        if arguments is not None:
            params["arguments"] = arguments
        return self.request("tools/call", params)

    def still_answers(self) -> None:
        assert self.request("ping")["result"] == {}

    def nothing_pending(self) -> None:
        assert self._lines.empty(), self._lines.get_nowait()

    def close(self, timeout: float = 20.0) -> int:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._pump_thread.join(timeout)  # stdout reaches EOF once the process is gone
            assert self.proc.stdout is not None
            self.proc.stdout.close()
            self._err.close()
        return code

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")


@pytest.fixture
def shim(daemon: Daemon, home: Home) -> Iterator[ShimProcess]:
    proc = ShimProcess(home)
    yield proc
    assert proc.close() == 0
    proc.nothing_pending()


@pytest.fixture
def registered(daemon: Daemon, sample_vault: Path) -> str:
    register(daemon.home, sample_vault, "sample")
    return "sample"


# -- framing and JSON-RPC ---------------------------------------------------------------------------


def test_malformed_frame_is_a_parse_error(shim: ShimProcess) -> None:
    shim.send(b'{"jsonrpc": "2.0", "id": 1, "method": \n')
    reply = shim.recv()
    assert reply["error"]["code"] == -32700 and reply["id"] is None
    shim.send(b"\xff\xfe not utf-8\n")
    assert shim.recv()["error"]["code"] == -32700
    shim.still_answers()


def test_oversized_frame_is_refused_and_skipped(shim: ShimProcess) -> None:
    big = {"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"pad": "a" * MAX_FRAME_BYTES}}
    shim.send(big)
    reply = shim.recv()
    assert reply["error"]["code"] == -32600 and "limit" in reply["error"]["message"]
    shim.still_answers()


@pytest.mark.parametrize(
    "frame, answered_id",
    [
        (b"[1, 2, 3]", None),
        (b'"just a string"', None),
        (b'{"id": 4, "method": "ping"}', 4),  # no jsonrpc
        (b'{"jsonrpc": "1.0", "id": 4, "method": "ping"}', 4),
        (b'{"jsonrpc": "2.0", "id": 4, "method": 5}', 4),
        (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}', None),
        (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', None),
        (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', None),
    ],
)
def test_not_json_rpc_is_an_invalid_request(shim: ShimProcess, frame: bytes, answered_id: int | None) -> None:
    shim.send(frame + b"\n")
    reply = shim.recv()
    assert reply["error"]["code"] == -32600 and reply["id"] == answered_id
    shim.still_answers()


def test_params_that_are_not_an_object(shim: ShimProcess) -> None:
    shim.send({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": [1, 2]})
    assert shim.recv()["error"]["code"] == -32602
    shim.still_answers()


@pytest.mark.parametrize("method", ["prompts/list", "logging/setLevel"])  # resources are served, subscribing too
def test_unknown_method(shim: ShimProcess, method: str) -> None:
    shim.initialize()
    reply = shim.request(method, {"uri": "vault://v/x.md"})
    assert reply["error"]["code"] == -32601 and method in reply["error"]["message"]
    shim.still_answers()


def test_notifications_get_no_reply(shim: ShimProcess) -> None:
    shim.initialize()
    shim.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    shim.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}})
    shim.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "junk"})
    shim.send({"jsonrpc": "2.0", "method": "no/such/notification", "params": {"x": 1}})
    shim.send({"jsonrpc": "2.0", "id": 55, "result": {}})  # a response: we never asked, so no answer
    shim.still_answers()  # the next line on stdout is the ping's answer, nothing before it


def test_ping_in_both_eras(shim: ShimProcess) -> None:
    assert shim.request("ping")["result"] == {}
    stateless = shim.request("ping", _envelope())["result"]
    assert stateless["resultType"] == "complete"


def test_a_last_frame_without_newline_is_answered_and_eof_exits_zero(daemon: Daemon, home: Home) -> None:
    proc = ShimProcess(home)
    proc.send(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}')
    assert proc.close() == 0
    assert proc.recv()["result"] == {}


# -- version negotiation ----------------------------------------------------------------------------


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_handshake_echoes_a_version_it_speaks(shim: ShimProcess, version: str) -> None:
    result = shim.initialize(version)["result"]
    assert result["protocolVersion"] == version
    assert set(result) == {"protocolVersion", "capabilities", "serverInfo", "instructions"}
    assert result["capabilities"]["tools"] == {"listChanged": False}
    # The instructions describe once the arguments every tool shares (they count in the toolset's
    # budget, tests/unit/test_mcp_budget.py); with the default toolset they stay small.
    assert len(result["instructions"].encode()) < MAX_INSTRUCTIONS_BYTES


@pytest.mark.parametrize("version", ["2024-10-07", "2099-01-01", STATELESS, "not-a-version"])
def test_handshake_falls_back_to_the_newest_handshake_version(shim: ShimProcess, version: str) -> None:
    assert shim.initialize(version)["result"]["protocolVersion"] == LATEST_HANDSHAKE
    shim.still_answers()


def test_2024_11_05_is_spoken_without_annotations(shim: ShimProcess) -> None:
    """Regression: initialize with 2024-11-05, which hosts built before spring 2025 still send,
    was answered with a newer version, and such a client hangs up."""
    assert shim.initialize("2024-11-05")["result"]["protocolVersion"] == "2024-11-05"
    tools = shim.request("tools/list")["result"]["tools"]
    assert tools and not any({"annotations", "outputSchema", "title"} & set(t) for t in tools)
    assert all(t["inputSchema"]["type"] == "object" for t in tools)
    result = shim.call("vault_list", {})["result"]
    assert "structuredContent" not in result and json.loads(result["content"][0]["text"]) == {"vaults": []}


def test_an_unknown_tools_list_cursor_is_refused(shim: ShimProcess) -> None:
    """Regression: an unknown cursor got the whole list back; the spec asks for -32602."""
    shim.initialize()
    for cursor in ("nonsense", "", "MTA6MDAwMDAwMDAwMDAwMDAwMA", 5, None):
        reply = shim.request("tools/list", {"cursor": cursor})
        if cursor is None:
            assert "tools" in reply["result"]
            continue
        assert reply["error"]["code"] == -32602, (cursor, reply)
        assert "cursor" in reply["error"]["message"]
    shim.still_answers()


def test_tools_list_really_pages(daemon: Daemon, home: Home) -> None:
    whole = ShimProcess(home)
    paged = ShimProcess(home, env={"VAULTD_MCP_TOOLS_PAGE": "5"})
    try:
        whole.initialize()
        everything = whole.request("tools/list")["result"]
        assert "nextCursor" not in everything
        paged.initialize()
        names: list[str] = []
        reply = paged.request("tools/list")["result"]
        pages = 1
        while True:
            assert len(reply["tools"]) <= 5
            names += [t["name"] for t in reply["tools"]]
            if "nextCursor" not in reply:
                break
            cursor = reply["nextCursor"]
            reply = paged.request("tools/list", {"cursor": cursor})["result"]
            pages += 1
        assert names == [t["name"] for t in everything["tools"]]
        assert pages == -(-len(names) // 5) > 1
        tampered = paged.request("tools/list", {"cursor": cursor[:-1] + ("A" if cursor[-1] != "A" else "B")})
        assert tampered["error"]["code"] == -32602
    finally:
        assert whole.close() == 0 and paged.close() == 0


def test_2025_03_26_gets_no_structured_fields(shim: ShimProcess) -> None:
    shim.initialize("2025-03-26")
    tools = shim.request("tools/list")["result"]["tools"]
    assert tools and not any("outputSchema" in t or "title" in t for t in tools)
    result = shim.call("vault_list", {})["result"]
    assert "structuredContent" not in result and result["isError"] is False
    assert json.loads(result["content"][0]["text"]) == {"vaults": []}


def test_discover_answers_at_once(shim: ShimProcess) -> None:
    result = shim.request("server/discover", _envelope())["result"]
    assert result["supportedVersions"] == list(STATELESS_VERSIONS)
    assert result["resultType"] == "complete" and result["ttlMs"] >= 0 and result["cacheScope"] in ("public", "private")
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "vaultd"
    assert result["capabilities"]["tools"] is not None and len(result["instructions"].encode()) < MAX_INSTRUCTIONS_BYTES


@pytest.mark.parametrize("method", ["server/discover", "tools/list", "tools/call"])
def test_stateless_version_mismatch_is_32022(shim: ShimProcess, method: str) -> None:
    reply = shim.request(method, {**_envelope("2099-01-01"), "name": "vault_list"})
    assert reply["error"]["code"] == -32022
    assert reply["error"]["data"] == {"supported": list(ALL_VERSIONS), "requested": "2099-01-01"}
    shim.still_answers()


def test_a_version_that_is_not_a_string_is_invalid_params(shim: ShimProcess) -> None:
    bad = shim.request("tools/list", {"_meta": {PROTOCOL_VERSION_META_KEY: 20260728}})
    assert bad["error"]["code"] == -32602
    shim.still_answers()


def test_stateless_tools_list_and_call_carry_the_envelope_fields(shim: ShimProcess) -> None:
    listing = shim.request("tools/list", _envelope())["result"]
    assert listing["resultType"] == "complete" and listing["cacheScope"] == "private" and listing["ttlMs"] > 0
    result = shim.request("tools/call", {**_envelope(), "name": "vault_list", "arguments": {}})["result"]
    assert result["resultType"] == "complete" and result["structuredContent"] == {"vaults": []}
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "vaultd"


# -- tools ------------------------------------------------------------------------------------------


def test_unknown_tool_is_invalid_params(shim: ShimProcess) -> None:
    shim.initialize()
    reply = shim.call("no_such_tool", {})
    assert reply["error"]["code"] == -32602 and "no_such_tool" in reply["error"]["message"]
    reply = shim.request("tools/call", {"arguments": {}})
    assert reply["error"]["code"] == -32602
    shim.still_answers()


@pytest.mark.parametrize(
    "arguments, path",
    [
        ({"surely_not_a_field": 1}, "$.arguments.surely_not_a_field"),
        ([1, 2], "$.arguments"),
        ("text", "$.arguments"),
    ],
)
def test_bad_arguments_name_the_field(shim: ShimProcess, arguments: Any, path: str) -> None:
    shim.initialize()
    reply = shim.call("vault_list", arguments)
    error = reply["error"]
    assert error["code"] == -32602
    assert error["data"]["code"] == "INVALID_PARAMS" and error["data"]["issues"][0]["path"] == path
    shim.still_answers()


@pytest.mark.parametrize(
    "arguments, path",
    [
        ({"view": "vaults", "surely_not_a_field": 1}, "$.arguments.surely_not_a_field"),
        ({"view": "daemon", "limit": 3}, "$.arguments.limit"),  # no member of status takes it
        ({}, "$.arguments.view"),
        ({"view": "everything"}, "$.arguments.view"),
        ([1, 2], "$.arguments"),
        ("text", "$.arguments"),
    ],
)
def test_a_family_refuses_what_its_member_does_not_take(shim: ShimProcess, arguments: Any, path: str) -> None:
    shim.initialize()
    error = shim.call("status", arguments)["error"]
    assert error["code"] == -32602
    assert error["data"]["code"] == "INVALID_PARAMS" and error["data"]["issues"][0]["path"] == path
    assert shim.call("status", {"view": "vaults"})["result"]["structuredContent"] == {"vaults": []}


def test_the_log_override_is_not_a_tool_argument(shim: ShimProcess) -> None:
    """The CLI's log override is not offered to agents (they say why in ``reason``), and a call
    that sends it anyway is refused as for any key the schema does not offer, before the daemon."""
    shim.initialize()
    tools = shim.request("tools/list")["result"]["tools"]
    writes = [t for t in tools if "reason" in t["inputSchema"]["properties"]]
    assert writes and not any("log" in t["inputSchema"]["properties"] for t in tools)
    event = {"type": "LEARN", "source": "agent", "note": "hand-made"}
    reply = shim.call("note_create", {"path": "inbox/with-log", "log": event})
    error = reply["error"]
    assert error["code"] == -32602 and error["data"]["issues"][0]["path"] == "$.arguments.log"
    shim.still_answers()


def test_an_argument_of_the_wrong_type_names_its_path(shim: ShimProcess) -> None:
    typed = [s for s in METHODS.values() if s.mcp and "limit" in s.params.__struct_fields__]
    assert typed, "the table has tools with a limit argument"
    shim.initialize()
    reply = shim.call(typed[0].tool_name, {"limit": "ten"})
    assert reply["error"]["code"] == -32602
    assert reply["error"]["data"]["issues"][0]["path"] == "$.arguments.limit"
    shim.still_answers()


def test_absent_or_null_arguments_mean_none(shim: ShimProcess) -> None:
    shim.initialize()
    assert shim.call("vault_list")["result"]["structuredContent"] == {"vaults": []}
    explicit_null = shim.request("tools/call", {"name": "vault_list", "arguments": None})
    assert explicit_null["result"]["structuredContent"] == {"vaults": []}


def test_a_result_over_the_budget_is_cut_to_it_and_says_what_it_left_out(registered: str, home: Home) -> None:
    """A result over the shim's budget used to be refused LIMIT as a whole; now it is cut to the
    budget (here the smallest, 1 KiB: a smaller setting is raised to it) with a ``fitted`` note."""
    proc = ShimProcess(home, env={"VAULTD_MCP_MAX_RESULT_BYTES": "128"})
    try:
        proc.initialize()
        result = proc.call("note_list", {"limit": 500})["result"]
        text = result["content"][0]["text"]
        assert result["isError"] is False and len(text.encode()) <= 1024
        note = json.loads(text)["fitted"]
        assert note["budget"] == 1024 and note["bytes"] > 1024 and note["lowered"]["limit"] < 500
        assert note["next"] == {"cursor": json.loads(text)["next_cursor"], "limit": note["lowered"]["limit"]}
        proc.still_answers()
    finally:
        assert proc.close() == 0


def test_handshake_does_not_wait_for_a_daemon_and_calls_report_unavailable(home: Home) -> None:
    """No daemon and autostart off: the handshake still answers; a call says what to do."""
    proc = ShimProcess(home, env={"VAULTD_NO_AUTOSTART": "1"})
    try:
        assert proc.initialize()["result"]["serverInfo"]["name"] == "vaultd"
        assert "instructions" in proc.request("server/discover", _envelope())["result"]
        assert len(proc.request("tools/list")["result"]["tools"]) == len(ToolCatalogue().names)
        result = proc.call("vault_list", {})["result"]
        body = tool_error(result)
        assert body["code"] == "UNAVAILABLE" and "vaultctl daemon start" in body["message"]
        assert body["issues"] == [] and body["issues_omitted"] == 0 and body["candidates"] == []
        proc.still_answers()
    finally:
        assert proc.close() == 0
    assert "Traceback" not in proc.stderr()


def test_the_first_call_autostarts_the_daemon(home: Home, cli: Any) -> None:
    proc = ShimProcess(home)  # home.env leaves autostart on
    try:
        proc.initialize()
        result = proc.call("daemon_status", {})["result"]
        assert result["isError"] is False and result["structuredContent"]["socket"] == str(home.socket)
    finally:
        assert proc.close() == 0
        cli("daemon", "stop")


def test_a_restarted_daemon_is_reconnected(home: Home, cli: Any) -> None:
    first = Daemon(home)
    proc = ShimProcess(home, env={"VAULTD_NO_AUTOSTART": "1"})
    try:
        proc.initialize()
        assert proc.call("daemon_status", {})["result"]["structuredContent"]["pid"] == first.proc.pid
        first.stop()
        second = Daemon(home)
        try:
            assert proc.call("daemon_status", {})["result"]["structuredContent"]["pid"] == second.proc.pid
        finally:
            second.stop()
    finally:
        first.stop()
        assert proc.close() == 0


@pytest.mark.parametrize(("argument", "value"), [("explain", True), ("rerank", False)])
def test_a_ranking_knob_for_people_is_not_a_tool_argument(shim: ShimProcess, argument: str, value: bool) -> None:
    """``explain`` and ``rerank`` are for a person studying a ranking: not offered to agents, and
    refused when sent with any value but the one leaving them out gives."""
    shim.initialize()
    tools = {t["name"]: t for t in shim.request("tools/list")["result"]["tools"]}
    assert argument not in tools["note_retrieve"]["inputSchema"]["properties"]
    reply = shim.call("note_retrieve", {"query": "anything", argument: value})
    error = reply["error"]
    assert error["code"] == -32602 and error["data"]["issues"][0]["path"] == f"$.arguments.{argument}"
    shim.still_answers()


def test_a_read_only_tool_offers_no_argument_that_writes(shim: ShimProcess) -> None:
    """vault_lint is read-only to its host: its ``write`` (a report and a log line) is not offered,
    and a call that sends it is refused before the daemon, so a host that lets read-only tools run
    unasked never lets one write."""
    shim.initialize()
    tools = shim.request("tools/list")["result"]["tools"]
    read_only = [t for t in tools if t.get("annotations", {}).get("readOnlyHint")]
    assert any(t["name"] == "vault_lint" for t in read_only)
    assert not any("write" in t["inputSchema"]["properties"] for t in read_only)
    error = shim.call("vault_lint", {"write": True})["error"]
    assert error["code"] == -32602 and error["data"]["issues"][0]["path"] == "$.arguments.write"
    shim.still_answers()
