"""Newline-delimited JSON framing, shared by the daemon, the CLI and the MCP shim.

One JSON message per line, UTF-8, bounded. The buffer is sans-I/O so the daemon (anyio) and the
client (a plain blocking socket, to keep ``vaultctl`` light) frame bytes the same way. An
oversized frame is reported once and then skipped up to its newline, so the connection stays
usable after a bad frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from protocol.limits import MAX_FRAME_BYTES as MAX_FRAME_BYTES  # declared with the other bounds

if TYPE_CHECKING:
    from collections.abc import Iterator


@dataclass(frozen=True, slots=True)
class OversizedFrame:
    """Stands in for a frame that exceeded the bound; its bytes were discarded."""

    size: int  #: how many bytes were seen before the frame was given up (a lower bound)


class LineBuffer:
    """Accumulates received bytes and yields complete frames (without the newline)."""

    def __init__(self, max_frame: int = MAX_FRAME_BYTES) -> None:
        self._max = max_frame
        self._buf = bytearray()
        self._skipping = False  # inside an oversized frame, dropping bytes until its newline
        self._skipped = 0

    def feed(self, data: bytes) -> Iterator[bytes | OversizedFrame]:
        """Add received bytes; yield every frame they complete, in order."""
        self._buf += data
        while True:
            nl = self._buf.find(b"\n")
            if self._skipping:
                if nl < 0:
                    self._skipped += len(self._buf)
                    self._buf.clear()
                    return
                self._skipped += nl
                del self._buf[: nl + 1]
                self._skipping = False
                yield OversizedFrame(self._skipped)
                continue
            if nl < 0:
                if len(self._buf) > self._max:
                    self._skipping, self._skipped = True, len(self._buf)
                    self._buf.clear()
                return
            if nl > self._max:
                size = nl
                del self._buf[: nl + 1]
                yield OversizedFrame(size)
                continue
            frame = bytes(self._buf[:nl])
            del self._buf[: nl + 1]
            if frame.endswith(b"\r"):
                frame = frame[:-1]
            if frame.strip():
                yield frame

    @property
    def pending(self) -> int:
        """Bytes of an incomplete frame held back (for a peer that hangs up mid-frame)."""
        return len(self._buf)
