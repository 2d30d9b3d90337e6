"""Handing memory freed after a burst of work back to the system.

A cold build holds every parsed note and its text at once (tens of MB at 10,000 notes) and frees
them when it is done; glibc keeps the freed pages in the daemon's heap, under whatever is still
alive above them, so the resident size stays at its peak for as long as the daemon runs.
``malloc_trim`` returns every free page in the heap. Elsewhere (musl, macOS) this is a no-op.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    trim = getattr(libc, "malloc_trim", None)
    if trim is None:
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim  # type: ignore[no-any-return]


_TRIM = _malloc_trim()


def can_trim() -> bool:
    return _TRIM is not None


def give_back() -> None:
    """Return the heap's free pages to the system (a few milliseconds over a large heap: call it
    from a worker thread, after the burst)."""
    if _TRIM is not None:
        _TRIM(0)
