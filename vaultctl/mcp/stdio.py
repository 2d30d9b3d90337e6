"""The stdio transport: read newline-delimited JSON-RPC from stdin, write replies to stdout.

stdout carries protocol messages and nothing else (a stray ``print`` is sent to stderr); logs go
to stderr. Frames are bounded (1 MiB); no bad frame stops the loop. Two threads: this one reads
and answers everything that needs no daemon at once, so the handshake and ``ping`` stay instant
while a long call runs; one worker runs the daemon calls in arrival order over the one daemon
connection. At end of input the worker finishes the queued calls, then the shim exits 0.
"""

from __future__ import annotations

import logging
import os
import queue
import sys
import threading
from typing import TYPE_CHECKING, BinaryIO

from protocol.framing import LineBuffer, OversizedFrame
from protocol.limits import MAX_FRAME_BYTES, describe
from vaultctl.mcp import wire
from vaultctl.mcp.budget import default_budget
from vaultctl.mcp.daemon_connection import DaemonConnection
from vaultctl.mcp.errors import McpError, RpcCode
from vaultctl.mcp.paging import tools_page_size
from vaultctl.mcp.server import Job, Session
from vaultctl.mcp.tools import ToolCatalogue
from vaultctl.mcp.updates import ResourceUpdates

if TYPE_CHECKING:
    from protocol.methods.spec import AnySpec

log = logging.getLogger("vaultctl.mcp")

READ_CHUNK = 1 << 16


class Output:
    """Writes whole frames to stdout; one lock so the two threads never interleave a line."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self.closed = False

    def send(self, frame: bytes) -> None:
        with self._lock:
            if self.closed:
                return
            try:
                self._stream.write(frame)
                self._stream.flush()
            except (BrokenPipeError, ValueError, OSError):
                self.closed = True  # the client went away; keep draining input until EOF
                log.warning("stdout is closed; replies are dropped")


class CallWorker(threading.Thread):
    """Runs daemon-bound jobs one at a time, in the order they arrived."""

    def __init__(self, out: Output) -> None:
        super().__init__(name="vaultd-mcp-calls", daemon=True)
        self._out = out
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._cancelled: set[wire.RequestId] = set()
        self._lock = threading.Lock()

    def submit(self, job: Job) -> None:
        self._jobs.put(job)

    def cancel(self, request_id: wire.RequestId) -> None:
        """Drop a queued request the client cancelled; one already running still completes."""
        with self._lock:
            self._cancelled.add(request_id)

    def finish(self) -> None:
        self._jobs.put(None)
        self.join()

    def run(self) -> None:
        while (job := self._jobs.get()) is not None:
            with self._lock:
                if job.request_id in self._cancelled:
                    self._cancelled.discard(job.request_id)
                    continue
            try:
                frame = job.run()
            except Exception:  # noqa: BLE001 - a bug must cost one answer, never the session
                frame = internal_error(job.request_id)
            self._out.send(frame)


class Shim:
    """Feeds frames from stdin to the session and routes the answers."""

    def __init__(self, session: Session, out: Output, worker: CallWorker) -> None:
        self._session = session
        self._out = out
        self._worker = worker

    def handle(self, frame: bytes | OversizedFrame) -> None:
        if isinstance(frame, OversizedFrame):
            message = f"frame of {frame.size} bytes or more is over the {describe(MAX_FRAME_BYTES)} limit"
            self._out.send(wire.error_frame(None, McpError(RpcCode.INVALID_REQUEST, message)))
            return
        try:
            msg = wire.parse(frame)
        except wire.BadFrame as exc:
            self._out.send(wire.error_frame(exc.request_id, exc.error))
            return
        if isinstance(msg, wire.Ignored):
            log.debug("ignored a frame: %s", msg.why)
        elif isinstance(msg, wire.Notification):
            self._notify(msg)
        else:
            try:
                answer = self._session.prepare(msg)
            except Exception:  # noqa: BLE001 - a bug must cost one answer, never the session
                answer = internal_error(msg.id)
            if isinstance(answer, Job):
                self._worker.submit(answer)
            else:
                self._out.send(answer)

    def _notify(self, note: wire.Notification) -> None:
        """Notifications get no reply, whatever they hold; a cancel drops a queued call."""
        if note.method == "notifications/cancelled":
            try:
                params = wire.decode_object(note.params)
            except McpError:
                return
            request_id = params.get("requestId")
            if isinstance(request_id, (int, str)) and not isinstance(request_id, bool):
                self._worker.cancel(request_id)
        else:
            log.debug("notification %s", note.method)


def internal_error(request_id: wire.RequestId) -> bytes:
    """Log the exception being handled and answer -32603: the two threads' one catch-all boundary."""
    log.exception("internal error answering request %r", request_id)
    return wire.error_frame(request_id, McpError(RpcCode.INTERNAL_ERROR, "internal error in vaultctl mcp; see its stderr"))


def serve(stdin_fd: int = 0, stdout: BinaryIO | None = None, specs: list[AnySpec] | None = None) -> int:
    """Serve MCP on stdin/stdout until stdin closes; returns the exit status (0).

    ``specs``: the methods offered as tools (a toolset); None for every MCP method."""
    out = Output(stdout if stdout is not None else sys.stdout.buffer)
    sys.stdout = sys.stderr  # anything printed by accident must not corrupt the protocol stream
    worker = CallWorker(out)
    daemon = DaemonConnection()
    updates = ResourceUpdates(out.send)
    session = Session(
        daemon, ToolCatalogue(specs), result_bound=default_budget(os.environ), tools_page=tools_page_size(os.environ), updates=updates
    )
    shim = Shim(session, out, worker)
    worker.start()
    buffer = LineBuffer(MAX_FRAME_BYTES)
    try:
        while chunk := os.read(stdin_fd, READ_CHUNK):
            for frame in buffer.feed(chunk):
                shim.handle(frame)
        if buffer.pending:  # a last message without its newline is still a message
            for frame in buffer.feed(b"\n"):
                shim.handle(frame)
    except KeyboardInterrupt:
        log.info("interrupted")
    finally:
        worker.finish()
        updates.close()
        daemon.close()
    return 0
