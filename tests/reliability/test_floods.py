"""Floods at the perimeter, the fast slice: descriptors, the connection cap, hello, unread replies.

The long run is ``python -m reliability.stress.floods``. Each test starts its own daemon with its
limits in config.json, so an edge can be reached in seconds.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from reliability.stress.floods import (
    BIG_BODY_CHARS,
    LimitedDaemon,
    big_vault,
    close_all,
    closed_by_peer,
    fd_limits,
    flood,
    log_lines,
    pipeline_unread,
    readable_bytes,
    served,
    unread_pipelines,
    write_limits,
)
from tests.support.harness import Daemon, Home, RawClient

if TYPE_CHECKING:
    import socket
    from collections.abc import Iterator

MiB = 1024 * 1024


@pytest.fixture
def held() -> Iterator[list[socket.socket]]:
    socks: list[socket.socket] = []
    yield socks
    close_all(socks)


def test_a_flood_past_the_descriptor_limit_does_not_stop_the_daemon(home: Home, held: list[socket.socket]) -> None:
    """Regression: EMFILE from accept() ended serve(), and the daemon with it."""
    write_limits(home, max_connections=1000, hello_timeout_s=600)
    daemon = LimitedDaemon(home, soft=64, hard=128)
    try:
        assert fd_limits(daemon.proc.pid) == (128, 128), "the soft limit was not raised to the hard one"
        held += flood(home, 220)
        assert len(held) > 128, f"only {len(held)} connections: the flood never passed the limit"
        assert not served(home, timeout=1.0)  # out of descriptors: a new client waits in the backlog
        assert daemon.proc.poll() is None, "the daemon exited at the descriptor limit"
        close_all(held)
        assert served(home), "no fresh client was served after the flood closed"
    finally:
        daemon.stop()
    assert log_lines(home, "cannot accept connections for now") >= 1


def test_a_connection_over_the_cap_gets_one_error_line_naming_the_limit(home: Home, held: list[socket.socket]) -> None:
    write_limits(home, max_connections=8)
    daemon = Daemon(home)
    try:
        clients = [RawClient(home.socket) for _ in range(8)]
        for c in clients:
            c.hello()
        extra = RawClient(home.socket)
        reply = extra.recv_message()
        assert reply["error"]["data"]["code"] == "LIMIT", reply
        assert "8 connections" in reply["error"]["message"] and "max_connections" in reply["error"]["message"]
        assert closed_by_peer(extra.sock, 10), "the over-cap connection was left open"
        assert clients[0].call("daemon.status")["pid"] == daemon.proc.pid  # the held ones are unaffected
        clients.pop().close()
        # the daemon sees the close a moment later; until then a newcomer is still over the cap
        assert any(served(home, timeout=5) for _ in range(20)), "a freed place was not given to a new client"
    finally:
        daemon.stop()


def test_connections_that_never_say_hello_are_closed_after_the_timeout(home: Home, held: list[socket.socket]) -> None:
    write_limits(home, hello_timeout_s=1.0)
    daemon = Daemon(home)
    try:
        talker = RawClient(home.socket)
        talker.hello()
        held += flood(home, 20)
        assert len(held) == 20
        closed = sum(closed_by_peer(s, 30) for s in held)
        assert closed == 20, f"{20 - closed} idle connections were kept past the hello timeout"
        assert talker.call("daemon.status")["pid"] == daemon.proc.pid, "a session that said hello was closed"
    finally:
        daemon.stop()
    assert log_lines(home, "did not say hello in time") == 20


def test_clients_that_never_read_are_bounded_and_dropped(home: Home) -> None:
    """Regression: 40 non-reading clients took the daemon from 46 MiB to 1.7 GiB, and kept it;
    then, with replies bounded, the requests still being answered for them grew it (12: +180 MB)."""
    write_limits(home, reply_budget_bytes=4 * MiB, connection_reply_bytes=1 * MiB, send_timeout_s=3.0)
    daemon = Daemon(home)
    try:
        normal = RawClient(home.socket, timeout=30)
        normal.hello()
        normal.call("vault.add", {"id": "big", "path": str(big_vault(home))})
        one = normal.call("note.read", {"vault": "big", "target": "big.md", "max_bytes": 65536})
        assert len(json.dumps(one)) > 300_000  # each unread reply is that big: 12 × 48 of them is 220 MB

        def answers() -> bool:
            return "smallword" in normal.call("note.read", {"vault": "big", "target": "small.md"})["body"]

        report = unread_pipelines(home, daemon.proc.pid, "big", clients=12, depth=48, send_timeout=3.0, during=answers)
        grown_mib = (report["rss_peak_kib"] - report["rss_before_kib"]) / 1024
        # 4 MiB of replies, one share over it for small ones, plus the reads and encodes in progress
        assert grown_mib < 24, report
        assert report["normal_ok"] == report["normal_checks"] > 0, report
        assert report["dropped"] == 12, report
        assert answers()
    finally:
        daemon.stop()
    assert log_lines(home, "dropped a client that read none of a reply") == 12
    stopped = [json.loads(ln) for ln in (home.home / "logs" / "vaultd.log").read_text().splitlines() if '"event": "stopped"' in ln]
    assert stopped and 0 < stopped[-1]["peak_reply_bytes"] <= 5 * MiB, stopped  # total + one share


BIG_READ = {"vault": "big", "target": "big.md", "max_bytes": 65536}


def raw_reply(c: RawClient, request_id: int, params: dict[str, object]) -> bytes:
    """One note.read's reply frame as the daemon sent it, newline included."""
    c.send_bytes(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "note.read", "params": params}).encode() + b"\n")
    return c.recv_line()


def big_reply_size(home: Home) -> int:
    """The exact size of the big read's reply frame (for ids of one digit), from a daemon with the
    default limits."""
    daemon = Daemon(home)
    try:
        c = RawClient(home.socket, timeout=30)
        c.hello()
        c.call("vault.add", {"id": "big", "path": str(big_vault(home))})
        size = len(raw_reply(c, 7, BIG_READ))
        c.close()
    finally:
        daemon.stop()
    return size


def reader(home: Home) -> RawClient:
    c = RawClient(home.socket, timeout=30)
    c.hello()
    return c


def test_a_reply_over_one_connections_share_gets_a_limit_error_and_one_of_exactly_it_is_sent(home: Home) -> None:
    size = big_reply_size(home)
    write_limits(home, connection_reply_bytes=size - 1)
    daemon = Daemon(home)
    try:
        reply = json.loads(raw_reply(reader(home), 7, BIG_READ))
        assert reply["error"]["data"]["code"] == "LIMIT", reply
        message = reply["error"]["message"]
        assert f"the reply is {size} bytes, over the {size - 1}-byte limit" in message, message
        assert "connection_reply_bytes" in message and "max_bytes" in message, message
    finally:
        daemon.stop()
    write_limits(home, connection_reply_bytes=size)
    daemon = Daemon(home)
    try:
        assert len(raw_reply(reader(home), 7, BIG_READ)) == size, "a reply of exactly the share was refused"
    finally:
        daemon.stop()


def test_pipelined_replies_of_a_whole_share_each_wait_their_turn_instead_of_failing(home: Home) -> None:
    """Regression: with one reply filling the share, the second of a pipeline got a LIMIT error.
    A connection that holds nothing always runs its next request, so each one waits for the last."""
    size = big_reply_size(home)
    write_limits(home, connection_reply_bytes=size)
    daemon = Daemon(home)
    try:
        c = reader(home)
        frames = b"".join(
            json.dumps({"jsonrpc": "2.0", "id": i, "method": "note.read", "params": BIG_READ}).encode() + b"\n" for i in range(1, 7)
        )
        c.send_bytes(frames)
        replies = [c.recv_message() for _ in range(6)]
        assert sorted(r["id"] for r in replies) == list(range(1, 7))
        assert [r.get("error") for r in replies] == [None] * 6, [r.get("error") for r in replies]
        assert all(r["result"]["size"] == BIG_BODY_CHARS + len("# Big\n\n\n") for r in replies)
    finally:
        daemon.stop()


def test_a_normal_client_is_served_while_non_readers_hold_the_whole_budget(home: Home) -> None:
    size = big_reply_size(home)
    # two non-readers' replies fill the total: no third one fits beside them
    write_limits(home, reply_budget_bytes=2 * size + 1000, connection_reply_bytes=size + 1000, send_timeout_s=60)
    daemon = Daemon(home)
    stalled: list[socket.socket] = []
    try:
        stalled += [pipeline_unread(home, "big", 8) for _ in range(2)]
        for s in stalled:  # each has its first reply stuck in the socket: its buffer holds part of it
            while readable_bytes(s) < 100_000:
                assert not closed_by_peer(s, 0.05), "a non-reader was dropped before its send timeout"
        normal = reader(home)
        refused = json.loads(raw_reply(normal, 7, BIG_READ))
        assert refused["error"]["data"]["code"] == "LIMIT", refused
        assert "the daemon's queued replies are full" in refused["error"]["message"], refused
        for _ in range(5):
            body = normal.call("note.read", {"vault": "big", "target": "small.md"})["body"]
            assert "smallword" in body
        assert normal.call("daemon.status")["pid"] == daemon.proc.pid
        assert not any(closed_by_peer(s, 0.2) for s in stalled), "the non-readers no longer hold the budget"
    finally:
        close_all(stalled)
        daemon.stop()
