"""A progress bar on the terminal for an index build, drawn from the daemon's ``index.progress`` events.

Only on a terminal: when stderr is not a TTY (a script, a pipe, a CI log) nothing is drawn and
no subscription is made. The bar is one line, redrawn in place with a carriage return and
erased when the call ends, so what the command prints afterwards starts on a clean line.
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import TextIO

import msgspec

from protocol.methods.events import IndexProgress
from protocol.methods.subscriptions import EVENTS, EventsParams
from vaultctl.terminal import escape

_ERASE = "\r\x1b[K"
_events = msgspec.json.Decoder(EventsParams)


def on_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty() and os.environ.get("TERM", "") != "dumb"
    except (OSError, ValueError):
        return False


def _count(n: int) -> str:
    return f"{n:,}"


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def bar_line(label: str, parsed: int, total: int | None, elapsed_s: float, columns: int) -> str:
    """``label [#####.....] 1,234/5,000 notes  812/s  ETA 5s``, fitted to ``columns``."""
    rate = parsed / elapsed_s if elapsed_s > 0 else 0.0
    if total is None:
        return f"{label}: listing files... {_count(parsed)} notes parsed"[:columns]
    tail = f" {_count(parsed)}/{_count(total)} notes"
    if rate > 0:
        tail += f"  {rate:,.0f}/s"
        if total > parsed:
            tail += f"  ETA {_duration((total - parsed) / rate)}"
    width = max(0, min(40, columns - len(label) - len(tail) - 4))
    done = width if total == 0 else width * min(parsed, total) // total
    bar = f" [{'#' * done}{'.' * (width - done)}]" if width >= 10 else ""
    return f"{label}{bar}{tail}"[:columns]


class ProgressBar:
    """Draws the progress of one vault's build from ``subscription.events`` notifications."""

    def __init__(self, vault: str, label: str, stream: TextIO | None = None) -> None:
        self.vault = vault
        self.label = escape(label)
        self.stream = stream or sys.stderr
        self.drawn = 0  #: how many times the bar was drawn

    def notification(self, method: str, params: bytes) -> None:
        if method != EVENTS.name:
            return
        try:
            events = _events.decode(params).events
        except msgspec.DecodeError:
            return  # a notification this client cannot read is not a reason to fail the call
        for event in events:
            if (
                isinstance(event, IndexProgress) and event.vault == self.vault and event.meaning is None
            ):  # a build's, not the meaning fill's
                self.draw(event.parsed, event.total, event.elapsed_s)

    def draw(self, parsed: int, total: int | None, elapsed_s: float) -> None:
        columns = shutil.get_terminal_size((80, 24)).columns - 1
        self.stream.write(_ERASE + bar_line(self.label, parsed, total, elapsed_s, columns))
        self.stream.flush()
        self.drawn += 1

    def close(self) -> None:
        if self.drawn:
            self.stream.write(_ERASE)
            self.stream.flush()
