"""Keeps one vault's index fresh: the start-up build, the watcher, and the freshness barrier.

One indexer per vault: refreshes run one at a time under ``_refreshing``, so the SQLite cache
has a single writer and the in-memory maps change in one place. Reads never wait for it.

The barrier follows Watchman's cookies: to answer "every change made before this call is
indexed", drop a marker file into ``.vaultd/`` and wait until the watcher delivers it; the
watcher reports events in order, so everything before the marker has been refreshed by then.
The inotify watch needs no cookie: a change's event is queued before the call that made it
returns, so the barrier reads the queue, has the batch holding it handed over at once, and
waits until that batch is applied (``TreeWatch.settle``).

Two watchers deliver the same thing, batches of vault-relative paths: on Linux the daemon's own
inotify watch (``inotify.py``: woken by the kernel, so a cookie comes back in a few milliseconds
and an idle daemon is never woken), elsewhere watchfiles (a batch once its queue has been still
for one 30 ms step).

A watcher that cannot run is not retried in a loop. watchfiles gives up on the first event that
names a path which is not UTF-8, and the error sticks to that watcher; a folder so named anywhere
in the vault fails every new watcher at once (setting it up opens the folder, which is an event);
inotify fails when its queue overflows or the vault folder goes. So failures in a row back off,
the first alone is logged, doctor reports it, and a fresh read walks the vault by stat rather
than wait for a cookie that cannot come back.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio
import anyio.abc
import structlog
import watchfiles

from protocol.methods.events import Event
from vaultd import faults
from vaultd.errors import Unavailable
from vaultd.memory import give_back
from vaultd.vault.cache import IndexCache, cache_file_name
from vaultd.vault.changes import refresh_changes
from vaultd.vault.index import BuildTally, VaultIndex
from vaultd.vault.inotify import TreeWatch, available, reported
from vaultd.vault.layout import COOKIE_PREFIX, STATE_DIR
from vaultd.vault.reading import Updates, compute_updates
from vaultd.vault.walk import walk

if TYPE_CHECKING:
    from pathlib import Path

log = structlog.get_logger("vaultd.index")

BARRIER_TIMEOUT_S = 5.0  #: past this, a fresh read falls back to a full stat reconcile
WATCH_STEP_MS = 30  #: watchfiles: how long it waits for more events before delivering a batch
WATCHER_ENV = "VAULTD_WATCHER"  #: "watchfiles" picks the portable watcher where inotify would serve
WATCH_RETRY_S = 0.25  #: the pause after the second failure in a row, doubled after each further one
WATCH_RETRY_MAX_S = 10.0  #: the longest pause between attempts to start a watcher again


class _WatchFilter(watchfiles.DefaultFilter):
    """The paths :func:`reported` keeps, for watchfiles (which hands over absolute paths)."""

    def __init__(self, root: Path) -> None:
        super().__init__(ignore_dirs=(), ignore_entity_patterns=())
        self._root = str(root)

    def __call__(self, change: watchfiles.Change, path: str) -> bool:
        return reported(os.path.relpath(path, self._root).replace(os.sep, "/"))


def watch_backend() -> str:
    """inotify where the kernel has it (woken by changes, not by a timer); watchfiles elsewhere,
    or when ``$VAULTD_WATCHER`` asks for it (the tests keep it exercised on Linux that way)."""
    return "inotify" if available() and os.environ.get(WATCHER_ENV) != "watchfiles" else "watchfiles"


def _always_ours() -> bool:
    return True


def _nobody(rels: set[str]) -> None:
    return None


#: Told the note events of each change applied to the index (on the event loop, never waiting).
NoteFeed = Callable[[list[Event]], None]


def _settled() -> None:
    """After a build, before the index is ready (a worker thread): the heap given back."""
    faults.point("build-settle")
    give_back()


class LiveIndex:
    def __init__(self, root: Path, home: Path, *, still_ours: Callable[[], bool] = _always_ours, feed: NoteFeed | None = None) -> None:
        self.root = root
        self.feed = feed
        self.backend = watch_backend()
        self.tally = BuildTally()  #: the first build's progress
        #: False once the path no longer leads to the folder the vault lock is on (the owner
        #: gives the vault up and stops this index); nothing is then read by that path.
        self.still_ours = still_ours
        self.cache_path = home / "indexes" / cache_file_name(str(root))
        self.index = VaultIndex(root, None)
        self.ready = anyio.Event()
        #: set once the first build's note table is whole (see :meth:`table`); ``ready`` comes after
        self.table_ready = anyio.Event()
        self._early: VaultIndex | None = None  #: the first build's index while its maps are filled
        self.build_seconds: float | None = None
        self.build_note = ""
        self._refreshing = anyio.Lock()
        self._cookies: dict[str, anyio.Event] = {}
        self._tree: TreeWatch | None = None  #: the inotify watch while it runs (its queue answers barriers)
        self._cookie_ids = itertools.count(1)
        self._stop = anyio.Event()
        self._pending: set[str] | None = None  #: paths reported while the first build runs
        self._lost_in_build = False  #: a watcher failed while the first build ran: reconcile after it
        #: why the watcher is down (None while it runs): fresh reads then reconcile by stat
        self.watch_problem: str | None = None
        #: told of every batch of changed paths the watcher delivers (the vault's git keeper)
        self.on_change: Callable[[set[str]], None] = _nobody
        #: Derived indexes kept beside this one (the chunk index): each gets every applied batch of
        #: updates in a worker thread, right after the cache, before the refresh returns.
        self.followers: list[Callable[[Updates], None]] = []

    # -- life cycle ----------------------------------------------------------------------

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Start watching, build the index, then apply what changed during the build.

        The watcher is proven live (a cookie comes back) before the build walks the folder, so a
        change is either seen by the walk or reported by the watcher; paths reported during the
        build are re-read right after it. No second walk is needed.
        """
        started = time.perf_counter()
        self._pending = set()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._watch)
            await self._prove_watching()
            index, note = await anyio.to_thread.run_sync(self._build)
            self.index, self.build_note = index, note
            # The built index answers reads of the table until ``ready`` (a cold build never
            # published one early): the table is whole from here on, as it was before.
            self._early = index
            self.table_ready.set()
            await anyio.to_thread.run_sync(_settled)  # the build's parsed notes and texts are freed by now
            pending, self._pending = self._pending, None
            if pending:
                await self.refresh(pending)
            if self._lost_in_build:
                await self.reconcile()
            self.build_seconds = time.perf_counter() - started
            log.info("index ready", vault=str(self.root), notes=len(index.notes), seconds=round(self.build_seconds, 3), detail=note)
            self.ready.set()
            self._early = None
            task_status.started()
            await self._stop.wait()
            tg.cancel_scope.cancel()

    async def _prove_watching(self) -> None:
        """Drop cookies until the watcher delivers one: from then on no event is lost."""
        for _ in range(100):
            if self.watch_problem is not None:
                return  # the watcher cannot run; fresh reads reconcile by stat instead
            name = self._drop_cookie()
            with anyio.move_on_after(0.1):
                await self._cookies[name].wait()
                return
            self._forget_cookie(name)
        log.warning("watcher did not deliver a cookie; freshness falls back to stat reconciles", vault=str(self.root))

    def stop(self) -> None:
        self._stop.set()

    @property
    def busy(self) -> bool:
        """A refresh is reading changes (or the index is held still for a plan or a rebuild)."""
        return self._refreshing.locked()

    def close(self) -> None:
        if self.index.cache is not None:
            self.index.cache.close()

    @property
    def table(self) -> VaultIndex | None:
        """The index whose note table, attachments and skipped files a read may use, once
        ``table_ready`` is set; its name maps only once ``ready`` is (None before).

        Between the two the index is the first build's, still on its thread: the table is whole
        and left alone until the build returns (every note on disk, a note changed while the
        daemon was down read again), while the build fills the maps, which nothing else reads
        then; what the watcher reports meanwhile waits in ``_pending``, and writes wait for
        ``ready``, as before."""
        return self.index if self.ready.is_set() else self._early

    def _table_whole(self, index: VaultIndex) -> None:
        """The build's table is whole (event loop): reads of the table alone may answer from it."""
        self._early = index
        self.table_ready.set()

    def _build(self) -> tuple[VaultIndex, str]:
        from anyio import from_thread  # the build's thread tells the event loop its table is whole

        self.cache_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        cache = IndexCache.open(self.cache_path)
        index = VaultIndex(self.root, cache)
        parsed, reused = index.build(self.tally, lambda: from_thread.run_sync(self._table_whole, index))
        note = f"cache {cache.outcome}; {parsed} parsed, {reused} reused"
        return index, note

    # -- watching ------------------------------------------------------------------------

    async def _watch(self) -> None:
        failures = 0  #: watchers in a row that failed before delivering a batch

        async def delivered(rels: set[str]) -> None:
            nonlocal failures
            failures, self.watch_problem = 0, None
            await self._on_paths(rels)

        while not self._stop.is_set():
            if failures > 1:
                with anyio.move_on_after(min(WATCH_RETRY_S * 2 ** (failures - 2), WATCH_RETRY_MAX_S)):
                    await self._stop.wait()
                if self._stop.is_set():
                    return
            try:
                async with anyio.create_task_group() as tg:
                    if failures:
                        tg.start_soon(self._probe)
                    if self.backend == "inotify":
                        await self._watch_inotify(delivered)
                    else:
                        await self._watch_watchfiles(delivered)
            except Exception as exc:  # noqa: BLE001 - any watcher failure (overflow, folder gone): reconcile, rewatch
                failures += 1
                self.watch_problem = _watch_problem(exc)
                if failures == 1:
                    log.warning("watcher failed; reconciling by stat", vault=str(self.root), error=self.watch_problem)
                if not self.still_ours():
                    continue  # given up (and stopped): another folder may be at this path now
                if not self.root.is_dir():
                    await anyio.sleep(1.0)
                    continue
                if self._pending is not None:
                    self._lost_in_build = True  # the build may have walked past the lost batch
                    continue
                await self.reconcile()

    async def _watch_inotify(self, delivered: Callable[[set[str]], Awaitable[None]]) -> None:
        tree = await anyio.to_thread.run_sync(TreeWatch, self.root)  # a watch per folder: a walk
        try:
            self._tree = tree
            await tree.run(delivered)
        finally:
            self._tree = None
            tree.close()

    async def _watch_watchfiles(self, delivered: Callable[[set[str]], Awaitable[None]]) -> None:
        async for changes in watchfiles.awatch(
            self.root,
            watch_filter=_WatchFilter(self.root),
            step=WATCH_STEP_MS,
            stop_event=self._stop,
            ignore_permission_denied=True,
            recursive=True,
        ):
            await delivered(self._relative(changes))

    async def _probe(self) -> None:
        """Drop a cookie for a watcher started after a failure: one that runs delivers it (and so
        clears ``watch_problem``) even when nothing else in the vault changes."""
        await anyio.sleep(WATCH_STEP_MS / 1000)
        try:
            name = self._drop_cookie()
        except OSError:
            return
        with anyio.move_on_after(1.0):
            await self._cookies[name].wait()
        self._forget_cookie(name)

    def _relative(self, changes: set[tuple[watchfiles.Change, str]]) -> set[str]:
        """watchfiles' absolute paths as vault-relative ones. It follows folder symlinks (the index
        never does): a path reached through one is kept only when its real place is inside the
        vault, under that name."""
        rels: set[str] = set()
        for _change, path in changes:
            if not self._inside(path):
                real = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
                if not self._inside(real):
                    continue
                path = real
            rels.add(os.path.relpath(path, self.root).replace(os.sep, "/"))
        return rels

    async def _on_paths(self, paths: set[str]) -> None:
        if not self.still_ours():
            return  # the events name paths that now lead into another folder
        rels: set[str] = set()
        cookies: list[str] = []
        for rel in paths:
            if rel.startswith(STATE_DIR + "/"):
                cookies.append(rel.partition("/")[2])
            else:
                rels.add(rel)
        if rels and self._pending is not None:
            self._pending |= rels  # still building: re-read these once the build is in
        elif rels:
            await self.refresh(rels)
        if rels:
            self.on_change(rels)
        for name in cookies:
            event = self._cookies.pop(name, None)
            if event is not None:
                event.set()
                self._forget_cookie(name)

    def _inside(self, path: str) -> bool:
        """True when no folder between the vault root and ``path`` is a symbolic link (the
        watcher follows folder symlinks; the index never does)."""
        parent = os.path.dirname(path)
        root = str(self.root)
        return os.path.realpath(parent) == os.path.normpath(parent) and (parent + os.sep).startswith(root + os.sep)

    # -- refreshing ----------------------------------------------------------------------

    @asynccontextmanager
    async def held_still(self) -> AsyncIterator[VaultIndex]:
        """The index, unchanged until the block ends, for a worker thread to read.

        Refreshes apply on the event loop while threads read; the index's maps are plain dicts
        and sets that a reader iterating them must not see change (Python raises, or a plan
        would mix two states). A refresh that comes meanwhile waits for the block to end.
        """
        async with self._refreshing:
            yield self.index

    async def refresh(self, rels: set[str]) -> None:
        """Re-read the given vault-relative paths (files or folders) and apply what changed."""
        async with self._refreshing:
            index = self.index
            found, gone = await anyio.to_thread.run_sync(index.stat_paths, rels)
            updates = await anyio.to_thread.run_sync(compute_updates, self.root, found, index.notes, gone)
            if updates:
                self._apply(index, updates)
                await anyio.to_thread.run_sync(index.write_cache, updates)
                await self._tell_followers(updates)

    async def _tell_followers(self, updates: Updates) -> None:
        for follow in list(self.followers):
            try:
                await anyio.to_thread.run_sync(follow, updates)
            except Exception:
                log.exception("a follower of the index failed; it is dropped and rebuilt when next used", vault=str(self.root))
                self.followers.remove(follow)

    async def reconcile(self) -> None:
        """Compare every file with the index by stat; re-read only what differs."""
        async with self._refreshing:
            index = self.index
            found = await anyio.to_thread.run_sync(lambda: list(walk(self.root)))
            present = {f.path for f in found}
            gone = [p for p in (*index.notes, *index.attachments, *index.skipped) if p not in present]
            updates = await anyio.to_thread.run_sync(compute_updates, self.root, found, index.notes, gone)
            if updates:
                self._apply(index, updates)
                await anyio.to_thread.run_sync(index.write_cache, updates)
                await self._tell_followers(updates)

    def _apply(self, index: VaultIndex, updates: Updates) -> None:
        """Apply a refresh, and tell the feed which notes it created, changed, removed or renamed."""
        changes = refresh_changes(index.notes, updates) if self.feed is not None else []
        index.apply(updates)
        if self.feed is not None and changes:
            self.feed(changes)

    # -- the freshness barrier -----------------------------------------------------------

    def _drop_cookie(self) -> str:
        name = f"{COOKIE_PREFIX}{os.getpid()}-{next(self._cookie_ids)}"
        self._cookies[name] = anyio.Event()
        (self.root / STATE_DIR / name).write_bytes(b"")
        return name

    def _forget_cookie(self, name: str) -> None:
        self._cookies.pop(name, None)
        (self.root / STATE_DIR / name).unlink(missing_ok=True)

    async def barrier(self) -> None:
        """Return once every change made before the call is in the index.

        Raises:
            Unavailable: UNAVAILABLE when the vault's path no longer leads to its folder.
        """
        await self.ready.wait()
        if not self.still_ours():
            raise Unavailable(f"the vault folder {self.root} was replaced; see 'vaultctl status'")
        if self.watch_problem is not None:
            await self.reconcile()  # no watcher to deliver a cookie: a stat walk sees every change before now
            return
        if (tree := self._tree) is not None:
            with anyio.move_on_after(BARRIER_TIMEOUT_S) as waited:
                if await tree.settle():
                    return  # every event queued before the call is applied: no cookie needed
            if waited.cancelled_caught:
                log.warning("watcher did not settle; reconciling by stat", vault=str(self.root))
                await self.reconcile()
                return
            # the watch ended or failed meanwhile: a cookie tells whether its successor runs
        try:
            name = self._drop_cookie()
        except OSError as exc:
            raise Unavailable(f"cannot reach the vault's state folder in {self.root}: {exc.strerror}") from exc
        event = self._cookies[name]
        with anyio.move_on_after(BARRIER_TIMEOUT_S):
            await event.wait()
            return
        self._forget_cookie(name)
        if not self.still_ours():
            raise Unavailable(f"the vault folder {self.root} was replaced; see 'vaultctl status'")
        log.warning("freshness cookie not delivered; reconciling by stat", vault=str(self.root))
        await self.reconcile()


def _watch_problem(exc: BaseException) -> str:
    """What stopped a watcher (the innermost error of the task groups around it); a name that is
    not UTF-8 is described, not quoted: it may be any bytes."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if "Unable to decode path" in str(exc):
        return "a file or folder name is not valid UTF-8 (see vault.issues, S07); rename it to watch the vault"
    return f"{type(exc).__name__}: {exc}"[:300]
