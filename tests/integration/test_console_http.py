"""The console's perimeter over plain HTTP, against a real daemon and its real console process:
sign-in, cookies, Host and Origin checks, CSRF, the methods it may call, its headers, what it
logs, and its life as a child of the daemon (a console that dies or hangs costs the daemon
nothing; it never outlives the daemon)."""

from __future__ import annotations

import os
import signal
import time
from typing import TYPE_CHECKING

import pytest

from tests.support.console_http import Console, open_console
from tests.support.harness import Daemon, Home, RawClient, assert_alive, copy_sample_vault, register, vaultctl
from tests.support.wait import wait_until

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by the daemon) is not alive
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


@pytest.fixture(scope="module")
def site() -> Iterator[tuple[Home, Daemon, Path]]:
    home = Home.create()
    daemon = Daemon(home)
    try:
        vault = copy_sample_vault(home.vault)
        register(home, vault, "sample")
        yield home, daemon, vault
    finally:
        daemon.stop()
        home.cleanup()


@pytest.fixture(scope="module")
def console(site: tuple[Home, Daemon, Path]) -> Console:
    """One signed-in page for the checks that change nothing about it."""
    return open_console(site[0]).sign_in()


def test_the_token_signs_in_once_and_sets_a_strict_http_only_cookie(site: tuple[Home, Daemon, Path]) -> None:
    fresh = open_console(site[0])
    assert fresh.origin.startswith("http://127.0.0.1:") and "#token=" in fresh.url and fresh.url.endswith("&vault=sample")
    first = fresh.request("POST", "/api/login", {"token": fresh.token}, {"Origin": fresh.origin})
    assert first.status == 200 and first.json() == {"vault": "sample"}
    (cookie,) = first.cookies
    flags = {part.strip().lower() for part in cookie.split(";")[1:]}
    assert {"httponly", "samesite=strict", "path=/"} <= flags and not any(f.startswith(("max-age", "expires", "domain")) for f in flags)
    again = fresh.request("POST", "/api/login", {"token": fresh.token}, {"Origin": fresh.origin})
    assert again.status == 403 and "used already or has expired" in again.json()["error"]["message"]
    wrong = fresh.request("POST", "/api/login", {"token": "x" * 43}, {"Origin": fresh.origin})
    assert wrong.status == 403 and not wrong.cookies


def test_the_console_listens_on_loopback_only(console: Console) -> None:
    listening = []
    with open("/proc/net/tcp", encoding="ascii") as table:
        for row in table.read().splitlines()[1:]:
            local, state = row.split()[1], row.split()[3]
            if state == "0A" and int(local.split(":")[1], 16) == console.port:
                listening.append(local.split(":")[0])
    assert listening == ["0100007F"], listening  # 127.0.0.1, and nothing else (no 0.0.0.0)


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/"), ("GET", "/api/session"), ("GET", "/api/events?vault=sample"), ("GET", "/static/app.js"), ("POST", "/api/call")],
)
def test_without_the_cookie_nothing_but_the_sign_in_page_answers(console: Console, method: str, path: str) -> None:
    body = {"method": "note.search", "params": {"query": "alpha"}} if method == "POST" else None
    reply = console.request(method, path, body, {"Origin": console.origin, "X-Console-CSRF": console.csrf})
    assert reply.status == 401, (path, reply.status)
    assert b"Alpha" not in reply.body
    assert console.request("GET", "/login").status == 200
    assert console.request("GET", "/static/login.js").status == 200


@pytest.mark.parametrize("host", ["localhost:{port}", "evil.example", "evil.example:{port}", "127.0.0.1:1", "127.0.0.1", None])
def test_another_host_header_is_refused_even_with_the_cookie(console: Console, host: str | None) -> None:
    """DNS rebinding: a name pointed at 127.0.0.1 arrives with its own Host header."""
    named = None if host is None else host.format(port=console.port)
    reply = console.request("GET", "/api/session", headers={"Host": named or "", "Cookie": console.cookie})
    assert reply.status in (421, 400), reply.status
    assert b"csrf" not in reply.body


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "http://127.0.0.1:1"},
        {"Origin": "null"},
        {"Origin": None},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ],
)
def test_a_change_from_another_origin_or_site_is_refused(console: Console, headers: dict[str, str | None]) -> None:
    sent = {**console.signed(), **headers}
    reply = console.request("POST", "/api/call", {"method": "op.list", "params": {}}, {k: v for k, v in sent.items() if v is not None})
    assert reply.status == 403, reply.body
    assert b'"ops"' not in reply.body


@pytest.mark.parametrize("csrf", [None, "", "wrong"])
def test_a_change_without_the_pages_csrf_value_is_refused(console: Console, csrf: str | None) -> None:
    headers = console.signed()
    headers.pop("X-Console-CSRF")
    if csrf is not None:
        headers["X-Console-CSRF"] = csrf
    reply = console.request("POST", "/api/call", {"method": "op.list", "params": {}}, headers)
    assert reply.status == 403 and "CSRF" in reply.json()["error"]["message"]


def test_only_json_is_accepted_and_bodies_are_bounded(console: Console) -> None:
    form = console.request("POST", "/api/call", b"method=op.list", console.signed({"Content-Type": "application/x-www-form-urlencoded"}))
    assert form.status == 415
    big = console.request("POST", "/api/call", {"method": "note.search", "params": {"query": "x" * 70_000}}, console.signed())
    assert big.status == 413


@pytest.mark.parametrize(
    "method",
    ["note.patch", "note.create", "vault.set", "vault.remove", "daemon.stop", "console.open", "log.append", "lint.fix", "graph.canvas"],
)
def test_the_console_calls_only_its_own_methods(console: Console, method: str) -> None:
    reply = console.call(method, {})
    assert reply.status == 403 and "does not call" in reply.json()["error"]["message"]


def test_a_read_passes_and_a_daemon_refusal_keeps_its_code(console: Console) -> None:
    found = console.call("note.search", {"vault": "sample", "query": "bigrams"})
    assert found.status == 200 and found.json()["result"]["hits"][0]["path"] == "projects/alpha/Alpha Plan.md"
    missing = console.call("proposal.show", {"vault": "sample", "id": "p20260101000000-00000000"})
    assert missing.status == 404 and missing.json()["error"]["code"] == "NOT_FOUND"
    unknown = console.call("note.search", {"vault": "sample", "query": "x", "surely_not": 1})
    assert unknown.status == 400 and unknown.json()["error"]["code"] == "INVALID_PARAMS"


def test_every_answer_carries_the_policy_headers(console: Console) -> None:
    answers = [
        console.request("GET", "/", headers={"Cookie": console.cookie}),
        console.request("GET", "/login"),
        console.request("GET", "/"),  # 401
        console.request("GET", "/", headers={"Host": "evil.example"}),  # 421
    ]
    for reply in answers:
        csp = reply.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
        assert reply.headers["x-frame-options"] == "DENY" and reply.headers["referrer-policy"] == "no-referrer"
        assert reply.headers["cache-control"] == "no-store" and reply.headers["x-content-type-options"] == "nosniff"
        assert "server" not in reply.headers
    page = answers[0].body.decode()
    assert '<script type="module" src="/static/app.js"></script>' in page
    assert "<script>" not in page and " on" not in page.replace("one", ""), "no inline script or handler in the page"


def test_the_feed_resumes_after_the_last_event_id(site: tuple[Home, Daemon, Path], console: Console) -> None:
    home, _, vault = site
    first = _feed(console, None, until=lambda text: '"fresh"' in text, after=lambda: None)
    assert '"fresh":true' in first
    note = vault / "inbox" / "Ideas.md"
    seen = _feed(console, None, until=lambda text: "note.changed" in text, after=lambda: note.write_text(note.read_text() + "- one\n"))
    clock = next(line.removeprefix("id: ") for line in seen.splitlines() if line.startswith("id: "))
    note.write_text(note.read_text() + "- two\n")
    reader = RawClient(home.socket)  # a fresh read answers once the daemon has seen the second change
    reader.hello()
    reader.call("note.read", {"vault": "sample", "target": "inbox/Ideas.md", "fresh": True})
    replay = _feed(console, clock, until=lambda text: "note.changed" in text, after=lambda: None)
    assert '"fresh":false' in replay and f"id: {clock}\n" not in replay and "note.changed" in replay


def _feed(console: Console, last_id: str | None, until: object, after: object) -> str:
    """Read the SSE feed until ``until(text)`` holds (calling ``after()`` once it is subscribed)."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", console.port, timeout=10)
    headers = {"Host": f"127.0.0.1:{console.port}", "Cookie": console.cookie}
    if last_id:
        headers["Last-Event-ID"] = last_id
    conn.request("GET", "/api/events?vault=sample", headers=headers)
    response = conn.getresponse()
    assert response.status == 200 and response.getheader("content-type", "").startswith("text/event-stream")
    text, called = "", False
    deadline = time.monotonic() + 10
    try:
        while not until(text):  # type: ignore[operator]
            assert time.monotonic() < deadline, text
            line = response.readline().decode()
            text += line
            if not called and "event: subscribed" in text and line == "\n":
                called = True
                after()  # type: ignore[operator]
    finally:
        conn.close()
    return text


def test_no_token_or_cookie_value_reaches_a_log(site: tuple[Home, Daemon, Path], console: Console) -> None:
    cookie_value = console.cookie.split("=", 1)[1]
    used = open_console(site[0])
    used.request("POST", "/api/login", {"token": used.token}, {"Origin": used.origin})
    used.request("POST", "/api/login", {"token": used.token}, {"Origin": used.origin})  # refused: logged, without it
    home = site[0]
    logs = [home.log_file, home.home / "logs" / "console.log", home.root / "daemon.out"]
    text = "".join(p.read_text(errors="replace") for p in logs if p.exists())
    assert "refused a sign-in" in text
    for secret in (console.token, used.token, cookie_value, console.csrf):
        assert secret not in text


def test_an_agent_cannot_open_the_console(site: tuple[Home, Daemon, Path]) -> None:
    agent = RawClient(site[0].socket)
    agent.hello(channel="mcp")
    reply = agent.request("console.open", {})
    assert reply["error"]["data"]["code"] == "POLICY" and "url" not in str(reply)


# -- the console as the daemon's child ----------------------------------------------------------


def test_a_killed_console_costs_the_daemon_nothing_and_comes_back(home: Home, daemon: Daemon, sample_vault: Path) -> None:
    first = open_console(home)
    os.kill(first.pid, signal.SIGKILL)
    wait_until(lambda: not _alive(first.pid), 10, "the console gone")
    assert_alive(home, daemon)
    second = open_console(home)
    assert second.pid != first.pid and second.sign_in().call("daemon.status", {}).status == 200


def test_a_hung_console_does_not_stall_the_daemon(home: Home, daemon: Daemon, sample_vault: Path) -> None:
    stuck = open_console(home)
    os.kill(stuck.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        assert_alive(home, daemon)
        assert vaultctl(home, "status").code == 0
        assert time.monotonic() - started < 5, "the daemon answers others while its console hangs"
    finally:
        os.kill(stuck.pid, signal.SIGCONT)


def test_the_console_stops_with_the_daemon_and_on_request(home: Home, sample_vault: Path) -> None:
    daemon = Daemon(home)
    try:
        one = open_console(home)
        assert open_console(home).pid == one.pid, "one console per daemon"
        stopped = vaultctl(home, "console", "--stop")
        assert stopped.code == 0 and "console stopped" in stopped.out
        wait_until(lambda: not _alive(one.pid), 10, "the console gone after --stop")
        assert vaultctl(home, "console", "--stop").out.strip() == "no console was running"
        two = open_console(home)
    finally:
        daemon.stop()
    wait_until(lambda: not _alive(two.pid), 10, "the console gone with its daemon")


def test_a_killed_daemon_takes_its_console_with_it(home: Home, sample_vault: Path) -> None:
    daemon = Daemon(home)
    try:
        console = open_console(home)
        daemon.stop(signal.SIGKILL)
        wait_until(lambda: not _alive(console.pid), 10, "the console gone once its control pipe closed")
    finally:
        daemon.stop()


@pytest.mark.slow
def test_a_console_that_stops_answering_is_replaced(home: Home, daemon: Daemon) -> None:
    """A hung console fails one console.open within its bound (UNAVAILABLE), is killed, and the
    next console.open starts a fresh one; the daemon answers everyone else meanwhile."""
    stuck = open_console(home)
    os.kill(stuck.pid, signal.SIGSTOP)
    started = time.monotonic()
    refused = vaultctl(home, "console", "--no-open", "--json")
    assert refused.code == 69 and "the console did not answer" in refused.err, refused.err
    assert time.monotonic() - started < 15
    wait_until(lambda: not _alive(stuck.pid), 10, "the hung console killed")
    assert_alive(home, daemon)
    assert open_console(home).pid != stuck.pid
