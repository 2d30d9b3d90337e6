"""Bad input on the socket gets a JSON-RPC error and the connection (and daemon) keep serving."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap

import pytest

from protocol.limits import MAX_FRAME_BYTES
from tests.support.harness import Daemon, RawClient


def _still_serves(client: RawClient) -> None:
    assert client.call("daemon.status")["pid"] > 0


def test_malformed_json_then_the_connection_still_works(raw: RawClient) -> None:
    raw.send_bytes(b'{"jsonrpc": "2.0", "id": 1, "method": \n')
    reply = raw.recv_message()
    assert reply["error"]["code"] == -32700 and reply["error"]["data"]["code"] == "PARSE_ERROR"
    _still_serves(raw)


def test_frame_over_the_bound(raw: RawClient) -> None:
    big = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "daemon.status", "params": {"x": "a" * MAX_FRAME_BYTES}})
    raw.send_bytes(big.encode() + b"\n")
    reply = raw.recv_message()
    assert reply["error"]["data"]["code"] == "LIMIT" and "bound on one request" in reply["error"]["message"]
    _still_serves(raw)


@pytest.mark.parametrize(
    "frame, code",
    [
        (b"[1, 2, 3]", -32600),
        (b'{"id": 4, "method": "daemon.status"}', -32600),  # no jsonrpc
        (b'{"jsonrpc": "1.0", "id": 4, "method": "daemon.status"}', -32600),
        (b'"just a string"', -32600),
        (b'{"jsonrpc": "2.0", "id": 4, "method": 7}', -32600),
    ],
)
def test_valid_json_but_not_jsonrpc(raw: RawClient, frame: bytes, code: int) -> None:
    raw.send_bytes(frame + b"\n")
    reply = raw.recv_message()
    assert reply["error"]["code"] == code
    _still_serves(raw)


def test_unknown_method(raw: RawClient) -> None:
    reply = raw.request("note.teleport", {})
    assert reply["error"]["code"] == -32601
    assert reply["error"]["data"]["code"] == "METHOD_NOT_FOUND"


def test_wrong_param_types_and_unknown_keys_name_the_field(raw: RawClient) -> None:
    reply = raw.request("vault.remove", {"id": 12})
    assert reply["error"]["code"] == -32602
    assert "$.params.id" in reply["error"]["message"]
    reply = raw.request("vault.remove", {"id": "x", "colour": "red"})
    assert reply["error"]["code"] == -32602 and "colour" in reply["error"]["message"]
    reply = raw.request("vault.list", [1, 2])
    assert reply["error"]["code"] == -32602


def test_calls_before_hello_are_refused(daemon: Daemon) -> None:
    c = RawClient(daemon.home.socket)
    reply = c.request("daemon.status")
    assert reply["error"]["code"] == -32600 and "hello" in reply["error"]["message"]
    assert c.hello()["result"]["protocol"] == 1
    _still_serves(c)


def test_hello_with_an_unknown_channel_is_refused(daemon: Daemon) -> None:
    c = RawClient(daemon.home.socket)
    reply = c.request("hello", {"client": "x", "version": "1", "channel": "telepathy"})
    assert reply["error"]["code"] == -32602


def test_pipelined_requests_each_get_their_id(raw: RawClient) -> None:
    frames = b"".join(json.dumps({"jsonrpc": "2.0", "id": i, "method": "daemon.status"}).encode() + b"\n" for i in range(100, 120))
    raw.send_bytes(frames)
    ids = {raw.recv_message()["id"] for _ in range(20)}
    assert ids == set(range(100, 120))


def test_silent_half_frame_and_vanishing_clients_do_not_stop_others(daemon: Daemon) -> None:
    silent = RawClient(daemon.home.socket)
    half = RawClient(daemon.home.socket)
    half.send_bytes(b'{"jsonrpc": "2.0", "id": 1, "meth')
    gone = RawClient(daemon.home.socket)
    gone.hello()
    gone.send_bytes(b'{"jsonrpc": "2.0", "id": 2, "method": "daemon.status"}\n')
    gone.sock.shutdown(socket.SHUT_RDWR)
    gone.close()
    half.close()
    other = RawClient(daemon.home.socket)
    other.hello()
    _still_serves(other)
    silent.close()
    assert daemon.proc.poll() is None


@pytest.mark.skipif(os.geteuid() != 0, reason="dropping to another uid needs root")
def test_a_client_of_another_uid_is_refused(daemon: Daemon) -> None:
    """Two layers: the 0700 folder keeps others out; past it, the peer-uid check still refuses."""
    script = textwrap.dedent(f"""
        import os, socket, sys
        os.setgid(65534); os.setuid(65534)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        try:
            s.connect({str(daemon.home.socket)!r})
        except PermissionError:
            print("EACCES"); sys.exit(0)
        try:
            s.sendall(b'{{"jsonrpc":"2.0","id":1,"method":"hello","params":{{"client":"x","version":"1","channel":"cli"}}}}\\n')
            print("REPLY" if s.recv(4096) else "CLOSED")
        except (ConnectionResetError, BrokenPipeError):
            print("CLOSED")
    """)
    blocked = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert blocked.stdout.strip() == "EACCES", blocked.stderr
    for folder in (daemon.home.root, daemon.home.socket.parent):
        os.chmod(folder, 0o711)
    os.chmod(daemon.home.socket, 0o666)
    try:
        past = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    finally:
        for folder in (daemon.home.root, daemon.home.socket.parent):
            os.chmod(folder, 0o700)
        os.chmod(daemon.home.socket, 0o600)
    assert past.stdout.strip() == "CLOSED", past.stderr
    log = (daemon.home.home / "logs" / "vaultd.log").read_text()
    assert "refused a connection from another user" in log and '"peer_uid": 65534' in log
    c = RawClient(daemon.home.socket)
    c.hello()
    _still_serves(c)
