"""The bound on one request agrees with the bound on a note: a whole note is writable through
``vaultctl`` and the MCP shim whatever its bytes cost as JSON, and a request over a bound is
refused at once as LIMIT, never left to the client's reply timeout.

The costliest note to send is one of control characters: JSON writes each as ``\\u0001``, six
bytes for one. Each bound is tried at its edge, and a daemon configured with a lower frame bound
stands for any daemon that discards a request unread: its answer carries no id, and the client,
with one request outstanding, takes it as its own.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anyio
import msgspec
import pytest

from protocol.envelope import Request, encode
from protocol.limits import MAX_FRAME_BYTES, MAX_JSON_ESCAPE, MAX_NOTE_BYTES, MiB
from tests.support.agent import agent, ok
from tests.support.harness import Daemon, Home, RawClient, vaultctl
from tests.support.mcp_results import tool_error
from vaultctl.client import CallError, connect

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

WORST = "\x01"  #: one byte of UTF-8, six of JSON
LOWER_FRAME = 1 * MiB


def _write_limits(home: Home, **limits: Any) -> None:
    """``"daemon": {...}`` in the home's config.json, before the daemon starts."""
    home.home.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = home.home / "config.json"
    path.write_text(json.dumps({"version": 1, "daemon": limits}))
    path.chmod(0o600)


def _add_vault(home: Home, cli: Any) -> Path:
    root = home.root / "vault"
    root.mkdir()
    (root / "Seed.md").write_text("# Seed\n")
    added = cli("vault", "add", "v", str(root))
    assert added.code == 0, added.err
    return root


@pytest.fixture
def vault(daemon: Daemon, home: Home, cli: Any) -> Path:
    return _add_vault(home, cli)


@pytest.fixture
def lower_frame(home: Home) -> Iterator[Path]:
    """A daemon whose frame bound (config.json) is lower than what the client may send."""
    _write_limits(home, max_frame_bytes=LOWER_FRAME)
    daemon = Daemon(home)
    try:
        yield _add_vault(home, lambda *a: vaultctl(home, *a))
    finally:
        daemon.stop()


def _body_file(home: Home, name: str, size: int) -> Path:
    path = home.root / name
    path.write_bytes(WORST.encode() * size)
    return path


def test_the_frame_bound_holds_a_whole_note_of_the_costliest_bytes() -> None:
    params = {"vault": "v", "path": "p" * 1024, "title": "t" * 512, "body": WORST * MAX_NOTE_BYTES, "reason": "r" * 200}
    frame = encode(Request(jsonrpc="2.0", method="note.create", params=msgspec.Raw(msgspec.json.encode(params)), id=2**53))
    assert len(frame) > MAX_JSON_ESCAPE * MAX_NOTE_BYTES
    assert len(frame) <= MAX_FRAME_BYTES


def _frontmatter_bytes(vault: Path, cli: Any) -> int:
    """What a create adds to the body it is given (its frontmatter: the dates it stamps)."""
    made = cli("new", "probe", "--body", "-", "--vault", "v", input="")
    assert made.code == 0, made.err
    return (vault / "probe.md").stat().st_size


@pytest.mark.parametrize("over", [0, 1])
def test_vaultctl_writes_a_whole_note_and_refuses_one_byte_more(vault: Path, home: Home, cli: Any, over: int) -> None:
    body = _body_file(home, "body.md", MAX_NOTE_BYTES - _frontmatter_bytes(vault, cli) + over)
    made = cli("new", "big", "--body", str(body), "--vault", "v", "--json", timeout=180)
    if not over:
        assert made.code == 0, made.err
        written = (vault / "big.md").read_bytes()
        assert len(written) == MAX_NOTE_BYTES and written.endswith(body.read_bytes())
        return
    assert made.code == 1, made.err
    assert f"big.md would be {MAX_NOTE_BYTES + 1} bytes; a note may be {MAX_NOTE_BYTES}" in made.err, made.err
    assert not (vault / "big.md").exists()


@pytest.mark.parametrize("over", [0, 1])
def test_the_client_sends_a_frame_at_the_bound_and_refuses_one_byte_more(
    vault: Path, home: Home, over: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULTD_HOME", str(home.home))
    monkeypatch.setenv("VAULTD_SOCKET", str(home.socket))

    def frame_of(pad: int) -> int:
        request = Request(jsonrpc="2.0", method="note.create", params=msgspec.Raw(msgspec.json.encode(_params(pad))), id=2)
        return len(encode(request)) - 1  # the newline ends the frame; it is not part of it

    def _params(pad: int) -> dict[str, Any]:
        return {"vault": "v", "path": "edge", "body": "a" * pad}

    pad = MAX_FRAME_BYTES - frame_of(0) + over  # one JSON byte per character
    assert frame_of(pad) == MAX_FRAME_BYTES + over
    with connect(autostart=False, timeout=120) as client:  # the client's second request has id 2
        with pytest.raises(CallError) as refused:
            client.call_raw("note.create", _params(pad))
        data = refused.value.data
        if over:
            assert data.code == "LIMIT" and "over the 16 MiB bound on one request; nothing was sent" in data.message, data
        else:  # the daemon read it, and refused the body (over the note bound)
            assert data.code == "INVALID_PARAMS" and "$.params.body" in data.message, data
        assert client.call_raw("daemon.status")  # the connection still serves
    assert not (vault / "edge.md").exists()


@pytest.mark.parametrize("over", [0, 1])
def test_the_daemon_reads_a_frame_at_its_bound_and_discards_one_byte_more(daemon: Daemon, home: Home, over: int) -> None:
    raw = RawClient(home.socket, timeout=120)
    raw.hello()
    head = b'{"jsonrpc":"2.0","id":9,"method":"daemon.status","params":{"x":"'
    tail = b'"}}'
    raw.send_bytes(head + b"a" * (MAX_FRAME_BYTES + over - len(head) - len(tail)) + tail + b"\n")
    reply = raw.recv_message()
    if over:
        assert reply["id"] is None
        assert reply["error"]["data"]["code"] == "LIMIT" and "nothing applied" in reply["error"]["message"], reply
    else:
        assert reply["id"] == 9 and reply["error"]["data"]["code"] == "INVALID_PARAMS", reply
    assert raw.call("daemon.status")["pid"] == daemon.pid


def test_vaultctl_ends_at_once_on_a_frame_error_without_an_id(lower_frame: Path, home: Home) -> None:
    body = _body_file(home, "body.md", LOWER_FRAME // MAX_JSON_ESCAPE + 1)  # a legal note, over that daemon's bound
    # The default reply timeout is 60 s: an answer the client did not take as its own would end
    # in "did not answer ... may still have been applied" instead.
    made = vaultctl(home, "new", "big", "--body", str(body), "--vault", "v", timeout=180)
    assert made.code == 1, made.err
    assert "1 MiB bound on one request" in made.err and "nothing applied" in made.err, made.err
    assert "may still have been applied" not in made.err
    assert not (lower_frame / "big.md").exists()
    again = vaultctl(home, "new", "small", "--body", "-", "--vault", "v", input="# small\n")
    assert again.code == 0, again.err


def _mcp_create(home: Home, body: str, path: str) -> Any:
    async def run() -> Any:
        async with agent(home) as client:
            return await client.call_tool("note_create", {"vault": "v", "path": path, "body": body})

    return anyio.run(run)


@pytest.mark.parametrize("over", [0, 1])
def test_an_agent_writes_a_whole_note_and_is_refused_one_byte_more(vault: Path, home: Home, cli: Any, over: int) -> None:
    body = WORST * (MAX_NOTE_BYTES - _frontmatter_bytes(vault, cli) + over)
    result = _mcp_create(home, body, "agent-big")
    if not over:
        assert ok(result)["op_id"]
        written = (vault / "agent-big.md").read_bytes()
        assert len(written) == MAX_NOTE_BYTES and written.endswith(body.encode())
        return
    error = tool_error(result)
    assert error["code"] == "LIMIT" and f"would be {MAX_NOTE_BYTES + 1} bytes" in error["message"], error
    assert not (vault / "agent-big.md").exists()


def test_the_shim_ends_at_once_on_a_frame_error_without_an_id(lower_frame: Path, home: Home) -> None:
    error = tool_error(_mcp_create(home, WORST * (LOWER_FRAME // MAX_JSON_ESCAPE + 1), "agent-big"))
    assert error["code"] == "LIMIT" and "1 MiB bound on one request" in error["message"], error
    assert not (lower_frame / "agent-big.md").exists()
