"""Handing memory freed after a burst of work back to the system, and building without the
cyclic collector.

A cold build holds every parsed note and its text at once (tens of MB at 10,000 notes) and frees
them when it is done; glibc keeps the freed pages in the daemon's heap, under whatever is still
alive above them, so the resident size stays at its peak for as long as the daemon runs.
``malloc_trim`` returns every free page in the heap. Elsewhere (musl, macOS) this is a no-op.
"""

from __future__ import annotations

import ctypes
import gc
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


def _malloc_trim() -> Callable[[int], int] | None:
    # The symbols the process already has (glibc's, where the interpreter links it) first: finding
    # the C library by name imports ctypes.util and, on Linux, runs ``ldconfig -p`` at every start.
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    if trim is None:
        from ctypes.util import find_library

        try:
            libc = ctypes.CDLL(find_library("c") or "libc.so.6")
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


_PAUSE_LOCK = threading.Lock()
_paused = 0  #: builds running with the collector paused (in any thread)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Build without the cyclic garbage collector: a build allocates many small objects and no
    cycles, and collections over a growing heap would otherwise take half its time (a warm
    start's maps of 30,000 notes: one collection after another). Process-wide, so counted:
    the collector comes back when the last build running ends."""
    global _paused
    with _PAUSE_LOCK:
        _paused += 1
        if _paused == 1:
            gc.disable()
    try:
        yield
    finally:
        with _PAUSE_LOCK:
            _paused -= 1
            if _paused == 0:
                gc.enable()
