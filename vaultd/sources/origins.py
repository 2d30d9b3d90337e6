"""Where a source came from, and which sources are one line of evidence.

Two spellings of one URL name one origin: the scheme and host are compared lowercase, an
internationalized host in its ASCII (IDNA) form, an IPv6 literal in its compressed form, a
default port dropped, percent-escapes of unreserved characters decoded and the others written
upper-case, non-ASCII characters UTF-8 percent-encoded, dot segments removed, an empty path made
``/``, and the fragment dropped (RFC 3986 section 6). Sources that share an independence key count
once toward a claim's support; the key is the one a person gives, else the origin's host, else
the content's sha256.
"""

from __future__ import annotations

import ipaddress
import posixpath
import re
from typing import Final
from urllib.parse import urlsplit, urlunsplit

_DEFAULT_PORTS: Final = {"http": 80, "https": 443, "ftp": 21, "ws": 80, "wss": 443}
_UNRESERVED: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_ESCAPE: Final = re.compile(r"%([0-9A-Fa-f]{2})")
#: Characters a path or query may hold unescaped (RFC 3986 pchar, '/' and '?').
_SAFE: Final = frozenset(_UNRESERVED | set("!$&'()*+,;=:@/?%"))
MAX_URL_CHARS: Final = 2048


class BadUrl(ValueError):
    """Not an absolute http(s) URL with a host."""


def _host(host: str) -> str:
    if host.startswith("[") and host.endswith("]"):
        try:
            return f"[{ipaddress.IPv6Address(host[1:-1]).compressed}]"
        except ValueError as exc:
            raise BadUrl("the host is not a valid IPv6 address") from exc
    host = host.rstrip(".").lower()
    if not host:
        raise BadUrl("the URL has no host")
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError as exc:
        raise BadUrl("the host is not a valid internationalized domain name") from exc
    try:
        return str(ipaddress.IPv4Address(ascii_host))
    except ValueError:
        return ascii_host.lower()


def _escapes(part: str) -> str:
    """Decode escaped unreserved characters, upper-case the other escapes, UTF-8-escape the rest."""

    def fix(m: re.Match[str]) -> str:
        ch = chr(int(m.group(1), 16))
        return ch if ch in _UNRESERVED else f"%{m.group(1).upper()}"

    part = _ESCAPE.sub(fix, part)
    out = []
    for ch in part:
        if ch in _SAFE:
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8"))
    return "".join(out)


def _path(path: str) -> str:
    if not path:
        return "/"
    trailing = path.endswith("/") or path.endswith("/.") or path.endswith("/..")
    cleaned = posixpath.normpath(path)
    cleaned = "/" + cleaned.lstrip("/")
    if trailing and cleaned != "/":
        cleaned += "/"
    return cleaned


def normalize_url(url: str) -> str:
    """The one spelling of ``url`` that every RFC-equivalent spelling shares.

    Raises:
        BadUrl: not an absolute http(s) URL with a valid host, or longer than 2,048 characters.
    """
    if len(url) > MAX_URL_CHARS or any(ord(c) < 0x21 or ord(c) == 0x7F for c in url.strip()):
        raise BadUrl("the URL is too long or holds spaces or control characters")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise BadUrl(f"the URL cannot be read ({exc})") from exc
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise BadUrl("only http and https URLs are recorded")
    raw_host = parts.hostname or ""
    if parts.netloc.rpartition("@")[2].startswith("["):
        raw_host = f"[{raw_host}]"
    host = _host(raw_host)
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    if parts.username is not None:
        raise BadUrl("a URL with a user name or password is not recorded (it may hold a secret)")
    path = _path(_escapes(parts.path))
    query = _escapes(parts.query)
    return urlunsplit((scheme, netloc, path, query, ""))


def url_host(url: str) -> str:
    """The normalized host (and non-default port) of ``url``."""
    return urlsplit(normalize_url(url)).netloc


def independence_key(explicit: str | None, origin: str | None, sha256: str | None) -> str:
    """What a source counts as, toward the number of independent lines supporting a claim."""
    if explicit and explicit.strip():
        return explicit.strip().lower()
    if origin:
        try:
            return f"host:{url_host(origin)}"
        except BadUrl:
            pass
    if sha256:
        return f"sha256:{sha256}"
    return f"origin:{(origin or '').strip().lower()}"


_YOUTUBE: Final = frozenset({"youtube.com", "www.youtube.com", "m.youtube.com", "youtu.be", "music.youtube.com"})


def is_youtube(url: str) -> bool:
    try:
        return url_host(url) in _YOUTUBE
    except BadUrl:
        return False
