"""Giving freed memory back to the system after a burst of large replies.

glibc keeps freed heap memory in its arenas (one per thread that allocated), so after many large
replies are freed the process stays as big as its busiest moment. ``malloc_trim(0)`` returns the
free pages of every arena. It costs a walk of the heap, so the daemon calls it only when the last
connection closes after replies of at least ``TRIM_AFTER_BYTES`` were queued at once. Elsewhere
(musl, macOS) there is no such call and this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

TRIM_AFTER_BYTES = 8 * 1024 * 1024


def _find_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_trim = _find_trim()


def release_freed_memory() -> bool:
    """Return free heap pages to the system where the C library can; True when it tried."""
    if _trim is None:
        return False
    _trim(0)
    return True
