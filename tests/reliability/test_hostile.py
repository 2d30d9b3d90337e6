"""Hostile input, the fast slice: fuzzed frames and params, a vault of hostile files.

The long run is ``python -m reliability.stress.hostile``; both share the strategies and checks in
``reliability/stress``. Every reply is a JSON-RPC result or a structured error (never INTERNAL),
and the daemon keeps serving.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from reliability.stress.fuzz import Raw, encode
from reliability.stress.harness import SHIM
from reliability.stress.hostile import Tally, fuzz_frames, fuzz_params, hostile_vault_round
from tests.support.harness import REPO, Daemon, Home, RawClient, assert_alive


@pytest.mark.parametrize("depth", [1000, 100_000])
def test_deep_nesting_in_a_frame_is_a_parse_error_not_a_crash(shared: tuple[Home, Daemon], depth: int) -> None:
    """Regression: msgspec's RecursionError escaped decode_request and stopped the whole daemon."""
    home, daemon = shared
    c = RawClient(home.socket)
    c.hello()
    deep = '{"a":' * depth + "1" + "}" * depth
    c.send_bytes(f'{{"jsonrpc":"2.0","id":1,"method":"note.create","params":{{"path":"x","frontmatter":{deep}}}}}\n'.encode())
    reply = c.recv_message()
    assert reply["error"]["data"]["code"] == "PARSE_ERROR"
    c.send_bytes(b'{"jsonrpc":"2.0","id":2,"method":7,"x":' + b"[" * depth + b"]" * depth + b"}\n")
    assert c.recv_message()["error"]["code"] in (-32700, -32600)
    assert_alive(home, daemon)


def test_fuzzed_frames_get_structured_replies(shared: tuple[Home, Daemon]) -> None:
    home, daemon = shared
    tally = Tally()
    fuzz_frames(home, 60, tally)
    assert tally.failures == []
    assert tally.counts["frames.sent"] >= 60
    assert_alive(home, daemon)


def test_fuzzed_params_of_every_method_get_structured_replies(shared: tuple[Home, Daemon]) -> None:
    home, daemon = shared
    tally = Tally()
    fuzz_params(home, 400, tally)
    assert tally.failures == []
    assert tally.counts["params.sent"] == 400
    assert_alive(home, daemon)


def test_nan_huge_and_unknown_values_in_write_params(shared: tuple[Home, Daemon]) -> None:
    home, daemon = shared
    vault = home.root / "plain"
    vault.mkdir(exist_ok=True)
    c = RawClient(home.socket)
    c.hello()
    c.call("vault.add", {"id": "plain", "path": str(vault)})
    cases = [
        {"vault": "plain", "path": "n1", "frontmatter": {"x": Raw("NaN")}},
        {"vault": "plain", "path": "n2", "frontmatter": {"x": Raw("1e999")}},
        {"vault": "plain", "path": "n3", "body": "- " * 100_000 + "x\n"},
        {"vault": "plain", "path": "n4", "frontmatter": {"k": "v" * 900_000}},
        {"vault": "plain", "path": "n5", "colour": "red"},
        {"vault": "plain", "path": "\ud800"},
    ]
    for params in cases:
        c.send_bytes(encode({"jsonrpc": "2.0", "id": 3, "method": "note.create", "params": params}))
        reply = c.recv_message()
        assert ("result" in reply) or reply["error"]["data"]["code"] != "INTERNAL", reply
    assert_alive(home, daemon)


def test_a_vault_of_hostile_files(shared: tuple[Home, Daemon]) -> None:
    home, daemon = shared
    tally = Tally()
    started = time.monotonic()
    facts = hostile_vault_round(home, daemon, "hostile", tally, folder_loop=False, filler=200)
    assert tally.failures == [], tally.failures
    assert tally.counts["vault.expected_skips_checked"] == 7 and tally.counts["vault.watcher_checks"] == 1
    assert facts["flips"].get("flip.to_folder", 0) > 0, "the folder race never ran during vault.add"
    assert time.monotonic() - started < 60
    assert_alive(home, daemon)


def test_a_folder_link_back_up_does_not_confuse_the_watcher(shared: tuple[Home, Daemon]) -> None:
    home, daemon = shared
    vault = home.root / "looped"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n\nalpha\n")
    os.symlink("..", vault / "up")
    c = RawClient(home.socket)
    c.hello()
    c.call("vault.add", {"id": "looped", "path": str(vault)})
    (vault / "b.md").write_text("# B\n\nloopedbetaword\n")
    hits = c.call("note.search", {"vault": "looped", "query": "loopedbetaword", "fresh": True})["hits"]
    assert [h["path"] for h in hits] == ["b.md"]


@pytest.mark.parametrize(
    "method, params",
    [
        ("note.create", {"path": "a\u0000b"}),
        ("note.read", {"target": "a\u0000b.md"}),
    ],
)
def test_a_nul_byte_in_a_path_is_refused_as_invalid(shared: tuple[Home, Daemon], method: str, params: dict) -> None:  # type: ignore[type-arg]
    home, daemon = shared
    vault = home.root / "nul"
    vault.mkdir(exist_ok=True)
    c = RawClient(home.socket)
    c.hello()
    if "nul" not in [v["entry"]["id"] for v in c.call("vault.list")["vaults"]]:
        c.call("vault.add", {"id": "nul", "path": str(vault)})
    reply = c.request(method, {"vault": "nul", **params})
    assert_alive(home, daemon)
    assert reply["error"]["data"]["code"] in ("INVALID_PARAMS", "VALIDATION", "NOT_FOUND"), reply


def test_deep_nesting_into_the_mcp_shim_is_a_parse_error(shared: tuple[Home, Daemon]) -> None:
    """Regression: the shim's frame decoder let RecursionError out and the shim exited."""
    home, _ = shared
    deep = b'{"a":' * 5000 + b"1" + b"}" * 5000
    frames = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"vault_list","arguments":'
        + deep
        + b"}}\n"
        + b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n'
    )
    proc = subprocess.run([*SHIM], input=frames, capture_output=True, env=home.env, cwd=REPO, timeout=60)
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 0, proc.stderr[-500:]
    assert replies[0]["error"]["code"] == -32700 and replies[1] == {"jsonrpc": "2.0", "id": 2, "result": {}}
