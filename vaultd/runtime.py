"""Taking a vault: its state folder (``.vaultd/``) and the lock the daemon holds while it owns it.

The lock is an flock on ``<vault>/.vaultd/lock``, so it dies with the process: a killed daemon
never leaves a vault locked. The folder carries a ``.gitignore`` of ``*`` so a vault that is a
git repository never commits the journal or the lock.

The lock is held on a folder, but every read and write reaches the vault by its path. So the
folder's identity (device and inode) is recorded when the lock is taken and checked on every
access: a folder renamed away, with another one put at its path, is marked MISSING and neither
read nor written (another process may lock the newcomer); the original coming back is taken
again. The check is one ``stat`` per request, so an idle daemon spends nothing on it.

A build's progress is reported from here too (``index.progress`` events and ``daemon.status``):
the build counts in a :class:`~vaultd.vault.index.BuildTally` from its worker thread, where nothing
waits for anyone; :func:`report_progress` reads the tally on the event loop a few times a second
while the build runs, and records an event only when the count moved, so a stalled walk or an
idle vault records nothing.
"""

from __future__ import annotations

import datetime as dt
import errno
import math
import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.abc
import structlog

from protocol import lock_holder
from protocol.methods.events import Event, IndexProgress, IndexReady, VaultHealthChanged, VaultRemoved
from protocol.methods.indexing import BuildProgress
from protocol.methods.vaults import SpecSourceHealth, VaultEntry, VaultHealth, VaultState
from vaultd.errors import Unavailable
from vaultd.events.log import EventLog
from vaultd.fsio import LockHeld, record_holder, take_lock
from vaultd.git.keeper import GitKeeper
from vaultd.retrieve.live import coverage as meaning_coverage
from vaultd.retrieve.live import passages_for, stop_meaning
from vaultd.retrieve.meaning import absence as meaning_absence
from vaultd.txn import journal, seal
from vaultd.txn.engine import RecoveryReport, recover
from vaultd.vault.index import BuildTally
from vaultd.vault.layout import GITIGNORE_NAME, LOCK_NAME, STATE_DIR
from vaultd.vault.rebuild import RebuildQueue, Rebuilt, Turn, rebuild
from vaultd.vault.watcher import LiveIndex
from vaultd.waits import first_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from vaultd.vault.index import VaultIndex

log = structlog.get_logger("vaultd.vault")

INDEX_WAIT_S = 300.0  #: how long a read or vault.add waits for a vault's first index

FolderId = tuple[int, int]  #: (st_dev, st_ino) of a vault's root folder


def folder_id(path: Path) -> FolderId | None:
    """The identity of the folder at ``path`` (following a symlink, as every path access does);
    None when nothing, or not a folder, is there."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


class VaultRuntime:
    """One registered vault as the daemon holds it."""

    def __init__(self, entry: VaultEntry) -> None:
        self._entry = entry
        self.root = Path(entry.path)
        self.state = VaultState.INDEXING
        self.message = ""
        self._lock_fd: int | None = None
        self.live: LiveIndex | None = None
        self._failed = anyio.Event()
        self._settings_changed = anyio.Event()  #: set (and replaced) when the entry is
        self.writer = anyio.Lock()  #: one mutation at a time per vault
        self.recovery: RecoveryReport | None = None
        self.folder: FolderId | None = None  #: the root's identity when the lock was taken
        self._lost_to = False  #: while MISSING: whether another folder was at the path when last looked
        self._home: Path | None = None
        self._tasks: anyio.abc.TaskGroup | None = None
        self.git = GitKeeper(self.root, entry, self.writer)  #: checkpoints and quiet snapshots
        #: what happened here, for subscribers: a new log (a new clock instance) per taking of the folder
        self.events = EventLog(entry.id)
        self._log_running: EventLog | None = None  #: the log whose bulk-state task runs
        self._health_sent: tuple[VaultState, str] | None = None
        self._rebuilds = RebuildQueue(self._rebuild_now)
        self.rebuilding: BuildTally | None = None  #: the tally of a vault.rebuild under way

    @property
    def entry(self) -> VaultEntry:
        return self._entry

    @entry.setter
    def entry(self, entry: VaultEntry) -> None:
        """New registry settings (vault.set, vault.git): the git keeper reads the same entry."""
        self._entry = entry
        self.git.entry = entry
        self._settings_changed.set()
        self._settings_changed = anyio.Event()

    async def settings_changed(self, seconds: float) -> None:
        """Return when the vault's settings change, or after ``seconds``."""
        with anyio.move_on_after(seconds):
            await self._settings_changed.wait()

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    def take(self) -> bool:
        """Create the state folder and take the vault lock; False (and the state says why) if not."""
        folder = folder_id(self.root)
        if folder is None:
            self.state, self.message = VaultState.MISSING, f"{self.root} is not a folder any more"
            return False
        try:
            self.state_dir.mkdir(mode=0o700, exist_ok=True)
            problem = journal.folder_issue(self.state_dir)
            if problem is not None:
                # A vault can arrive with a .vaultd of its own; a symlink or another user's folder
                # would carry the lock and the journal (and what recovery writes) elsewhere.
                self.state = VaultState.ERROR
                self.message = (
                    f"{self.state_dir} {problem}; vaultd keeps its lock and journal only in a "
                    "folder of its own: move it away, then run 'vaultctl doctor'"
                )
                return False
            _write_gitignore(self.state_dir)
            fd = take_lock(self.state_dir / LOCK_NAME)
        except LockHeld:
            who = lock_holder.describe(lock_holder.holder(self.state_dir / LOCK_NAME))
            self.state = VaultState.LOCKED
            self.message = f"{who} holds the vault lock; stop it (or let it give the vault up), then run 'vaultctl doctor'"
            return False
        except OSError as exc:
            self.state, self.message = VaultState.ERROR, f"cannot prepare {self.state_dir}: {exc.strerror}"
            if exc.errno == errno.EROFS:
                self.message += (
                    "; if a service manager runs vaultd, its sandbox lets it write only in your home and the vaults "
                    "registered at install: run 'vaultctl daemon install' again to add this one"
                )
            return False
        if folder_id(self.root) != folder:
            os.close(fd)  # the folder was swapped while we took it: its lock is not this path's
            self.state, self.message = VaultState.MISSING, f"{self.root} was replaced while vaultd took it"
            return False
        record_holder(fd)
        self._lock_fd = fd
        self.folder = folder
        self.state, self.message = VaultState.INDEXING, ""
        return True

    def start_index(self, home: Path, tasks: anyio.abc.TaskGroup) -> None:
        self._home, self._tasks = home, tasks
        self._failed = anyio.Event()
        self.live = LiveIndex(self.root, home, still_ours=self.still_ours, feed=self._note_changes)
        self.live.on_change = self.git.saw
        self.state = VaultState.INDEXING
        self.publish_health()
        tasks.start_soon(self._run_index, home)
        tasks.start_soon(self.git.run)
        tasks.start_soon(self._report_build, self.live)
        if self._log_running is not self.events:
            self._log_running = self.events
            tasks.start_soon(self.events.run, self._reading_changes)

    async def _run_index(self, home: Path) -> None:
        assert self.live is not None
        live = self.live

        try:
            key = await anyio.to_thread.run_sync(seal.install, home)
            self.recovery = r = await anyio.to_thread.run_sync(recover, self.root, key)
            if r.rolled_back or r.finished or r.discarded or r.refused:
                log.info(
                    "journal recovered",
                    vault=self.entry.id,
                    rolled_back=[rb.op_id for rb in r.rolled_back],
                    left=[p for rb in r.rolled_back for p in rb.left],
                    temp_files=r.temp_files,
                    discarded=r.discarded,
                    remarked=r.remarked,
                    refused=[f.name for f in r.refused],
                )
            if r.refused:
                self.message = f"{len(r.refused)} journal folder(s) this daemon did not write were left untouched; see 'vaultctl doctor'"
            await anyio.to_thread.run_sync(self.git.prepare)
            await live.run()
        except Exception as exc:
            if live is not self.live:
                return  # the folder was lost meanwhile; that state says why
            log.exception("indexing failed", vault=self.entry.id)
            self.state, self.message = VaultState.ERROR, f"indexing failed: {exc}"
            self.publish_health()
            self._failed.set()
        if live is not self.live:
            live.close()  # stopped because its folder was lost: nothing refreshes it any more

    # -- the root's identity ---------------------------------------------------------------

    def still_ours(self) -> bool:
        """True while the path leads to the folder the lock was taken on.

        Checked on every request and watcher batch. A replaced folder is given up (MISSING, its
        watcher stopped, nothing read or written); the original folder back at its path is
        taken again (re-locked, recovered, re-indexed).
        """
        if self.folder is None or self.state == VaultState.ERROR:
            return self.state != VaultState.MISSING
        now = folder_id(self.root)
        if self.state == VaultState.MISSING:
            if now == self.folder:
                self._retake()
            elif self._lost_to != (now is not None):
                self._describe_loss(now)  # what is at the path changed since: say what is there now
                self.publish_health()
            return self.state != VaultState.MISSING
        if now != self.folder:
            self._lose(now)
            return False
        return True

    def check_root(self) -> None:
        """Raise UNAVAILABLE unless the vault's path still leads to the folder vaultd locked.

        Raises:
            Unavailable: UNAVAILABLE, the vault's path no longer leads to the locked folder.
        """
        if not self.still_ours():
            raise Unavailable(f"vault {self.entry.id!r} is missing: {self.message}")

    def owned_live(self) -> LiveIndex:
        """The index of the folder vaultd holds; UNAVAILABLE when it was lost or is not served.

        Raises:
            Unavailable: UNAVAILABLE, the folder was lost, or the vault failed or is not served.
        """
        self.check_root()
        if self.state == VaultState.ERROR or self.live is None:
            raise Unavailable(f"vault {self.entry.id!r} is unavailable: {self.message}")
        return self.live

    def _describe_loss(self, now: FolderId | None) -> None:
        """Say what is at the path now: a rename and a new folder's mkdir are two steps, seen apart."""
        there = "nothing is at that path now" if now is None else "another folder is at that path now"
        self._lost_to = now is not None
        self.message = (
            f"the vault folder {self.root} was renamed or removed and {there}; vaultd stopped reading and "
            f"writing it. Put the original folder back at that path and it is taken again, or register what is "
            f"there now: 'vaultctl vault remove {self.entry.id}', then 'vaultctl vault add {self.entry.id} "
            f"{self.root}'"
        )

    def _lose(self, now: FolderId | None) -> None:
        self.state = VaultState.MISSING
        self._describe_loss(now)
        log.error("vault folder replaced; vault given up", vault=self.entry.id, path=str(self.root), replaced=now is not None)
        live, self.live = self.live, None
        if live is not None:
            live.stop()
        self.publish_health()
        self._failed.set()  # wakes whoever waits for the lost index

    def _retake(self) -> None:
        if self._home is None or self._tasks is None:
            return
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # flock conflicts across descriptors: let go, then take it anew
            self._lock_fd = None
        # What happened while the folder was away was never seen: subscribers start over.
        self.events = self.events.successor_for("the vault folder was lost and taken back; re-query the vault")
        self._health_sent = None
        if not self.take():
            self.publish_health()
            log.warning("vault folder is back but could not be taken", vault=self.entry.id, reason=self.message)
            return
        self.start_index(self._home, self._tasks)
        self.message = (
            f"the vault folder came back at {dt.datetime.now().astimezone():%Y-%m-%d %H:%M}; vaultd re-locked, recovered and re-indexed it"
        )
        log.info("vault folder came back; vault taken again", vault=self.entry.id, path=str(self.root))

    def quarantine(self, reason: str) -> None:
        """Stop serving this vault (reads and writes) until the daemon restarts and recovers it."""
        self.state, self.message = VaultState.ERROR, reason
        self.publish_health()
        log.error("vault quarantined", vault=self.entry.id, reason=reason)

    async def wait_ready(self, timeout: float = INDEX_WAIT_S) -> None:
        """Wait for the index; a vault that is not owned, lost or failed raises UNAVAILABLE.

        Raises:
            Unavailable: UNAVAILABLE, the vault is lost, failed, not owned, re-taken while waiting,
                or still indexing.
        """
        live = await self._waited(lambda live: live.ready, timeout)
        if live.ready.is_set():
            if self.state == VaultState.INDEXING:
                self.state = VaultState.READY
            return
        if self._failed.is_set():
            raise Unavailable(f"vault {self.entry.id!r} could not be indexed: {self.message}")
        raise Unavailable(f"vault {self.entry.id!r} is still indexing; retry in a moment")

    async def _waited(self, event_of: Callable[[LiveIndex], anyio.Event], timeout: float) -> LiveIndex:
        """The live index once ``event_of`` it is set, its build failed, or ``timeout`` passed;
        the refusals every wait for the index shares come first.

        Raises:
            Unavailable: UNAVAILABLE, the vault is lost, failed, not owned, or re-taken while waiting.
        """
        self.check_root()
        if self.state == VaultState.ERROR:
            raise Unavailable(f"vault {self.entry.id!r} is unavailable: {self.message}")
        live, failed_event = self.live, self._failed
        if live is None:
            raise Unavailable(f"vault {self.entry.id!r} is {self.state}: {self.message}")
        with anyio.move_on_after(timeout):
            await first_of(event_of(live), failed_event)
        self.check_root()
        if live is not self.live:
            raise Unavailable(f"vault {self.entry.id!r} was re-taken while this call waited; retry")
        return live

    async def wait_table(self, timeout: float = INDEX_WAIT_S) -> VaultIndex:
        """Wait for the index's note table (not its name maps) and answer the index to read it
        from: for a read that needs the notes by path alone (a listing, a read by exact path),
        which a warm start serves before the maps are whole (see ``LiveIndex.table``). Its
        refusals are :meth:`wait_ready`'s.

        Raises:
            Unavailable: UNAVAILABLE, the vault is lost, failed, not owned, re-taken while waiting,
                or still indexing.
        """
        live = await self._waited(lambda live: live.table_ready, timeout)
        if self._failed.is_set():  # a build that failed after its table was whole serves nothing
            raise Unavailable(f"vault {self.entry.id!r} could not be indexed: {self.message}")
        table = live.table
        if table is None:
            raise Unavailable(f"vault {self.entry.id!r} is still indexing; retry in a moment")
        if live.ready.is_set() and self.state == VaultState.INDEXING:
            self.state = VaultState.READY
        return table

    async def index_settled(self) -> None:
        """Return once the index this instance started is built or has failed, or the vault is
        released (at once when no index was started)."""
        live = self.live
        if live is None:
            return
        async with anyio.create_task_group() as tg:

            async def settled() -> None:
                await first_of(live.ready, self._failed)
                tg.cancel_scope.cancel()

            async def released() -> None:
                await self.git.sleep(math.inf)
                tg.cancel_scope.cancel()

            tg.start_soon(settled)
            tg.start_soon(released)

    def release(self) -> None:
        self.git.stop()
        self.events.close(final=VaultRemoved())
        if self.live is not None:
            stop_meaning(self.live)
            self.live.stop()
            self.live.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    @property
    def owned(self) -> bool:
        return self._lock_fd is not None

    def health(self) -> VaultHealth:
        self.still_ours()
        if self.state == VaultState.INDEXING and self.live is not None and self.live.ready.is_set():
            self.state = VaultState.READY
        tally = self.rebuilding or (self.live.tally if self.live is not None and not self.live.ready.is_set() else None)
        return VaultHealth(
            id=self.entry.id,
            path=self.entry.path,
            state=self.state,
            message=self.message,
            notes=self.note_count(),
            progress=progress_of(tally) if tally is not None else None,
            meaning=meaning_coverage(self.live) if self.live is not None else None,
            domains=self.entry.effective_domains(),
            roles=self.entry.roles,
            specs=[SpecSourceHealth(id=s.id, path=s.path, missing=not os.path.exists(s.path)) for s in self.entry.specs],
        )

    # -- events ------------------------------------------------------------------------------

    def _note_changes(self, changes: list[Event]) -> None:
        """The live index's feed: note events go to the vault's current log."""
        self.events.notes(changes)

    def _reading_changes(self) -> bool:
        """Whether the index is taking in changes now (a bulk state stays open meanwhile)."""
        return self.live is not None and self.live.busy

    def publish_health(self) -> None:
        """Record ``vault.health`` when the state or its message differs from the last one recorded."""
        now = (self.state, self.message)
        if now != self._health_sent:
            self._health_sent = now
            self.events.record(VaultHealthChanged(state=self.state, message=self.message, notes=self.note_count()))

    async def _report_build(self, live: LiveIndex) -> None:
        """Progress while ``live`` builds, then ``index.ready`` and the ready state."""
        await report_progress(lambda: self.events, live.tally, live.ready, lambda: live is self.live and self.state != VaultState.ERROR)
        if live is not self.live or not live.ready.is_set():
            return
        self.events.record(IndexReady(notes=len(live.index.notes), seconds=round(live.build_seconds or 0.0, 3)))
        if self.state == VaultState.INDEXING:
            self.state = VaultState.READY
        self.publish_health()
        if meaning_absence() is None:
            # Passage vectors fill in behind the text index from now on (search already answers).
            try:
                await passages_for(live)
            except Exception:
                log.exception("chunk index did not open for the meaning filler", vault=self.entry.id)
                return
            await self._report_meaning(live)

    async def _report_meaning(self, live: LiveIndex) -> None:
        """``index.progress`` with the meaning coverage while ``live`` is served: every
        :data:`MEANING_TICK_S` at most, and only when the count of covered or total passages
        moved, so an idle or fully covered vault records nothing."""
        last: tuple[int, int] | None = None
        while live is self.live:
            now = meaning_coverage(live)
            if now is None:
                return
            if (now.covered, now.total) != last:
                last = (now.covered, now.total)
                notes = len(live.index.notes)
                elapsed = round(live.build_seconds or 0.0, 3)
                self.events.record(IndexProgress(parsed=notes, total=notes, elapsed_s=elapsed, meaning=now))
            await anyio.sleep(MEANING_TICK_S)

    async def rebuild(self, turn: Turn | None = None) -> Rebuilt:
        """Re-read every note into a new index while the old one serves reads (see :mod:`vaultd.vault.rebuild`).

        A request made while another rebuild waits to start joins it (see
        :class:`~vaultd.vault.rebuild.RebuildQueue`); ``turn``, when given, is entered before the
        rebuild starts (the daemon's turn for vault-wide work).

        Raises:
            Unavailable: UNAVAILABLE when the vault is not served (missing, locked, failed).
        """
        await self.wait_ready()
        return await self._rebuilds.request(self._tasks, turn)

    async def _rebuild_now(self, joined: int) -> Rebuilt:
        live = self.owned_live()
        tally = self.rebuilding = BuildTally(rebuild=True)
        done = anyio.Event()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(report_progress, lambda: self.events, tally, done, lambda: True)
                try:
                    result = await rebuild(live, tally)
                finally:
                    done.set()
        finally:
            self.rebuilding = None
        self.events.record(IndexReady(notes=result.notes, seconds=round(result.seconds, 3), rebuild=True))
        log.info(
            "index rebuilt",
            vault=self.entry.id,
            notes=result.notes,
            changed=result.changed,
            seconds=round(result.seconds, 3),
            requests=1 + joined,
        )
        return result

    def note_count(self) -> int:
        return len(self.live.index.notes) if self.live is not None else 0


def _write_gitignore(state_dir: Path) -> None:
    """Keep the folder out of git; created only, never written through a symlink or over a file."""
    try:
        fd = os.open(state_dir / GITIGNORE_NAME, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except FileExistsError:
        return
    try:
        os.write(fd, b"*\n")
    finally:
        os.close(fd)


PROGRESS_TICK_S = 0.25  #: the most often a build's progress is recorded
MEANING_TICK_S = 2.0  #: the most often the meaning coverage is recorded (index.progress)


def progress_of(tally: BuildTally) -> BuildProgress | None:
    """The tally as the protocol shows it; None before the build has begun."""
    if tally.started is None:
        return None
    return BuildProgress(
        parsed=tally.parsed,
        total=tally.total,
        reused=tally.reused,
        elapsed_s=round(time.monotonic() - tally.started, 3),
        rebuild=tally.rebuild,
    )


async def report_progress(events: Callable[[], EventLog], tally: BuildTally, done: anyio.Event, going: Callable[[], bool]) -> None:
    """Record ``index.progress`` in the vault's current log until ``done`` is set (then once more,
    if the count moved since), or until ``going()`` says the build was given up."""
    last: tuple[int, int | None] | None = None
    while going():
        with anyio.move_on_after(PROGRESS_TICK_S):
            await done.wait()
        now = progress_of(tally)
        if now is not None and (now.parsed, now.total) != last:
            events().record(IndexProgress.of(now))
            last = (now.parsed, now.total)
        if done.is_set():
            return
