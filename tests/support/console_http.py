"""Plain HTTP against a console, for the tests of its perimeter (no browser: exact headers)."""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from tests.support.harness import Home, vaultctl


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes
    cookies: list[str] = field(default_factory=list)

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Console:
    """A console's address, and the sign-in the tests make with its one-time token."""

    url: str
    origin: str
    pid: int
    cookie: str = ""  #: "name=value", once signed in
    csrf: str = ""

    @property
    def port(self) -> int:
        return int(self.origin.rsplit(":", 1)[1])

    @property
    def token(self) -> str:
        return dict(p.split("=", 1) for p in urlsplit(self.url).fragment.split("&"))["token"]

    def request(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None, read: bool = True) -> Reply:
        sent = {"Host": f"127.0.0.1:{self.port}", **(headers or {})}
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            sent.setdefault("Content-Type", "application/json")
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request(method, path, body=data, headers={k: v for k, v in sent.items() if v is not None})
            response = conn.getresponse()
            payload = response.read() if read else b""
            return Reply(
                response.status,
                {k.lower(): v for k, v in response.getheaders()},
                payload,
                [v for k, v in response.getheaders() if k.lower() == "set-cookie"],
            )
        finally:
            conn.close()

    def signed(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """Headers of a signed-in page's change: cookie, Origin, CSRF value."""
        return {"Cookie": self.cookie, "Origin": self.origin, "X-Console-CSRF": self.csrf, **(extra or {})}

    def sign_in(self) -> Console:
        reply = self.request("POST", "/api/login", {"token": self.token}, {"Origin": self.origin})
        assert reply.status == 200, reply.body
        self.cookie = reply.cookies[0].split(";")[0]
        info = self.request("GET", "/api/session", headers={"Cookie": self.cookie}).json()
        self.csrf = info["csrf"]
        return self

    def call(self, method: str, params: dict[str, Any]) -> Reply:
        return self.request("POST", "/api/call", {"method": method, "params": params}, self.signed())


def open_console(home: Home, *args: str) -> Console:
    """``vaultctl console --no-open --json``: a fresh one-time address (starting the console if needed)."""
    opened = vaultctl(home, "console", "--no-open", "--json", *args)
    assert opened.code == 0, opened.err
    answer = opened.json()
    return Console(url=answer["url"], origin=answer["origin"], pid=answer["pid"])
