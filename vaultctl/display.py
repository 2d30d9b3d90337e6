"""What the terminal in front of vaultctl can show: colour or not, and how wide a line may be.

Colour follows ``--color auto|always|never`` (a command-line flag wins over the environment);
``auto`` colours only a terminal, and never when ``NO_COLOR`` is set to anything non-empty
(no-color.org) or ``TERM`` is ``dumb``. Width is ``$COLUMNS`` when set, else the terminal's;
output that goes to a pipe or a file is not wrapped unless ``$COLUMNS`` asks for it, so a
script reading text gets whole lines (``--json`` is the format for scripts anyway).

Colour is added after escaping (:mod:`vaultctl.terminal`): the only escape sequences vaultctl
prints are the ones this module writes.
"""

from __future__ import annotations

import enum
import os
import sys
from typing import TextIO


class ColorMode(enum.StrEnum):
    AUTO = "auto"
    ALWAYS = "always"
    NEVER = "never"


class Paint(enum.StrEnum):
    """SGR sequences for what vaultctl colours; each is closed with :data:`RESET`."""

    BOLD = "\x1b[1m"
    DIM = "\x1b[2m"
    MATCH = "\x1b[1;31m"  #: a search term inside a snippet
    PATH = "\x1b[35m"  #: a note's path heading a hit or a page
    OK = "\x1b[32m"
    WARN = "\x1b[33m"
    FAIL = "\x1b[1;31m"
    ADDED = "\x1b[32m"
    REMOVED = "\x1b[31m"
    HUNK = "\x1b[36m"


RESET = "\x1b[0m"
MIN_WIDTH = 20  #: below this, wrapping helps nobody: lines are left whole

_mode = ColorMode.AUTO


def set_mode(mode: ColorMode) -> None:
    global _mode
    _mode = mode


def colour(stream: TextIO | None = None, environ: dict[str, str] | None = None) -> bool:
    """Whether to colour what goes to ``stream`` (stdout by default)."""
    if _mode is ColorMode.NEVER:
        return False
    if _mode is ColorMode.ALWAYS:
        return True
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    target = stream or sys.stdout
    try:
        return target.isatty()
    except ValueError:  # closed
        return False


def width(stream: TextIO | None = None, environ: dict[str, str] | None = None) -> int | None:
    """Columns a line may take: ``$COLUMNS``, else the terminal's; None (no wrapping) for a pipe."""
    env = os.environ if environ is None else environ
    raw = env.get("COLUMNS", "").strip()
    if raw.isdigit() and int(raw) > 0:
        return max(int(raw), MIN_WIDTH)
    target = stream or sys.stdout
    try:
        if target.isatty():
            return max(os.get_terminal_size(target.fileno()).columns, MIN_WIDTH)
    except (OSError, ValueError):
        pass
    return None


def height(stream: TextIO | None = None) -> int | None:
    """Lines on the terminal ``stream`` shows, or None when it is not a terminal."""
    target = stream or sys.stdout
    try:
        return os.get_terminal_size(target.fileno()).lines if target.isatty() else None
    except (OSError, ValueError):
        return None


def paint(text: str, style: Paint, on: bool) -> str:
    """``text`` in ``style`` when ``on``; escaped text stays escaped (this adds only SGR codes)."""
    return f"{style}{text}{RESET}" if on and text else text
