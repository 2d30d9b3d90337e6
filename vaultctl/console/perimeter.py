"""The console's perimeter: which requests reach it at all, and the headers every answer carries.

The console listens on 127.0.0.1 only, but a browser can be made to send requests there by any
web page, and a DNS name can be made to point there (DNS rebinding). So, before any route runs:

- the ``Host`` header must be exactly ``127.0.0.1:PORT`` (a rebound name arrives with its own);
- an ``Origin`` header, when sent, must be the console's own, and every request that is not a
  GET or HEAD must carry one (browsers send it with every POST, so only another origin's or a
  script's request lacks it);
- ``Sec-Fetch-Site``, when sent, must say ``same-origin`` or ``none`` (an address typed or opened
  from outside the browser), never ``cross-site`` or ``same-site``.

Every answer, refusals included, carries a strict Content-Security-Policy (scripts from the
console only, no inline script, no ``eval``, Trusted Types for the one place that inserts HTML),
and is never cached, framed, or sent on with a referrer.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("vaultd.console")

TRUSTED_TYPES_POLICY = "vaultd-note"  #: the one policy the page's code may create (note.js)
CSP = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
        f"trusted-types {TRUSTED_TYPES_POLICY}",
    )
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=(), usb=(), payment=()"),
)
SAFE_METHODS = frozenset({"GET", "HEAD"})
FETCH_SITES = frozenset({"same-origin", "none"})


def refusal(scope: Scope, origin: str) -> str | None:
    """Why a request may not reach the console, or None when it may."""
    headers = Headers(scope=scope)
    host = origin.removeprefix("http://")
    if headers.get("host") != host:
        return f"this console answers only at {origin}: the request named another host"
    sent_origin = headers.get("origin")
    if sent_origin is not None and sent_origin != origin:
        return "a request from another origin"
    if scope.get("method") not in SAFE_METHODS and sent_origin is None:
        return "a change without an Origin header"
    site = headers.get("sec-fetch-site")
    if site is not None and site not in FETCH_SITES:
        return f"a request from another site (Sec-Fetch-Site: {site})"
    return None


class Perimeter:
    """ASGI middleware around the whole console."""

    def __init__(self, app: ASGIApp, origin: str) -> None:
        self.app = app
        self.origin = origin

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # no websockets, and the lifespan protocol is off
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in dict(SECURITY_HEADERS)]
                message["headers"] = [*kept, *SECURITY_HEADERS]
            await send(message)

        why = refusal(scope, self.origin)
        if why is not None:
            log.warning("refused a request: %s", why)  # never the path or query: only the reason
            response = PlainTextResponse(f"refused: {why}\n", status_code=421 if why.startswith("this console") else 403)
            await response(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)
