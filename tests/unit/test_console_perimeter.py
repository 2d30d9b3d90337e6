"""Which requests may reach the console: Host, Origin and Sec-Fetch-Site, as a pure decision."""

from __future__ import annotations

import pytest

from vaultctl.console.perimeter import CSP, refusal

ORIGIN = "http://127.0.0.1:4321"


def scope(method: str = "GET", **headers: str) -> dict[str, object]:
    return {"type": "http", "method": method, "headers": [(k.replace("_", "-").lower().encode(), v.encode()) for k, v in headers.items()]}


@pytest.mark.parametrize(
    ("method", "headers"),
    [
        ("GET", {"host": "127.0.0.1:4321"}),
        ("GET", {"host": "127.0.0.1:4321", "sec_fetch_site": "none"}),
        ("GET", {"host": "127.0.0.1:4321", "sec_fetch_site": "same-origin"}),
        ("POST", {"host": "127.0.0.1:4321", "origin": ORIGIN}),
        ("POST", {"host": "127.0.0.1:4321", "origin": ORIGIN, "sec_fetch_site": "same-origin"}),
    ],
)
def test_the_consoles_own_requests_pass(method: str, headers: dict[str, str]) -> None:
    assert refusal(scope(method, **headers), ORIGIN) is None


@pytest.mark.parametrize(
    ("method", "headers", "why"),
    [
        ("GET", {}, "another host"),
        ("GET", {"host": "localhost:4321"}, "another host"),
        ("GET", {"host": "127.0.0.1:4321.evil.example"}, "another host"),
        ("GET", {"host": "127.0.0.1"}, "another host"),
        ("GET", {"host": "127.0.0.1:4322"}, "another host"),
        ("GET", {"host": "[::1]:4321"}, "another host"),
        ("GET", {"host": "rebound.example:4321"}, "another host"),
        ("GET", {"host": "127.0.0.1:4321", "origin": "http://evil.example"}, "another origin"),
        ("GET", {"host": "127.0.0.1:4321", "origin": "http://127.0.0.1:4321/"}, "another origin"),
        ("GET", {"host": "127.0.0.1:4321", "origin": "https://127.0.0.1:4321"}, "another origin"),
        ("POST", {"host": "127.0.0.1:4321"}, "without an Origin"),
        ("PUT", {"host": "127.0.0.1:4321"}, "without an Origin"),
        ("DELETE", {"host": "127.0.0.1:4321", "origin": "null"}, "another origin"),
        ("GET", {"host": "127.0.0.1:4321", "sec_fetch_site": "cross-site"}, "another site"),
        ("POST", {"host": "127.0.0.1:4321", "origin": ORIGIN, "sec_fetch_site": "same-site"}, "another site"),
    ],
)
def test_everything_else_is_refused_with_a_reason(method: str, headers: dict[str, str], why: str) -> None:
    reason = refusal(scope(method, **headers), ORIGIN)
    assert reason is not None and why in reason


def test_the_policy_allows_no_inline_script_and_no_eval() -> None:
    directives = dict(d.split(" ", 1) for d in CSP.split("; "))
    assert directives["default-src"] == "'none'" and directives["script-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'" and directives["base-uri"] == "'none'"
    assert "require-trusted-types-for" in directives
    assert "unsafe" not in CSP and "*" not in CSP and "data:" not in CSP
