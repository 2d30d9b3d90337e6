"""Who may use the console: one-time login tokens, exchanged for session cookies.

A token reaches the person in the address ``vaultctl console`` opens (in its fragment, which a
browser never sends to a server, so no request line or log can hold it). The page posts it once;
:meth:`Sessions.redeem` forgets it as it checks it, so a second use fails, and a token not used
within its time fails too. The session it becomes is a random cookie value (HttpOnly,
SameSite=Strict) with a CSRF value of its own that every change must carry in a header.

Only SHA-256 digests of tokens and cookie values are kept: a memory dump or a stray repr holds
nothing that logs in. Both tables are bounded; the oldest entry goes first.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

MAX_GRANTS = 16  #: unused tokens kept; an older one stops working when a seventeenth is minted
MAX_SESSIONS = 32  #: signed-in pages kept; the oldest is signed out first
SESSION_TTL_S = 12 * 3600  #: a session ends this long after its login, used or not
SECRET_BYTES = 32  #: random bytes in a token, a cookie value and a CSRF value


@dataclass(frozen=True, slots=True)
class Session:
    csrf: str  #: the value the page sends in the X-Console-CSRF header with every change
    vault: str | None  #: the vault the token was minted for, where the page opens
    expires: float  #: on the clock Sessions was given


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).digest()


class Sessions:
    """The console's grants and sessions; one instance per console process."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._grants: OrderedDict[bytes, tuple[float, str | None]] = OrderedDict()
        self._sessions: OrderedDict[bytes, Session] = OrderedDict()

    def grant(self, ttl_s: float, vault: str | None = None) -> str:
        """A new one-time token, usable once within ``ttl_s`` seconds."""
        token = secrets.token_urlsafe(SECRET_BYTES)
        self._grants[_digest(token)] = (self._clock() + ttl_s, vault)
        while len(self._grants) > MAX_GRANTS:
            self._grants.popitem(last=False)
        return token

    def redeem(self, token: str) -> tuple[str, Session] | None:
        """The cookie value and session a token becomes, or None: unknown, used or expired.

        The token is forgotten whatever the answer, so it can never be used twice.
        """
        entry = self._grants.pop(_digest(token), None)
        now = self._clock()
        if entry is None or entry[0] <= now:
            return None
        cookie = secrets.token_urlsafe(SECRET_BYTES)
        session = Session(csrf=secrets.token_urlsafe(SECRET_BYTES), vault=entry[1], expires=now + SESSION_TTL_S)
        self._sessions[_digest(cookie)] = session
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)
        return cookie, session

    def lookup(self, cookie: str | None) -> Session | None:
        """The live session a cookie value names, or None."""
        if not cookie:
            return None
        key = _digest(cookie)
        session = self._sessions.get(key)
        if session is None:
            return None
        if session.expires <= self._clock():
            del self._sessions[key]
            return None
        return session

    def csrf_ok(self, session: Session, sent: str | None) -> bool:
        return sent is not None and secrets.compare_digest(session.csrf.encode(), sent.encode("utf-8", "surrogatepass"))

    def end(self, cookie: str | None) -> None:
        """Sign a page out (its cookie stops working)."""
        if cookie:
            self._sessions.pop(_digest(cookie), None)

    @property
    def pending_grants(self) -> int:
        return len(self._grants)
