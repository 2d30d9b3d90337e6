"""Watching a vault through Linux's inotify directly: woken by the kernel, never by a timer.

watchfiles polls a queue its thread fills: it sleeps ``step`` ms, and delivers a batch once the
queue has not grown for one step. A change therefore waits one to two steps (45 ms on average at
30 ms) before the index hears of it, and every step wakes the process, watched or not (0.2 % of
a core, idle). Here the event loop waits on the inotify descriptor: a change is read the moment
the kernel queues it, a write's freshness barrier comes back in a few milliseconds, and an idle
daemon is not woken at all.

What a recursive watch must do itself, and watchfiles (the notify crate) did for us:

- A watch per folder. A folder created or moved in gets its own watches, and the folder itself
  is reported, with every entry found in it while its watches were added: files made before
  its watch existed raised no event of their own.
- A folder moved away (or out of the vault) loses its watches at once, or events from wherever
  it went would be reported under its old name.
- The kernel's queue is bounded; when it overflows, or the vault folder itself goes, the watch
  fails and its owner reconciles by stat and starts a new one, as after any watcher failure.

A reader drains the descriptor into a set of paths while the consumer refreshes, so a checkout
of many thousands of files does not overflow the queue while a batch is being indexed. A batch
is handed over once the folder has been quiet for 5 ms (30 ms in a burst, a batch of 8 paths or
more; at most 100 ms after its first event, 250 ms for the batch that opens a burst): the halves
of a rename arrive together, and a checkout comes in batches big enough to be one bulk change,
not one file at a time. A burst lasts only while its batches stay big, so one write after another
is never held as one. A batch holding a freshness cookie is handed over at once, and a barrier
needs no cookie at all: ``settle`` reads the queue, cuts the gather short and waits until the
batch is applied.

Names are bytes to the kernel and decoded with surrogateescape, as ``os`` does: a name that is
not UTF-8 is reported like any other (the index skips it with S07) and does not stop the watch.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys
from typing import TYPE_CHECKING

import anyio

from vaultd.vault.layout import COOKIE_PREFIX, SKIPPED_DIRS, STATE_DIR

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

_IN_MODIFY = 0x2
_IN_ATTRIB = 0x4
_IN_CLOSE_WRITE = 0x8
_IN_MOVED_FROM = 0x40
_IN_MOVED_TO = 0x80
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_Q_OVERFLOW = 0x4000
_IN_IGNORED = 0x8000
_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000
_IN_EXCL_UNLINK = 0x04000000
_IN_ISDIR = 0x40000000
_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = os.O_CLOEXEC

#: What each folder's watch asks for: every way a name in it can appear, change or go.
WATCH_MASK = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
    | _IN_ONLYDIR
    | _IN_DONT_FOLLOW
    | _IN_EXCL_UNLINK
)
QUIET_S = 0.005  #: a batch is handed over once no event has come for this long...
BUSY_PATHS = 8  #: ...but a batch of more than one write's few paths is a burst (a checkout), which may stall:
BUSY_QUIET_S = 0.03  #: it waits this long for the next event, as watchfiles' step did...
GATHER_S = 0.1  #: ...and a batch is handed over this long after its first event, or, when it
OPENING_GATHER_S = 0.25  #: opens a burst, after this long: a checkout starts slowly, and its
#: first batch should be big enough to be seen as one bulk change (BULK_MIN_CHANGES)
_HEADER = struct.Struct("iIII")  #: struct inotify_event: wd, mask, cookie, len (then the name)
_READ_BYTES = 1 << 16


class WatchFailed(Exception):
    """The watch can no longer be trusted (queue overflow, the vault folder gone, no watches left)."""


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None
    if not all(hasattr(libc, name) for name in ("inotify_init1", "inotify_add_watch", "inotify_rm_watch")):
        return None
    libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
    return libc


_LIBC = _libc()


def available() -> bool:
    """inotify can be used here (Linux, with a C library that has it)."""
    return _LIBC is not None


def watched_folder(rel: str) -> bool:
    """A folder whose entries are watched: none inside a skipped folder, except the runtime
    folder itself, where the freshness cookies are dropped."""
    parts = rel.split("/") if rel else []
    if parts == [STATE_DIR]:
        return True
    return not any(p in SKIPPED_DIRS for p in parts)


def reported(rel: str) -> bool:
    """A path the index hears of: everything outside the skipped folders, and the cookies."""
    parts = rel.split("/")
    if parts[0] == STATE_DIR:
        return len(parts) == 2 and parts[1].startswith(COOKIE_PREFIX)
    return not any(p in SKIPPED_DIRS for p in parts)


class TreeWatch:
    """An inotify watch over every folder of one vault, reporting vault-relative paths."""

    def __init__(self, root: Path) -> None:
        if _LIBC is None:
            raise WatchFailed("inotify is not available on this system")
        self._libc = _LIBC
        self.root = os.fspath(root)
        fd = _LIBC.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            raise WatchFailed(f"cannot start inotify: {os.strerror(ctypes.get_errno())}")
        self.fd = fd
        self._folders: dict[int, str] = {}  #: watch descriptor -> vault-relative folder ("" is the root)
        self._watches: dict[str, int] = {}  #: the reverse
        self._pending: set[str] = set()
        self._ready: anyio.Event | None = None  #: made in run(): the watch may be set up in a worker thread
        self._failure: WatchFailed | None = None
        self._busy_until = 0.0  #: until when a new batch counts as the rest of a burst
        self._cookie_seen = False  #: the pending batch holds a freshness cookie: hand it over now
        self._handing = False  #: a batch is with ``on_batch`` (being applied to the index)
        self._cut = False  #: a barrier waits: hand the batch over now, without waiting for quiet
        self._taken = 0  #: batches taken for ``on_batch`` so far
        self._applied = 0  #: batches ``on_batch`` has finished
        self._applied_event: anyio.Event | None = None  #: set (and replaced) as each batch is finished; made in run()
        self._stopped = False  #: run() has ended: no batch will be applied any more
        try:
            self._add_tree("", report=False)  # what is there now is the index's to read
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    @property
    def folders(self) -> int:
        return len(self._folders)

    # -- the watches ------------------------------------------------------------------------

    def _add(self, rel: str) -> bool:
        path = os.path.join(self.root, rel) if rel else self.root
        wd = self._libc.inotify_add_watch(self.fd, os.fsencode(path), WATCH_MASK)
        if wd < 0:
            code = ctypes.get_errno()
            if code == errno.ENOSPC:
                raise WatchFailed("the system's inotify watch limit is reached (fs.inotify.max_user_watches)")
            if not rel:
                raise WatchFailed(f"cannot watch the vault folder: {os.strerror(code)}")
            return False  # gone, or no longer a folder, since it was listed: its parent reports that
        old = self._folders.get(wd)
        if old is not None and old != rel:
            self._watches.pop(old, None)  # the same folder under a new name (moved)
        self._folders[wd] = rel
        self._watches[rel] = wd
        return True

    def _add_tree(self, rel: str, *, report: bool = True) -> None:
        """Watch ``rel`` and every folder below it, never through a symlink.

        What a new folder held before its watch was added (a checkout writes into a folder
        moments after making it) raised no event of its own: with ``report``, every entry found
        is reported as if it had.
        """
        stack = [rel]
        while stack:
            folder = stack.pop()
            if not watched_folder(folder) or not self._add(folder):
                continue
            try:
                with os.scandir(os.path.join(self.root, folder) if folder else self.root) as entries:
                    for entry in entries:
                        child = f"{folder}/{entry.name}" if folder else entry.name
                        if report and reported(child):
                            self._pending.add(child)
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(child)
            except OSError:
                continue  # gone meanwhile: its parent's events say so

    def _drop_tree(self, rel: str) -> None:
        """Stop watching ``rel`` and everything below it (moved away: its events would lie)."""
        below = rel + "/"
        for folder in [f for f in self._watches if f == rel or f.startswith(below)]:
            wd = self._watches.pop(folder)
            self._folders.pop(wd, None)
            self._libc.inotify_rm_watch(self.fd, wd)

    # -- events -----------------------------------------------------------------------------

    def _read(self) -> None:
        """Take every event the kernel has queued into the pending paths."""
        while True:
            try:
                data = os.read(self.fd, _READ_BYTES)
            except BlockingIOError:
                return
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
                start = offset + _HEADER.size
                name = data[start : start + length].split(b"\0", 1)[0]
                offset = start + length
                self._event(wd, mask, name)

    def _event(self, wd: int, mask: int, name: bytes) -> None:
        if mask & _IN_Q_OVERFLOW:
            raise WatchFailed("the kernel's inotify event queue overflowed")
        folder = self._folders.get(wd)
        if mask & _IN_IGNORED:
            if folder is not None and self._watches.get(folder) == wd:
                del self._watches[folder]
            self._folders.pop(wd, None)
            return
        if folder is None:
            return
        if mask & (_IN_DELETE_SELF | _IN_MOVE_SELF):
            if folder == "":
                raise WatchFailed("the vault folder was moved or removed")
            return  # its parent reports the name
        if not name:  # about the watched folder itself (its mode, say): the folder is the path
            if folder and reported(folder):
                self._pending.add(folder)
            return
        rel = f"{folder}/{os.fsdecode(name)}" if folder else os.fsdecode(name)
        if mask & _IN_ISDIR:
            if mask & (_IN_CREATE | _IN_MOVED_TO):
                self._add_tree(rel)
            elif mask & _IN_MOVED_FROM:
                self._drop_tree(rel)
        if reported(rel):
            self._pending.add(rel)
            if folder == STATE_DIR and mask & _IN_CREATE:  # a cookie dropped (not one taken away)
                self._cookie_seen = True

    # -- running ----------------------------------------------------------------------------

    async def settle(self) -> bool:
        """Return once every change made before this call has been handed over and applied.

        The kernel queues a change's event before the call that made it returns: what is queued
        now is read at once, the batch gathering it is handed over without waiting for quiet, and
        this waits for that batch to be applied. A freshness barrier without a cookie file.
        Returns False when the watch cannot say (it failed, or is not running yet).
        """
        if self._failure is not None or self._stopped or self.fd < 0 or self._ready is None or self._applied_event is None:
            return False
        try:
            self._read()
        except WatchFailed as exc:
            self._failure = exc
            self._ready.set()
            return False
        if self._pending:
            target = self._taken + 1
            self._cut = True
            self._ready.set()
        elif self._handing:
            target = self._taken
        else:
            return True
        while self._applied < target:
            if self._failure is not None or self._stopped:
                return False
            await self._applied_event.wait()
        return True

    async def _drain(self) -> None:
        while self._failure is None:
            await anyio.wait_readable(self.fd)
            try:
                self._read()
            except WatchFailed as exc:
                self._failure = exc
            if self._ready is not None:
                self._ready.set()

    async def run(self, on_batch: Callable[[set[str]], Awaitable[None]]) -> None:
        """Hand every batch of changed vault-relative paths to ``on_batch``, in the order the
        kernel reported them, until cancelled. Raises :class:`WatchFailed` when the watch can no
        longer be trusted; the paths read before the failure are handed over first."""
        self._ready = anyio.Event()
        self._applied_event = anyio.Event()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._drain)
                while True:
                    await self._ready.wait()
                    await self._gather()
                    self._ready = anyio.Event()
                    batch, self._pending, self._cookie_seen, self._cut = self._pending, set(), False, False
                    if batch:
                        self._taken += 1
                        self._handing = True
                        try:
                            await on_batch(batch)
                        finally:
                            self._handing = False
                            self._applied += 1
                            done, self._applied_event = self._applied_event, anyio.Event()
                            done.set()
                    if self._failure is not None:
                        raise self._failure
        finally:
            self._stopped = True
            self._applied_event.set()  # a barrier waiting on a watch that ended learns it here

    async def _gather(self) -> None:
        """Let a batch grow while its events keep coming: until none has come for ``QUIET_S``
        (``BUSY_QUIET_S`` in a burst), at most ``GATHER_S`` after the first (``OPENING_GATHER_S`` for
        the batch that opens a burst). One syscall's events arrive as one batch this way (a
        rename into another folder queues its two halves one after the other, and a reader on
        another core could take the first alone), and a checkout arrives in batches big enough to
        be one bulk change, not as thousands of tiny ones. A batch that holds a freshness cookie
        is handed over at once: the kernel queues events in order, so every change made before
        the cookie was dropped is in it already, and a write's barrier waits for nothing more."""
        first = anyio.current_time()
        busy = self._busy_until > first  #: the batch before was a burst, handed over moments ago
        limit = GATHER_S if busy else OPENING_GATHER_S
        while self._failure is None and not self._cookie_seen and not self._cut:
            left = first + limit - anyio.current_time()
            if left <= 0:
                break
            busy = busy or len(self._pending) >= BUSY_PATHS
            self._ready = anyio.Event()
            with anyio.move_on_after(min(BUSY_QUIET_S if busy else QUIET_S, left)) as quiet:
                await self._ready.wait()
            if quiet.cancelled_caught:
                break
        if len(self._pending) >= BUSY_PATHS:  # a burst goes on only while its batches stay big
            self._busy_until = anyio.current_time() + GATHER_S
