"""The daemon's state and life cycle: the registry, the vaults it owns, the listener, shutdown.

There is one ``Daemon`` per process and per home. Handlers see it only as a
:class:`~vaultd.api.host.Host`, through their ``CallContext``; nothing else holds global state.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import time
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio
import anyio.abc
import structlog

from protocol.framing import MAX_FRAME_BYTES
from protocol.methods.service import Activation
from vaultd import __version__
from vaultd.api import check_indexed
from vaultd.console.supervisor import ConsoleSupervisor
from vaultd.errors import NotFound, VaultError
from vaultd.events.wake import Wakers
from vaultd.registry.config import ConfigStore, DaemonLimits
from vaultd.server.accept import accept_forever, refuse_over_cap
from vaultd.server.budget import ReplyBudget
from vaultd.server.connection import Connection
from vaultd.server.idle import End, QuietTimer
from vaultd.server.listener import peer_uid
from vaultd.server.notify import Notifier
from vaultd.sessions.book import SessionBook

if TYPE_CHECKING:
    import socket
    from collections.abc import AsyncIterator, Callable
    from pathlib import Path

    from protocol.methods.sessions import SessionRecord
    from protocol.methods.vaults import VaultEntry
    from vaultd.runtime import VaultRuntime

log = structlog.get_logger("vaultd")

SHUTDOWN_GRACE_S = 5.0  #: how long in-flight requests may run on after a stop
KEEPER_CHECK_S = 5.0  #: how often a vault's settings are looked at for a keeper not started yet


class Daemon:
    def __init__(
        self,
        home: Path,
        socket_path: Path,
        *,
        max_frame: int = MAX_FRAME_BYTES,
        activation: Activation = Activation.SELF,
        idle_exit_s: float | None = None,
        notifier: Notifier | None = None,
    ) -> None:
        """``idle_exit_s``: stop after that many quiet seconds; only a socket-activated daemon
        may (see :mod:`vaultd.server.idle`), so it is ignored for ``Activation.SELF``."""
        check_indexed()  # the handlers' modules are imported at their methods' first calls
        self.home = home
        self.socket_path = socket_path
        self.version = __version__
        self.config = ConfigStore(home)
        self.limits = self._read_limits()
        self.max_frame = min(max_frame, self.limits.max_frame_bytes)
        self.budget = ReplyBudget(self.limits.reply_budget_bytes, self.limits.connection_reply_bytes)
        self.connections = 0
        self.vaults: dict[str, VaultRuntime] = {}
        self.vault_set = Wakers()  #: subscribers woken when a vault is attached or detached
        self.console = ConsoleSupervisor(home, socket_path)  #: the web console's child process, when asked for
        self.sessions = SessionBook(home / "sessions")  #: agent sessions' records
        self.sessions.on_end = self._session_ended
        self.started = time.monotonic()
        self.stop_requested = anyio.Event()
        self._in_flight = 0
        self._idle = anyio.Event()
        self._idle.set()
        self._vault_tasks: anyio.abc.TaskGroup  # set by serve(); vault indexers and watchers run in it
        self.activation = activation
        self.idle_exit_s = idle_exit_s if activation is not Activation.SELF and idle_exit_s else None
        self.notifier = notifier or Notifier(None)
        self._quiet = QuietTimer(self.idle_exit_s or 0.0)

    def _read_limits(self) -> DaemonLimits:
        """The ``daemon`` settings of config.json, read once; an unusable file means the defaults."""
        try:
            return self.config.load().daemon
        except VaultError as exc:
            log.error("config unusable; the daemon's limits are the defaults", error=exc.message)
            return DaemonLimits()

    def _session_ended(self, record: SessionRecord) -> None:
        """Write the ended session's note into the vaults that opt in, in the background."""
        if any(r.entry.session_notes is not None for r in self.vaults.values()):
            from vaultd.ops.session_note import write_session_notes  # a write: loaded when one is due

            self._vault_tasks.start_soon(write_session_notes, list(self.vaults.values()), record)

    # -- vaults ----------------------------------------------------------------------------

    async def open_registered(self) -> None:
        """Take every registered vault and start indexing it in the background.

        The socket is served meanwhile: a client can connect, say hello and ask for status
        while a large vault is still indexing; reads of that vault wait for its index.
        """
        try:
            migrated_from = self.config.migrate()
            if migrated_from is not None:
                log.info("config migrated", path=str(self.config.path), from_version=migrated_from)
            entries = self.config.load().vaults
        except VaultError as exc:
            # Fail closed: serve no vault rather than guess; status and doctor report the file.
            log.error("config unusable", error=exc.message)
            return
        for entry in entries:
            self.attach(entry)

    def attach(self, entry: VaultEntry) -> VaultRuntime:
        from vaultd.runtime import VaultRuntime  # loaded with the first vault: a daemon serving none stays small

        runtime = VaultRuntime(entry)
        self.vaults[entry.id] = runtime
        if runtime.take():
            runtime.start_index(self.home, self._vault_tasks)
            self._vault_tasks.start_soon(self._keep, runtime)
        runtime.publish_health()
        self.vault_set.wake()
        log.info("vault attached", vault=entry.id, state=str(runtime.state))
        return runtime

    async def _keep(self, runtime: VaultRuntime) -> None:
        """Start each of the vault's keepers (background sync, views, scheduled editions) once the
        vault opts in to it, looked at when its settings change (and every :data:`KEEPER_CHECK_S`)
        from when its index is built or has failed. Their modules are most of the write path: a vault that uses none of them
        never loads it for them, and one that does loads it after a restart's first answer. None
        of them acts before the index is there (sync and editions first sleep; the views' first
        pass, made as they start, covers any change before it), and each, once started, follows
        its setting itself (off again: idle)."""
        await runtime.index_settled()
        started: set[str] = set()
        while not runtime.git.stopped and len(started) < 3:
            entry = runtime.entry
            if "sync" not in started and entry.sync_interval_s:
                from vaultd.ops.git.sync import background as background_sync

                self._vault_tasks.start_soon(background_sync, runtime)
                started.add("sync")
            if "views" not in started and entry.views:
                from vaultd.ops.view_refresh import keep_views

                self._vault_tasks.start_soon(keep_views, runtime)
                started.add("views")
            if "editions" not in started and entry.volumes is not None and entry.volumes.schedule is not None:
                from vaultd.api.edition_methods import scheduled_editions

                self._vault_tasks.start_soon(scheduled_editions, runtime)
                started.add("editions")
            await runtime.settings_changed(KEEPER_CHECK_S)

    async def attach_and_index(self, entry: VaultEntry) -> VaultRuntime:
        """Take a newly added vault and build its index before answering the caller."""
        runtime = self.attach(entry)
        if runtime.owned:  # a vault another process holds is registered, reported, not indexed
            await runtime.wait_ready()
        return runtime

    def detach(self, vault_id: str) -> None:
        runtime = self.vaults.pop(vault_id, None)
        if runtime is not None:
            runtime.release()
            self.vault_set.wake()

    def vault(self, vault_id: str | None) -> VaultRuntime:
        """The named vault, or the default one (the first personal vault, else the first).

        Raises:
            NotFound: NOT_FOUND, no vault is registered, or none with that id.
        """
        if vault_id is None:
            if not self.vaults:
                raise NotFound("no vault is registered; add one with 'vaultctl vault add ID PATH'")
            personal = [v for v in self.vaults.values() if v.entry.kind == "personal"]
            return (personal or list(self.vaults.values()))[0]
        try:
            return self.vaults[vault_id]
        except KeyError:
            raise NotFound(f"no vault {vault_id!r} is registered; see 'vaultctl vault list'") from None

    # -- requests and shutdown -------------------------------------------------------------

    @asynccontextmanager
    async def tracking_request(self) -> AsyncIterator[None]:
        self._in_flight += 1
        self._idle = anyio.Event() if self._in_flight == 1 else self._idle
        try:
            yield
        finally:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._idle.set()

    async def serve(self, listener_sock: socket.socket) -> None:
        listener = await anyio.abc.SocketListener.from_socket(listener_sock)
        log.info("listening", socket=str(self.socket_path), pid=os.getpid(), version=self.version, activation=str(self.activation))
        async with anyio.create_task_group() as self._vault_tasks:
            self.console.bind(self._vault_tasks)
            await self.open_registered()
            self.notifier.ready(f"serving {len(self.vaults)} vault(s)")
            async with anyio.create_task_group() as conns:
                end = await self._accept_until_end(listener, conns)
                self.notifier.stopping("idle; exiting" if end is End.IDLE else "stopping")
                await listener.aclose()
                with anyio.move_on_after(SHUTDOWN_GRACE_S):
                    await self._idle.wait()
                conns.cancel_scope.cancel()
            await self.console.stop()
            for vault_id in list(self.vaults):
                self.detach(vault_id)
            self._vault_tasks.cancel_scope.cancel()
        log.info("stopped", reason=end.value, peak_reply_bytes=self.budget.peak, replies_over_budget=self.budget.refused)

    async def _accept_until_end(self, listener: anyio.abc.SocketListener, conns: anyio.abc.TaskGroup) -> End:
        """Accept connections until a stop, or until the idle time passes with nothing open.

        The boundary: a connection accepted while the accept loop was winding down is already
        counted (``start`` counts it before anything can be cancelled), so an idle end with a
        connection open goes back to serving instead of exiting. A connection not yet accepted
        stays in the service manager's listen queue and starts the next daemon.
        """
        while True:
            async with anyio.create_task_group() as accept:
                accept.start_soon(self._accept_loop, listener, conns)
                end = await self._wait_for_end()
                accept.cancel_scope.cancel()
            if end is End.STOP or self.connections == 0:
                return end
            log.info("a connection arrived as the idle time ran out; serving on", connections=self.connections)

    async def _wait_for_end(self) -> End:
        end = End.STOP
        async with anyio.create_task_group() as tg:

            async def stop() -> None:
                await self.stop_requested.wait()
                tg.cancel_scope.cancel()

            async def quiet() -> None:
                nonlocal end
                await self._quiet.wait_quiet(self._busy)
                end = End.IDLE
                tg.cancel_scope.cancel()

            tg.start_soon(stop)
            if self.idle_exit_s:
                tg.start_soon(quiet)
        if end is End.IDLE:
            log.info("idle; exiting until the next connection", idle_exit_s=self.idle_exit_s)
        return end

    def _busy(self) -> bool:
        """A connection is open, or a vault is still building its first index."""
        indexing = any(v.live is not None and not v.live.ready.is_set() for v in self.vaults.values())
        return self.connections > 0 or indexing

    async def _accept_loop(self, listener: anyio.abc.SocketListener, conns: anyio.abc.TaskGroup) -> None:
        def start(stream: anyio.abc.SocketStream) -> None:
            if self.connections >= self.limits.max_connections:
                conns.start_soon(refuse_over_cap, stream, self.limits.max_connections)
                return
            self.connections += 1  # counted here, before the task runs, so a burst cannot overshoot
            self._quiet.activity()
            conns.start_soon(self._connection, stream)

        await accept_forever(listener, start)

    async def _connection(self, stream: anyio.abc.SocketStream) -> None:
        try:
            async with stream:
                raw = stream.extra(anyio.abc.SocketAttribute.raw_socket)
                try:
                    uid = peer_uid(raw)
                except OSError:
                    uid = -1
                if uid != os.getuid():
                    log.warning("refused a connection from another user", peer_uid=uid)
                    return
                try:
                    await Connection(self, stream).run()
                except Exception:  # one broken connection must never stop the daemon
                    log.exception("connection failed; it was closed")
        finally:
            self.connections -= 1
            self._quiet.activity()
            self._maybe_trim()

    def _maybe_trim(self) -> None:
        """After a burst of large queued replies has drained, give the freed memory back."""
        budget = self.budget
        if budget.high_since_trim >= TRIM_AFTER_BYTES and budget.held * 4 < budget.high_since_trim:
            release_freed_memory()
            budget.high_since_trim = budget.held


#: Giving freed memory back to the system after a burst of large replies. glibc keeps freed heap
#: memory in its arenas (one per thread that allocated), so after many large replies are freed the
#: process stays as big as its busiest moment. ``malloc_trim(0)`` returns the free pages of every
#: arena. It costs a walk of the heap, so the daemon calls it only when the last connection closes
#: after replies of at least this many bytes were queued at once. Elsewhere (musl, macOS) there is
#: no such call and :func:`release_freed_memory` does nothing.
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
