"""The web console as the daemon sees it: a child process, started on demand, asked for tokens.

The console runs in a process of its own (``python -m vaultctl.console``), a client of the
daemon's socket on the ``editor`` channel. Its HTTP server, its Markdown renderer and its
browser-facing code therefore share nothing with the daemon's event loop: a console that
crashes, hangs or eats memory costs the console, never a write or a subscriber. The daemon only
holds the two ends of a pipe (:mod:`protocol.console_control`), and every wait on them is bounded.

The console exits when its standard input closes, so it ends with the daemon whichever way the
daemon ends; :meth:`ConsoleSupervisor.stop` closes it first, waits a moment, then kills it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

import anyio
import anyio.abc
import msgspec
import structlog

from protocol.console_control import MAX_CONTROL_LINE, Mint, Minted, Ready, decode_from_console, encode_line
from protocol.extras import CONSOLE
from protocol.framing import LineBuffer, OversizedFrame
from protocol.methods.console import TOKEN_TTL_S, ConsoleOpenResult
from vaultd.errors import Unavailable

if TYPE_CHECKING:
    from pathlib import Path

log = structlog.get_logger("vaultd.console")

CONSOLE_MODULE = "vaultctl.console"  #: started with this interpreter; the daemon never imports it
START_TIMEOUT_S = 20.0  #: from spawn to Ready (the console imports its web stack on a shared machine)
MINT_TIMEOUT_S = 5.0  #: from Mint to Minted
STOP_GRACE_S = 3.0  #: after its stdin closes, before SIGKILL
LOG_KEEP_BYTES = 1024 * 1024  #: the console's log is rotated once at a start when it is larger


class ConsoleBroken(Exception):
    """The console process said something unreadable, or nothing in time."""


class _Child:
    """One console process and its two pipes."""

    def __init__(self, process: anyio.abc.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.stdin = process.stdin
        self.stdout = process.stdout
        self.buffer = LineBuffer(MAX_CONTROL_LINE)
        self.lines: list[bytes] = []
        self.origin = ""

    @property
    def alive(self) -> bool:
        return self.process.returncode is None

    async def read(self) -> Ready | Minted:
        while not self.lines:
            chunk = await self.stdout.receive()
            for frame in self.buffer.feed(chunk):
                if isinstance(frame, OversizedFrame):
                    raise ConsoleBroken(f"a control line of {frame.size} bytes or more")
                self.lines.append(frame)
        try:
            return decode_from_console(self.lines.pop(0))
        except msgspec.DecodeError as exc:
            raise ConsoleBroken(f"an unreadable control line ({exc})") from None


class ConsoleSupervisor:
    """Starts the console when asked, mints its tokens, and stops it with the daemon."""

    def __init__(self, home: Path, socket_path: Path) -> None:
        self.home = home
        self.socket_path = socket_path
        self._lock = anyio.Lock()
        self._child: _Child | None = None
        self._tasks: anyio.abc.TaskGroup | None = None

    def bind(self, tasks: anyio.abc.TaskGroup) -> None:
        """The task group that reaps the console process (the daemon's, for its whole life)."""
        self._tasks = tasks

    @property
    def running(self) -> bool:
        return self._child is not None and self._child.alive

    async def open(self, vault: str | None) -> ConsoleOpenResult:
        """The console's address with a fresh one-time token, starting the console if needed.

        Raises:
            Unavailable: the console extra is not installed (the message names ``vaultd[console]``),
                or the console did not start or did not answer in time (its log says why).
        """
        async with self._lock:
            started = False
            child = self._child
            if child is None or not child.alive:
                child = await self._start()
                started = True
            try:
                with anyio.fail_after(MINT_TIMEOUT_S):
                    await child.stdin.send(encode_line(Mint(ttl_s=TOKEN_TTL_S, vault=vault)))
                    answer = await child.read()
            except (TimeoutError, ConsoleBroken, anyio.BrokenResourceError, anyio.EndOfStream, anyio.ClosedResourceError) as exc:
                await self._end(child, f"it did not answer a token request ({_why(exc)})")
                raise Unavailable(f"the console did not answer; see {self._log_path()}") from None
            if not isinstance(answer, Minted):
                await self._end(child, "it answered a token request out of turn")
                raise Unavailable(f"the console did not answer; see {self._log_path()}")
            return ConsoleOpenResult(url=answer.url, origin=child.origin, pid=child.process.pid, started=started, expires_s=TOKEN_TTL_S)

    async def stop(self) -> bool:
        """Stop the console if it runs; True when one was running."""
        async with self._lock:
            child, self._child = self._child, None
            if child is None or not child.alive:
                return False
            await self._end(child, "stopped")
            return True

    # -- the process -----------------------------------------------------------------------

    def _log_path(self) -> Path:
        return self.home / "logs" / "console.log"

    async def _start(self) -> _Child:
        """Start the console's process and wait for its first control line, the address it serves.

        Raises:
            Unavailable: UNAVAILABLE, the console extra is not installed, the process could not
                be started, or it did not report a 127.0.0.1 address in time (see its log).
        """
        # Asked of this interpreter, the one the console would run under, before anything starts:
        # without its web stack the console could only die on an import, with its log to say why.
        if (absence := CONSOLE.absence()) is not None:
            raise Unavailable(absence)
        log_path = self._log_path()
        log_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            if log_path.stat().st_size > LOG_KEEP_BYTES:
                log_path.replace(log_path.with_suffix(".log.1"))
        except FileNotFoundError:
            pass
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LISTEN_", "VAULTD_FAULTS"))}
        env.update(VAULTD_HOME=str(self.home), VAULTD_SOCKET=str(self.socket_path), VAULTD_NO_AUTOSTART="1")
        fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            process = await anyio.open_process(
                [sys.executable, "-m", CONSOLE_MODULE],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=fd,
                env=env,
                start_new_session=True,  # the daemon's terminal signals are the daemon's to handle
            )
        except OSError as exc:
            raise Unavailable(f"the console could not be started: {exc.strerror or exc}") from exc
        finally:
            os.close(fd)
        child = _Child(process)
        try:
            with anyio.fail_after(START_TIMEOUT_S):
                ready = await child.read()
        except (TimeoutError, ConsoleBroken, anyio.EndOfStream, anyio.BrokenResourceError) as exc:
            await self._end(child, f"it did not start ({_why(exc)})")
            raise Unavailable(f"the console did not start; see {log_path}") from None
        if not isinstance(ready, Ready) or not ready.origin.startswith("http://127.0.0.1:"):
            await self._end(child, "its first control line was not a ready 127.0.0.1 address")
            raise Unavailable(f"the console did not start; see {log_path}")
        child.origin = ready.origin
        self._child = child
        if self._tasks is not None:
            self._tasks.start_soon(self._reap, child)
        log.info("console started", pid=process.pid, origin=ready.origin)
        return child

    async def _reap(self, child: _Child) -> None:
        """Wait for the process to end (however it ends) and forget it."""
        code = await child.process.wait()
        if self._child is child:
            self._child = None
            log.warning("console exited", pid=child.process.pid, status=code)

    async def _end(self, child: _Child, why: str) -> None:
        """Close the console's stdin (its signal to stop), then wait, then kill: each step bounded."""
        if self._child is child:
            self._child = None
        process = child.process
        with anyio.CancelScope(shield=True):
            try:
                await child.stdin.aclose()
            except (OSError, anyio.BrokenResourceError):
                pass
            with anyio.move_on_after(STOP_GRACE_S):
                await process.wait()
            if process.returncode is None:  # it keeps nothing worth a second chance: a hung console is killed
                try:
                    process.kill()
                except ProcessLookupError:
                    pass
                with anyio.move_on_after(STOP_GRACE_S):
                    await process.wait()
            await child.stdout.aclose()
        log.info("console ended", pid=process.pid, why=why, status=process.returncode)


def _why(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "no answer in time"
    if isinstance(exc, (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError)):
        return "it exited"
    return str(exc)
