"""One client connection: framing, the ``hello`` gate, pipelined requests, ordered writes.

Requests on a connection may be pipelined: each runs in its own task and its response carries
its id. A bad frame gets an error reply and the connection stays open; only the peer hanging up
(or the daemon stopping) ends a session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import structlog

from protocol.envelope import InvalidFrame, Reply, Request, decode_request, encode, error_response
from protocol.errors import ErrorCode, ErrorData
from protocol.framing import LineBuffer, OversizedFrame
from protocol.methods.common import Channel
from vaultd.api.registry import CallContext
from vaultd.server.dispatch import dispatch

if TYPE_CHECKING:
    from vaultd.daemon import Daemon

log = structlog.get_logger("vaultd.session")

MAX_IN_FLIGHT = 64  #: concurrent requests per connection; more wait for a slot


class Session:
    def __init__(self, daemon: Daemon, stream: anyio.abc.ByteStream) -> None:
        self.daemon = daemon
        self.stream = stream
        self.ctx: CallContext | None = None  # set by hello
        self._send_lock = anyio.Lock()
        self._slots = anyio.Semaphore(MAX_IN_FLIGHT)

    async def send(self, message: Any) -> None:
        data = encode(message)
        async with self._send_lock:
            await self.stream.send(data)

    async def run(self) -> None:
        buffer = LineBuffer(self.daemon.max_frame)
        async with anyio.create_task_group() as tg:
            try:
                async for chunk in self.stream:
                    for frame in buffer.feed(chunk):
                        if isinstance(frame, OversizedFrame):
                            await self.send(error_response(None, ErrorData(
                                code=ErrorCode.INVALID_REQUEST,
                                message=f"frame over the {self.daemon.max_frame}-byte limit; it was discarded",
                            )))
                            continue
                        await self._slots.acquire()
                        tg.start_soon(self._handle, frame)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError):
                pass
            if buffer.pending:
                log.info("peer hung up mid-frame", pending_bytes=buffer.pending)

    async def _handle(self, frame: bytes) -> None:
        try:
            response = await self._answer(frame)
            if response is not None:
                await self.send(response)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError):
            pass  # the peer left before its answer; others are unaffected
        finally:
            self._slots.release()

    async def _answer(self, frame: bytes) -> Reply | None:
        try:
            request = decode_request(frame)
        except InvalidFrame as exc:
            return error_response(exc.request_id, ErrorData(code=exc.code, message=exc.message))
        if request.method == "hello":
            return await self._hello(request)
        if self.ctx is None:
            if request.is_notification:
                return None
            return error_response(request.id, ErrorData(
                code=ErrorCode.INVALID_REQUEST, message="call 'hello' first to open the session"))
        async with self.daemon.tracking_request():
            response = await dispatch(request, self.ctx)
        return None if request.is_notification else response

    async def _hello(self, request: Request) -> Reply:
        provisional = CallContext(daemon=self.daemon, channel=Channel.CLI, client="?")
        response = await dispatch(request, provisional)
        if provisional.opened:  # the hello handler accepted the client and filled in who it is
            self.ctx = provisional
        return response
