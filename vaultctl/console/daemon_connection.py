"""The console's connections to the daemon: calls on a small pool, one connection per live feed.

Every connection says ``hello`` on the ``editor`` channel, a person's channel: the console can do
what a person at ``vaultctl`` can do in a vault whose write policy admits editors, and nothing
more. The socket is checked as ``vaultctl`` checks it (:mod:`vaultctl.peer`) before a byte goes out.

A call borrows an idle connection (or opens one, up to :data:`POOL_SIZE`), sends one request and
reads until its reply. A connection whose call was cancelled or broke is closed rather than
returned, so a late reply can never be read as the answer to another call.

Its failures are ``vaultctl``'s (:mod:`vaultctl.client`): a refusal is a ``CallError`` carrying
the daemon's error as sent, and every way of not getting an answer is a ``DaemonUnavailable``
(an ``UnsafeSocket`` when the socket is not provably the user's daemon).
"""

from __future__ import annotations

import itertools
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import msgspec

from protocol.envelope import Incoming, Request, decode_incoming, encode
from protocol.errors import ErrorCode, ErrorData
from protocol.framing import MAX_FRAME_BYTES, LineBuffer, OversizedFrame
from protocol.limits import MAX_REPLY_FRAME_BYTES, describe
from protocol.methods.common import PROTOCOL_VERSION, Channel
from protocol.methods.service import HelloParams
from protocol.version import VERSION
from vaultctl import peer
from vaultctl.client import CallError, DaemonUnavailable, UnsafeSocket

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

CLIENT_NAME = "vaultd-console"
POOL_SIZE = 4  #: connections kept for calls; more calls at once wait for one
CALL_TIMEOUT_S = 60.0
MAX_REPLY_BYTES = MAX_REPLY_FRAME_BYTES  #: as vaultctl: a result may exceed the request bound


class Connection:
    """One session with the daemon on the ``editor`` channel."""

    def __init__(self, stream: anyio.abc.SocketStream) -> None:
        self._stream = stream
        self._buffer = LineBuffer(MAX_REPLY_BYTES)
        self._frames: list[bytes] = []
        self._ids = itertools.count(1)

    @classmethod
    async def open(cls, socket_path: Path) -> Connection:
        """Connect, check who listens, and say hello.

        Raises:
            DaemonUnavailable: nothing listens, the socket is not the user's, or hello failed.
        """
        if problem := peer.check_folder(socket_path):
            raise UnsafeSocket(f"refusing the daemon socket: {problem}")
        try:
            stream = await anyio.connect_unix(socket_path)
        except OSError as exc:
            raise DaemonUnavailable(f"no daemon answers on {socket_path}: {exc.strerror or exc}") from exc
        if problem := peer.check_peer(stream.extra(anyio.abc.SocketAttribute.raw_socket), socket_path):
            await stream.aclose()
            raise UnsafeSocket(f"refusing the daemon socket: {problem}")
        conn = cls(stream)
        try:
            await conn.call("hello", HelloParams(client=CLIENT_NAME, version=VERSION, channel=Channel.EDITOR, protocol=PROTOCOL_VERSION))
        except CallError as exc:
            await conn.close()
            raise DaemonUnavailable(f"the daemon refused the console's session: {exc.data.message}") from exc
        return conn

    async def close(self) -> None:
        await self._stream.aclose()

    async def send(self, method: str, params: Any) -> int:
        request_id = next(self._ids)
        payload = params if isinstance(params, msgspec.Raw) else msgspec.Raw(msgspec.json.encode(params))
        frame = encode(Request(jsonrpc="2.0", method=method, params=payload, id=request_id))
        if len(frame) - 1 > MAX_FRAME_BYTES:  # the daemon would discard it unread (the newline is not counted)
            message = f"the {method} request is {len(frame) - 1} bytes as JSON, over the {describe(MAX_FRAME_BYTES)} bound on one request"
            raise CallError(ErrorData(code=ErrorCode.LIMIT, message=message))
        try:
            await self._stream.send(frame)
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise DaemonUnavailable("the connection to the daemon broke") from exc
        return request_id

    async def call(self, method: str, params: Any) -> bytes:
        """Send one request and return its raw result (notifications that come first are skipped).

        Raises:
            CallError: the daemon answered with an error.
            DaemonUnavailable: the connection broke.
        """
        request_id = await self.send(method, params)
        while True:
            incoming = await self.receive()
            # An error without an id answers a frame the daemon discarded unread: a connection
            # carries one call at a time, so it is this one's.
            if incoming.id != request_id and not (incoming.id is None and incoming.error is not None):
                continue
            if incoming.error is not None:
                rpc = incoming.error
                raise CallError(rpc.data or ErrorData(code=ErrorCode.from_rpc_code(rpc.code), message=rpc.message))
            return bytes(incoming.result)

    async def receive(self) -> Incoming:
        """The next frame from the daemon, reply or notification."""
        while not self._frames:
            try:
                chunk = await self._stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                raise DaemonUnavailable("the daemon closed the connection") from exc
            for frame in self._buffer.feed(chunk):
                if isinstance(frame, OversizedFrame):
                    raise DaemonUnavailable("the daemon sent an oversized frame")
                self._frames.append(frame)
        try:
            return decode_incoming(self._frames.pop(0))
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise DaemonUnavailable(f"the daemon sent a frame that is not JSON-RPC: {exc}") from exc


class DaemonConnection:
    """Calls for the console's pages, on a pool of connections."""

    def __init__(self, socket_path: Path) -> None:
        self.socket_path = socket_path
        self._idle: list[Connection] = []
        self._slots = anyio.Semaphore(POOL_SIZE)

    async def call(self, method: str, params: Any) -> bytes:
        """One call, answered with the raw result.

        Raises:
            CallError: the daemon refused.
            DaemonUnavailable: the daemon could not be reached, broke off or took too long.
        """
        async with self._slots:
            conn = self._idle.pop() if self._idle else await Connection.open(self.socket_path)
            done = False
            try:
                with anyio.fail_after(CALL_TIMEOUT_S):
                    result = await conn.call(method, params)
                done = True
                return result
            except CallError:
                done = True
                raise
            except TimeoutError as exc:
                raise DaemonUnavailable(f"the daemon did not answer {method} within {CALL_TIMEOUT_S:g} s") from exc
            finally:
                if done:
                    self._idle.append(conn)
                else:
                    with anyio.CancelScope(shield=True):
                        await conn.close()

    @asynccontextmanager
    async def feed(self) -> AsyncIterator[Connection]:
        """A connection of its own, for a subscription: closed when the block ends."""
        conn = await Connection.open(self.socket_path)
        try:
            yield conn
        finally:
            with anyio.CancelScope(shield=True):
                await conn.close()

    async def aclose(self) -> None:
        while self._idle:
            await self._idle.pop().close()
