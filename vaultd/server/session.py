"""One client connection: framing, the ``hello`` gate, pipelined requests, ordered writes.

Requests on a connection may be pipelined: each runs in its own task and its response carries
its id. A bad frame gets an error reply and the connection stays open. A session ends when the
peer hangs up or the daemon stops, and for three reasons of its own, each a bound that keeps one
client from costing the others: no ``hello`` within ``hello_timeout_s``; a reply the peer takes
no bytes of for ``send_timeout_s``; or (before the session starts) the connection cap.
Queued replies count against the daemon's :class:`~vaultd.server.budget.ReplyBudget`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import anyio
import anyio.abc
import msgspec
import structlog

from protocol.envelope import InvalidFrame, Reply, Request, RequestId, decode_request, encode, error_response
from protocol.errors import ErrorCode, ErrorData
from protocol.framing import LineBuffer, OversizedFrame
from protocol.methods.common import Channel
from vaultd.api.handlers import CallContext
from vaultd.server.dispatch import INTERNAL_MESSAGE, dispatch

if TYPE_CHECKING:
    from vaultd.daemon import Daemon

log = structlog.get_logger("vaultd.session")

MAX_IN_FLIGHT = 64  #: concurrent requests per connection; more wait for a slot
_GONE = (anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError)


def encode_reply(message: Reply, request_id: RequestId | None) -> bytes:
    """The reply's frame; a reply that cannot be encoded becomes an INTERNAL error for its id.

    The encode step is part of answering: a value that is not valid UTF-8 (a lone surrogate from
    a file name, say) must cost that one request, never the connection.
    """
    try:
        return encode(message)
    except (UnicodeEncodeError, msgspec.EncodeError, TypeError, ValueError, OverflowError):
        log.exception("a reply could not be encoded")
        return encode(error_response(request_id, ErrorData(code=ErrorCode.INTERNAL, message=INTERNAL_MESSAGE)))


class Session:
    def __init__(self, daemon: Daemon, stream: anyio.abc.ByteStream) -> None:
        self.daemon = daemon
        self.stream = stream
        self.ctx: CallContext | None = None  # set by hello
        self._send_lock = anyio.Lock()
        self._slots = anyio.Semaphore(MAX_IN_FLIGHT)
        self._share = daemon.budget.share()
        self._scope = anyio.CancelScope()  # cancelled to drop the connection
        self._hello_deadline = anyio.CancelScope()  # given a deadline in run(); lifted by hello

    async def send(self, message: Reply) -> None:
        """Queue one reply for the peer, within the reply budget and the send timeout."""
        request_id = message.id
        data = encode_reply(message, request_id)
        size = len(data)
        budget = self.daemon.budget
        if not budget.admit(self._share, size):
            note = budget.refusal(self._share, size)
            del data
            data = encode(error_response(request_id, ErrorData(code=ErrorCode.LIMIT, message=note)))
            await self._write(data)
            return
        try:
            await self._write(data)
        finally:
            budget.release(self._share, size)

    async def _write(self, data: bytes) -> None:
        async with self._send_lock:
            with anyio.move_on_after(self.daemon.limits.send_timeout_s) as timer:
                await self.stream.send(data)
            if timer.cancelled_caught:
                log.warning("dropped a client that read none of a reply", seconds=self.daemon.limits.send_timeout_s,
                            pending_bytes=len(data))
                self._scope.cancel()
                raise anyio.ClosedResourceError

    async def run(self) -> None:
        buffer = LineBuffer(self.daemon.max_frame)
        self._hello_deadline.deadline = anyio.current_time() + self.daemon.limits.hello_timeout_s
        with self._scope, self._hello_deadline:
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
                except _GONE:
                    pass
                if buffer.pending:
                    log.info("peer hung up mid-frame", pending_bytes=buffer.pending)
        if self._hello_deadline.cancelled_caught:
            log.info("closed a connection that did not say hello in time",
                     seconds=self.daemon.limits.hello_timeout_s)

    async def _handle(self, frame: bytes) -> None:
        try:
            response = await self._answer(frame)
            if response is not None:
                await self.send(response)
        except _GONE:
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
        provisional = CallContext(host=self.daemon, channel=Channel.CLI, client="?")
        response = await dispatch(request, provisional)
        if provisional.opened:  # the hello handler accepted the client and filled in who it is
            self.ctx = provisional
            self._hello_deadline.deadline = math.inf
        return response
