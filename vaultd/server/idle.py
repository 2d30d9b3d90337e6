"""Exiting when idle, for a socket-activated daemon: an unused daemon then costs nothing.

Only a daemon whose listener belongs to a service manager may do this. The manager keeps
listening after the daemon exits, so a connection that arrives at any moment, before, during or
after the exit, waits in its listen queue and starts the daemon again; nothing is refused. A
daemon that bound the socket itself would have to remove it, and a client arriving then would
find nobody.

"Quiet" means no connection open (so no request in flight, no subscriber) and no vault still
building its first index, for the whole quiet time: each connection that opens or closes starts
the wait again. The daemon's side of the boundary (a connection accepted just as the accept loop
stops) is handled where connections are accepted: see ``Daemon._accept_until_end``.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from collections.abc import Callable

MAX_IDLE_EXIT_S = 7 * 24 * 3600.0  #: a week; beyond that "never" (0) says it better


class End(enum.Enum):
    """Why the daemon stops serving."""

    STOP = "stop"  #: a signal or daemon.stop
    IDLE = "idle"  #: quiet for the idle time (socket-activated only)


class QuietTimer:
    """Waits for ``quiet_s`` seconds in which nothing happened and nothing was busy."""

    def __init__(self, quiet_s: float) -> None:
        self.quiet_s = quiet_s
        self._changed = anyio.Event()

    def activity(self) -> None:
        """A connection opened or closed: the quiet time starts again."""
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_quiet(self, busy: Callable[[], bool]) -> None:
        """Return once ``quiet_s`` seconds passed with no activity and ``busy()`` is false at the end.

        While ``busy()`` stays true without activity (a vault indexing), it is asked again every
        ``quiet_s`` seconds; nothing polls faster than that.
        """
        while True:
            changed = self._changed
            with anyio.move_on_after(self.quiet_s):
                await changed.wait()
            if not changed.is_set() and not busy():
                return


def parse_idle_exit(text: str) -> float:
    """``--idle-exit SECONDS``: 0 means never; otherwise above 0 and at most a week.

    Raises:
        ValueError: the text is not such a number; the message names the bounds.
    """
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value <= MAX_IDLE_EXIT_S:  # also false for nan
        raise ValueError(f"--idle-exit takes seconds from 0 (never) to {MAX_IDLE_EXIT_S:g}, not {text!r}")
    return value
