"""One client connection: framing, the ``hello`` gate, pipelined requests, ordered writes.

Requests on a connection may be pipelined: each runs in its own task and its response carries
its id. A bad frame gets an error reply and the connection stays open. A connection ends when the
peer hangs up or the daemon stops, and for three reasons of its own, each a bound that keeps one
client from costing the others: no ``hello`` within ``hello_timeout_s``; a reply the peer takes
no bytes of for ``send_timeout_s``; or (before the connection is served) the connection cap.

Memory is bounded by the daemon's :class:`~vaultd.server.budget.ReplyBudget`: after ``hello``
the reader reserves each request's reply bytes before it dispatches the request, and waits while
the reservation does not fit, so a client that reads nothing soon stops being read from. The
decoded reply is dropped as soon as it is encoded; the encoded one is released once the kernel has
it. A reader waiting for a reservation still ends with its connection: the send timeout that
drops a non-reader cancels the reader too.

A connection is below the daemon in the layers (the daemon starts the listener that accepts
connections), so it names the daemon only through :class:`ConnectionHost`.
"""

from __future__ import annotations

import fcntl
import math
import socket
import sys
import termios
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.abc
import msgspec
import structlog

from protocol.envelope import InvalidFrame, Reply, Request, RequestId, decode_request, encode, error_response
from protocol.errors import ErrorCode, ErrorData
from protocol.framing import LineBuffer, OversizedFrame
from protocol.limits import describe
from protocol.methods.common import Channel
from vaultd.api.handlers import CallContext
from vaultd.api.host import Host
from vaultd.server.dispatch import INTERNAL_MESSAGE, dispatch
from vaultd.server.subscriptions import ConnectionStreams, after_reply

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine
    from contextlib import AbstractAsyncContextManager

    from vaultd.events.wake import Wakers
    from vaultd.registry.config import DaemonLimits
    from vaultd.server.budget import ReplyBudget, Reservation, Share

log = structlog.get_logger("vaultd.connection")

MAX_IN_FLIGHT = 64  #: concurrent requests per connection; more wait for a slot
#: A request over this many bytes (a large note's create) is handled alone on its connection, so
#: what one connection holds in requests stays near one frame bound plus MAX_IN_FLIGHT small ones.
LARGE_FRAME_BYTES = 1024 * 1024
_TIOCOUTQ: int | None = getattr(termios, "TIOCOUTQ", None)  #: Linux; as SIOCOUTQ it works on sockets
_OUTQ = bytes(4)  #: the int that TIOCOUTQ (SIOCOUTQ) fills in: bytes sent, not yet read by the peer
_GONE = (anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError)


class ConnectionHost(Host, Protocol):
    """What a connection needs of the daemon that accepted it: the handlers' Host, and the bounds."""

    @property
    def max_frame(self) -> int:
        """The largest request frame, in bytes."""

    @property
    def limits(self) -> DaemonLimits:
        """The daemon limits of config.json: connections, timeouts, reply budgets."""

    @property
    def budget(self) -> ReplyBudget:
        """The reply bytes every connection's queued replies count against."""

    @property
    def vault_set(self) -> Wakers:
        """Woken when a vault is attached or detached (subscriptions to every vault follow it)."""

    def tracking_request(self) -> AbstractAsyncContextManager[None]:
        """Counts a request in flight, so a stop waits for it."""
        ...


def _large(frame: bytes | OversizedFrame) -> bool:
    return isinstance(frame, bytes) and len(frame) > LARGE_FRAME_BYTES


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


class Connection:
    def __init__(self, daemon: ConnectionHost, stream: anyio.abc.ByteStream) -> None:
        self.daemon = daemon
        self.stream = stream
        self.ctx: CallContext | None = None  # set by hello
        self._greeting = False  # a hello is being answered (a second one is refused meanwhile)
        self._send_lock = anyio.Lock()
        self._slots = anyio.Semaphore(MAX_IN_FLIGHT)
        self._large = anyio.Semaphore(1)  # a request over LARGE_FRAME_BYTES in hand
        self._share = daemon.budget.share()
        self._raw: socket.socket | None = stream.extra(anyio.abc.SocketAttribute.raw_socket, None)
        self._scope = anyio.CancelScope()  # cancelled to drop the connection
        self._hello_deadline = anyio.CancelScope()  # given a deadline in run(); lifted by hello
        self._tasks: anyio.abc.TaskGroup | None = None  # the connection's tasks, once run() starts them
        self.streams = ConnectionStreams(self)  #: the connection's subscriptions

    # -- what its subscriptions need (vaultd.server.subscriptions.Outlet) ------------------------

    @property
    def host(self) -> ConnectionHost:
        return self.daemon

    @property
    def share(self) -> Share:
        return self._share

    def peer_caught_up(self) -> bool:
        return self._peer_caught_up()

    def unread_bytes(self) -> int | None:
        if self._raw is None or _TIOCOUTQ is None:
            return None
        try:
            pending = fcntl.ioctl(self._raw.fileno(), _TIOCOUTQ, _OUTQ)
        except OSError:
            return None
        return int.from_bytes(pending, sys.byteorder, signed=True)

    def hold_back_bytes(self) -> int | None:
        if self._raw is None:
            return None
        try:
            return int(self._raw.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)) // 2
        except OSError:
            return None

    async def write(self, data: bytes) -> None:
        await self._write(data)

    def drop(self) -> None:
        self._scope.cancel()

    def start(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        assert self._tasks is not None, "a subscription is opened by a request, inside run()"
        self._tasks.start_soon(fn, *args)

    def _peer_caught_up(self) -> bool:
        """Whether the peer has read every byte sent to it (the kernel's send queue is empty).

        Where the queue cannot be asked about (not Linux, not a socket), it is taken as not.
        """
        return self.unread_bytes() == 0

    async def _write(self, data: bytes) -> None:
        async with self._send_lock:
            with anyio.move_on_after(self.daemon.limits.send_timeout_s) as timer:
                await self.stream.send(data)
            if timer.cancelled_caught:
                log.warning(
                    "dropped a client that read none of a reply", seconds=self.daemon.limits.send_timeout_s, pending_bytes=len(data)
                )
                self._scope.cancel()
                raise anyio.ClosedResourceError

    async def run(self) -> None:
        buffer = LineBuffer(self.daemon.max_frame)
        budget = self.daemon.budget
        self._hello_deadline.deadline = anyio.current_time() + self.daemon.limits.hello_timeout_s
        with self._scope, self._hello_deadline:
            async with anyio.create_task_group() as tg:
                self._tasks = tg
                try:
                    async for chunk in self.stream:
                        for frame in buffer.feed(chunk):
                            if _large(frame):  # one at a time: stop reading while one is in hand
                                await self._large.acquire()
                            await self._slots.acquire()
                            try:
                                # Waits while this connection's share or the total is full, so a
                                # client that reads nothing is soon not read from either. Before
                                # hello every answer is small: a client's hello never waits.
                                reservation = (
                                    budget.unreserved() if self.ctx is None else await budget.reserve(self._share, self._peer_caught_up())
                                )
                            except BaseException:
                                self._slots.release()
                                raise
                            tg.start_soon(self._handle, frame, reservation)
                except _GONE:
                    pass
                self.streams.close_all()  # the peer hung up: nobody reads what they would send
                if self.ctx is not None and self.ctx.session is not None and self.ctx.channel == Channel.MCP:
                    self.ctx.host.sessions.closed(self.ctx.session)
                if buffer.pending:
                    log.info("peer hung up mid-frame", pending_bytes=buffer.pending)
        if self._hello_deadline.cancelled_caught:
            log.info("closed a connection that did not say hello in time", seconds=self.daemon.limits.hello_timeout_s)

    async def _handle(self, frame: bytes | OversizedFrame, reservation: Reservation) -> None:
        """Answer one frame within its reservation, released once the reply is with the kernel."""
        budget, share = self.daemon.budget, self._share
        held = reservation.size
        answered = False  # the reply went out as the handler answered (a subscription may then send)
        with after_reply() as hooks:
            try:
                reply = await self._answer(frame)
                if reply is None:
                    return
                request_id = reply.id
                data = encode_reply(reply, request_id)
                del reply  # the decoded result is as big as the reply: it must not wait for the socket
                note = budget.settle(share, reservation, len(data))  # releases the reservation on refusal
                held = len(data) if note is None else 0
                if note is not None:
                    data = encode(error_response(request_id, ErrorData(code=ErrorCode.LIMIT, message=note)))
                await self._write(data)
                answered = note is None
            except _GONE:
                pass  # the peer left before its answer; others are unaffected
            finally:
                budget.release(share, held)
                self._slots.release()
                if _large(frame):
                    self._large.release()
                for hook in hooks:
                    hook(answered)

    async def _answer(self, frame: bytes | OversizedFrame) -> Reply | None:
        if isinstance(frame, OversizedFrame):
            # No id: the frame was discarded unread. A client with one request outstanding knows
            # the answer is its own; nothing of the request was applied.
            bound = describe(self.daemon.max_frame)
            message = f"the request is {frame.size} bytes or more, over the {bound} bound on one request; it was discarded, nothing applied"
            return error_response(None, ErrorData(code=ErrorCode.LIMIT, message=message))
        try:
            request = decode_request(frame)
        except InvalidFrame as exc:
            return error_response(exc.request_id, ErrorData(code=exc.code, message=exc.message))
        if request.method == "hello":
            if self.ctx is not None or self._greeting:
                return self._hello_again(request)
            self._greeting = True  # set before the first await: a pipelined second hello is refused too
            try:
                return await self._hello(request)
            finally:
                self._greeting = False
        if self.ctx is None:
            if request.is_notification:
                return None
            return error_response(
                request.id, ErrorData(code=ErrorCode.INVALID_REQUEST, message="call 'hello' first to open the connection")
            )
        async with self.daemon.tracking_request():
            response = await dispatch(request, self.ctx)
        return None if request.is_notification else response

    def _hello_again(self, request: Request) -> Reply | None:
        """A connection says hello once: its channel and client are who it is for as long as it is
        open, so a later hello (say an agent's client turning into ``cli`` to apply its own
        proposal) is refused and changes nothing."""
        if request.is_notification:
            return None
        who = (
            f"on channel {self.ctx.channel.value} as {self.ctx.client!r}"
            if self.ctx is not None
            else "already (its hello is being answered)"
        )
        message = f"this connection said hello {who}; a connection cannot say hello again. Open a new connection to speak as another client"
        return error_response(request.id, ErrorData(code=ErrorCode.INVALID_REQUEST, message=message))

    async def _hello(self, request: Request) -> Reply:
        provisional = CallContext(host=self.daemon, channel=Channel.CLI, client="?", streams=self.streams)
        response = await dispatch(request, provisional)
        if provisional.opened:  # the hello handler accepted the client and filled in who it is
            self.ctx = provisional
            self._hello_deadline.deadline = math.inf
        return response
