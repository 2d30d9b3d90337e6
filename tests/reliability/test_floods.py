"""Floods at the perimeter, the fast slice: descriptors, the connection cap, hello, unread replies.

The long run is ``python -m reliability.stress.floods``. Each test starts its own daemon with its
limits in config.json, so an edge can be reached in seconds.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

from reliability.stress.floods import (
    LimitedDaemon, big_vault, close_all, closed_by_peer, fd_limits, flood, log_lines, served, unread_pipelines,
    write_limits,
)
from tests.support.harness import Daemon, Home, RawClient

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


def test_a_connection_over_the_cap_gets_one_error_line_naming_the_limit(home: Home,
                                                                        held: list[socket.socket]) -> None:
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


def test_connections_that_never_say_hello_are_closed_after_the_timeout(home: Home,
                                                                      held: list[socket.socket]) -> None:
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


@pytest.mark.slow  # runs into its 120 s timeout while the bound is open; make test-long keeps it
@pytest.mark.xfail(strict=True, reason="the reply budget bounds queued replies only; requests still being "
                   "answered for non-reading clients grow RSS with the number of connections (12 clients: +180 MB)")
def test_clients_that_never_read_are_bounded_and_dropped(home: Home) -> None:
    """Regression: 40 non-reading clients took the daemon from 46 MiB to 1.7 GiB, and kept it."""
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

        report = unread_pipelines(home, daemon.proc.pid, "big", clients=12, depth=48, send_timeout=3.0,
                                  during=answers)
        grown_mib = (report["rss_peak_kib"] - report["rss_before_kib"]) / 1024
        assert grown_mib < 80, report  # 4 MiB of queued replies, plus the reads and encodes in progress
        assert report["normal_ok"] == report["normal_checks"] > 0, report
        assert report["dropped"] == 12, report
        assert answers()
    finally:
        daemon.stop()
    assert log_lines(home, "dropped a client that read none of a reply") == 12
