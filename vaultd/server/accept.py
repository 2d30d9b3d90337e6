"""Accepting connections without ever letting one failure or one flood stop the daemon.

``accept()`` fails when the process is out of descriptors (EMFILE), the system is (ENFILE), the
kernel is short of memory (ENOBUFS, ENOMEM), or the peer gave up first (ECONNABORTED). Each is
passing: the listener is still good and the connection waits in the backlog. Retrying at once
would spin (the listener stays readable), so the loop sleeps a short, growing delay and logs once
per burst. The descriptors come back as other connections close, which the cap and the hello
timeout make sure they do.
"""

from __future__ import annotations

import errno
import os
from typing import TYPE_CHECKING

import anyio
import anyio.abc
import structlog

from protocol.envelope import encode, error_response
from protocol.errors import ErrorCode, ErrorData
from vaultd.server.listener import peer_uid

if TYPE_CHECKING:
    from collections.abc import Callable

log = structlog.get_logger("vaultd.accept")

PASSING_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM, errno.ECONNABORTED})
FIRST_DELAY_S = 0.01
MAX_DELAY_S = 0.5
REFUSAL_SEND_S = 1.0  #: an over-cap peer gets this long to take its one error line


def passing_errno(exc: BaseException) -> int | None:
    """The errno of a passing accept failure (anyio wraps it as the cause), else None."""
    for candidate in (exc, exc.__cause__):
        if isinstance(candidate, OSError) and candidate.errno in PASSING_ERRNOS:
            return candidate.errno
    return None


class Backoff:
    """A growing delay between failed accepts, logged once per burst of failures."""

    def __init__(self) -> None:
        self.delay = 0.0
        self.failures = 0

    async def wait(self, code: int) -> None:
        if self.failures == 0:
            log.warning("cannot accept connections for now; backing off", error=errno.errorcode.get(code, str(code)))
        self.failures += 1
        self.delay = min(MAX_DELAY_S, max(FIRST_DELAY_S, self.delay * 2))
        await anyio.sleep(self.delay)

    def reset(self) -> None:
        if self.failures:
            log.info("accepting connections again", failed_accepts=self.failures)
        self.failures, self.delay = 0, 0.0


async def accept_forever(listener: anyio.abc.SocketListener, start: Callable[[anyio.abc.SocketStream], None]) -> None:
    """Hand every accepted connection to ``start``; passing failures only delay the next one."""
    backoff = Backoff()
    while True:
        try:
            stream = await listener.accept()
        except (OSError, anyio.BrokenResourceError) as exc:
            code = passing_errno(exc)
            if code is None:
                raise
            await backoff.wait(code)
            continue
        backoff.reset()
        start(stream)


def over_cap_message(limit: int) -> bytes:
    return encode(
        error_response(
            None,
            ErrorData(
                code=ErrorCode.LIMIT,
                message=(
                    f"vaultd is serving its limit of {limit} connections (max_connections in config.json); "
                    f"close another client or raise the limit, then retry"
                ),
            ),
        )
    )


async def refuse_over_cap(stream: anyio.abc.SocketStream, limit: int) -> None:
    """One JSON-RPC error line naming the limit, then close (silently for another user)."""
    async with stream:
        try:
            uid = peer_uid(stream.extra(anyio.abc.SocketAttribute.raw_socket))
        except OSError:
            return
        if uid != os.getuid():
            return
        with anyio.move_on_after(REFUSAL_SEND_S):
            try:
                await stream.send(over_cap_message(limit))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError):
                pass
