"""The console's routes: sign-in, the page and its files, and the JSON the views call.

Everything but the sign-in page (and the two files it loads) needs the session cookie; a request
without it gets 401 and nothing else. Every request that changes something (sign-in, sign-out,
a call) is a POST of JSON that carries the console's Origin (checked in :mod:`.perimeter`) and,
once signed in, the session's CSRF value in ``X-Console-CSRF``: a form on another site can send
neither, and the cookie, SameSite=Strict, is not even sent with it.
"""

from __future__ import annotations

import logging
from importlib import resources
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
from starlette.applications import Starlette
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from protocol.errors import ErrorCode, ErrorData
from protocol.version import VERSION
from vaultctl.client import CallError, DaemonUnavailable
from vaultctl.console import calls
from vaultctl.console.feed import Feeds, valid_vault
from vaultctl.console.note_view import note_view
from vaultctl.console.perimeter import Perimeter

if TYPE_CHECKING:
    from starlette.requests import Request

    from vaultctl.console.daemon_connection import DaemonConnection
    from vaultctl.console.sessions import Session, Sessions

log = logging.getLogger("vaultd.console")

CSRF_HEADER = "x-console-csrf"
MAX_LOGIN_BODY = 1024
PUBLIC_FILES = frozenset({"login.html", "login.js", "style.css"})
STATIC_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}

_encode = msgspec.json.Encoder().encode
_call_body = msgspec.json.Decoder(dict[str, Any])


class CallBody(msgspec.Struct, forbid_unknown_fields=True):
    method: str
    params: msgspec.Raw = msgspec.Raw(b"{}")


class NoteBody(msgspec.Struct, forbid_unknown_fields=True):
    vault: str
    target: str


class LoginBody(msgspec.Struct, forbid_unknown_fields=True):
    token: str


def _json(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(_encode(value), status_code=status, media_type="application/json", headers=headers)


B = TypeVar("B", bound=msgspec.Struct)  #: a view's request body


def _error(status: int, code: ErrorCode, message: str) -> Response:
    return _json({"error": ErrorData(code=code, message=message)}, status)


async def _body(request: Request, limit: int) -> bytes | Response:
    """The request's JSON body, read to at most ``limit`` bytes, or the refusal to send."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return _error(415, ErrorCode.INVALID_REQUEST, "send JSON (Content-Type: application/json)")
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > limit:
            return _error(413, ErrorCode.LIMIT, f"the request body is over {limit} bytes")
    return bytes(data)


class Console:
    """The routes, over one process's sessions and daemon connection."""

    def __init__(self, origin: str, sessions: Sessions, daemon: DaemonConnection) -> None:
        self.origin = origin
        self.sessions = sessions
        self.daemon = daemon
        self.feeds = Feeds(daemon)
        self.cookie = f"vaultd_console_{origin.rsplit(':', 1)[1]}"  #: cookies ignore ports: one name per console

    def app(self) -> Perimeter:
        routes = [
            Route("/", self.index, methods=["GET"]),
            Route("/login", self.login_page, methods=["GET"]),
            Route("/favicon.ico", self.no_icon, methods=["GET"]),
            Route("/static/{name}", self.static, methods=["GET"]),
            Route("/api/login", self.login, methods=["POST"]),
            Route("/api/logout", self.logout, methods=["POST"]),
            Route("/api/session", self.session_info, methods=["GET"]),
            Route("/api/call", self.call, methods=["POST"]),
            Route("/api/note", self.note, methods=["POST"]),
            Route("/api/events", self.events, methods=["GET"]),
        ]
        return Perimeter(Starlette(routes=routes), self.origin)

    # -- who is asking ---------------------------------------------------------------------

    def _session(self, request: Request) -> Session | None:
        return self.sessions.lookup(request.cookies.get(self.cookie))

    def _change_allowed(self, request: Request) -> Session | Response:
        session = self._session(request)
        if session is None:
            return _error(401, ErrorCode.POLICY, "not signed in: open the console with 'vaultctl console'")
        if not self.sessions.csrf_ok(session, request.headers.get(CSRF_HEADER)):
            return _error(403, ErrorCode.POLICY, "the request lacks this page's CSRF value; reload the page")
        return session

    # -- pages and files -------------------------------------------------------------------

    def _file(self, name: str) -> Response:
        suffix = name[name.rfind(".") :] if "." in name else ""
        if "/" in name or name.startswith(".") or suffix not in STATIC_TYPES:
            return Response("not found\n", 404, media_type="text/plain")
        try:
            data = resources.files("vaultctl.console").joinpath("static", name).read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            return Response("not found\n", 404, media_type="text/plain")
        return Response(data, media_type=STATIC_TYPES[suffix])

    async def index(self, request: Request) -> Response:
        if self._session(request) is None:
            return Response(
                "not signed in: run 'vaultctl console' to open the console with a new sign-in address\n", 401, media_type="text/plain"
            )
        return self._file("index.html")

    async def no_icon(self, request: Request) -> Response:
        return Response(status_code=204)

    async def login_page(self, request: Request) -> Response:
        return self._file("login.html")

    async def static(self, request: Request) -> Response:
        name = str(request.path_params["name"])
        if name not in PUBLIC_FILES and self._session(request) is None:
            return Response("not signed in\n", 401, media_type="text/plain")
        return self._file(name)

    # -- sessions --------------------------------------------------------------------------

    async def login(self, request: Request) -> Response:
        body = await _body(request, MAX_LOGIN_BODY)
        if isinstance(body, Response):
            return body
        try:
            token = msgspec.json.decode(body, type=LoginBody).token
        except msgspec.DecodeError:
            return _error(400, ErrorCode.INVALID_PARAMS, 'send {"token": "..."}')
        redeemed = self.sessions.redeem(token)
        if redeemed is None:
            log.warning("refused a sign-in: the token is unknown, used or expired")  # the token itself is never logged
            return _error(403, ErrorCode.POLICY, "this sign-in address was used already or has expired; run 'vaultctl console' again")
        cookie, session = redeemed
        log.info("signed in a page")
        response = _json({"vault": session.vault})
        response.set_cookie(self.cookie, cookie, httponly=True, samesite="strict", path="/")
        return response

    async def logout(self, request: Request) -> Response:
        allowed = self._change_allowed(request)
        if isinstance(allowed, Response):
            return allowed
        self.sessions.end(request.cookies.get(self.cookie))
        response = _json({"signed_out": True})
        response.delete_cookie(self.cookie, path="/", httponly=True, samesite="strict")
        return response

    async def session_info(self, request: Request) -> Response:
        session = self._session(request)
        if session is None:
            return _error(401, ErrorCode.POLICY, "not signed in: open the console with 'vaultctl console'")
        return _json({"csrf": session.csrf, "vault": session.vault, "version": VERSION, "methods": sorted(calls.ALLOWED)})

    # -- the views' data -------------------------------------------------------------------

    async def call(self, request: Request) -> Response:
        asked = await self._asked(request, CallBody, 'send {"method": "...", "params": {...}}')
        if isinstance(asked, Response):
            return asked
        spec = calls.ALLOWED.get(asked.method)
        if spec is None:
            return _error(403, ErrorCode.POLICY, f"the console does not call {asked.method[:64]!r}")
        return await self._answer(lambda: self.daemon.call(spec.name, asked.params))

    async def note(self, request: Request) -> Response:
        asked = await self._asked(request, NoteBody, 'send {"vault": "...", "target": "..."}')
        if isinstance(asked, Response):
            return asked

        async def view() -> bytes:
            return _encode(await note_view(self.daemon, asked.vault, asked.target))

        return await self._answer(view)

    async def _asked(self, request: Request, shape: type[B], hint: str) -> B | Response:
        """A view's request body decoded as ``shape``, from a signed-in page of this console, or
        the refusal to send (``hint`` shows what a body looks like)."""
        allowed = self._change_allowed(request)
        if isinstance(allowed, Response):
            return allowed
        body = await _body(request, calls.MAX_CALL_BODY)
        if isinstance(body, Response):
            return body
        try:
            return msgspec.json.decode(body, type=shape)
        except msgspec.DecodeError:
            return _error(400, ErrorCode.INVALID_PARAMS, hint)

    async def _answer(self, fetch: Any) -> Response:
        try:
            raw: bytes = await fetch()
        except CallError as exc:
            return _json({"error": exc.data}, calls.http_status(exc.data.code))
        except DaemonUnavailable as exc:
            return _error(503, ErrorCode.UNAVAILABLE, str(exc))
        except (msgspec.ValidationError, ValueError) as exc:  # a parameter the daemon would refuse, caught here first
            return _error(400, ErrorCode.INVALID_PARAMS, str(exc))
        return Response(b'{"result":' + raw + b"}", media_type="application/json")

    async def events(self, request: Request) -> Response:
        if self._session(request) is None:
            return _error(401, ErrorCode.POLICY, "not signed in: open the console with 'vaultctl console'")
        vault = request.query_params.get("vault")
        if not valid_vault(vault):
            return _error(400, ErrorCode.INVALID_PARAMS, "name the vault to follow: /api/events?vault=ID")
        assert vault is not None
        if self.feeds.full():
            return _error(429, ErrorCode.LIMIT, "too many pages follow this console's vaults; close one")
        return StreamingResponse(
            self.feeds.stream(vault, request.headers.get("last-event-id")),
            media_type="text/event-stream",
            headers={"x-accel-buffering": "no"},
        )
