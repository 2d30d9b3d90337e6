"""One vault's work documents, in ``.vaultd/work/<id>.json``: what an agent said it is doing,
how far it is, and the operations and proposals its session made under it.

The tag is the record: an operation the session applies in the vault while its work runs is
added to that work's ``ops``. Cancelling undoes those operations only where their journals say
they are the session's own (:mod:`vaultd.ops.work_cancel`), so a record is a list to choose from,
never a licence to undo anyone else's work.
"""

from __future__ import annotations

import secrets
import threading
import time
from typing import TYPE_CHECKING

import msgspec
import structlog

from protocol.location import VAULT_STATE_DIR
from protocol.methods.work import MAX_WORK, MAX_WORK_BYTES, MAX_WORK_OPS, WorkState, WorkSummary
from vaultd.errors import Conflict, LimitExceeded, NotFound, Unavailable, VaultError
from vaultd.sessions.files import read_records, remove_record, write_record
from vaultd.txn import journal

if TYPE_CHECKING:
    from pathlib import Path

log = structlog.get_logger("vaultd.sessions")

WORK_DIR = f"{VAULT_STATE_DIR}/work"
_SUFFIX = ".json"
_ID_ROOM = "x" * 32  #: as long as any operation or proposal id, to test a record's room for one more
_decoder = msgspec.json.Decoder(WorkSummary)


def new_work_id(now: float) -> str:
    return "w" + time.strftime("%Y%m%d%H%M%S", time.localtime(now)) + "-" + secrets.token_hex(4)


class WorkStore:
    """One vault's work records, cached in memory once read; every change is written through."""

    def __init__(self, root: Path, vault: str) -> None:
        self.root = root
        self.vault = vault
        self.folder = root / WORK_DIR
        self._lock = threading.RLock()
        self._work: dict[str, WorkSummary] | None = None

    def _own_folder(self, *, create: bool) -> bool:
        """Whether the work folder exists (made when ``create``).

        Raises:
            Unavailable: UNAVAILABLE, it (or ``.vaultd/`` above it) is a link, not a folder, or
                another user's: no record is read from it or written through it.
        """
        return journal.own_folder(self.root, self.folder, create=create, shown=WORK_DIR, keeps="work documents")

    def _load(self) -> dict[str, WorkSummary]:
        """Every record, read once.

        Raises:
            Unavailable: UNAVAILABLE, the work folder is not vaultd's own.
        """
        if self._work is not None:
            return self._work
        if not self._own_folder(create=False):
            self._work = {}
            return self._work
        found, unreadable = read_records(self.folder, _SUFFIX, MAX_WORK_BYTES, _decoder.decode, lambda w: w.id)
        for name in unreadable:
            log.warning("unreadable work record left alone", vault=self.vault, name=name)
        self._work = found
        return found

    def _write(self, work: WorkSummary) -> None:
        """Write the record whole and keep it in the cache.

        Raises:
            LimitExceeded: LIMIT, the record would be over its byte bound.
            Unavailable: UNAVAILABLE, the work folder cannot be made or written.
        """
        data = msgspec.json.encode(work)
        if len(data) > MAX_WORK_BYTES:
            raise LimitExceeded(f"work {work.id} would be {len(data)} bytes, over the {MAX_WORK_BYTES}-byte bound")
        self._own_folder(create=True)
        try:
            write_record(self.folder / f"{work.id}{_SUFFIX}", data)
        except OSError as exc:
            raise Unavailable(f"{WORK_DIR} cannot hold work records: {exc.strerror or exc}") from exc
        self._load()[work.id] = work

    def all(self) -> list[WorkSummary]:
        """Every kept work record, newest first."""
        with self._lock:
            return sorted(self._load().values(), key=lambda w: (w.started, w.id), reverse=True)

    def get(self, work_id: str) -> WorkSummary:
        """The work record.

        Raises:
            NotFound: NOT_FOUND, no such work is kept in this vault.
        """
        with self._lock:
            work = self._load().get(work_id)
        if work is None:
            raise NotFound(f"no work {work_id} in vault '{self.vault}'; see 'vaultctl work'")
        return work

    def running_for(self, session: str | None) -> WorkSummary | None:
        """The session's running work here (a session runs one at a time per vault), if any."""
        if session is None:
            return None
        with self._lock:
            return next((w for w in self._load().values() if w.session == session and w.state is WorkState.RUNNING), None)

    def start(self, session: str | None, what: str, kind: str, notes: list[str]) -> WorkSummary:
        """A new running work for ``session`` (None: a person's).

        Raises:
            Conflict: CONFLICT, the session already runs a work here.
            LimitExceeded: LIMIT, :data:`MAX_WORK` records are kept and every one is running.
        """
        with self._lock:
            running = self.running_for(session)
            if running is not None:
                raise Conflict(f"work {running.id} ({running.what}) still runs in vault '{self.vault}'; finish or cancel it first")
            kept = self._load()
            if len(kept) >= MAX_WORK:
                closed = sorted((w for w in kept.values() if w.state is not WorkState.RUNNING), key=lambda w: w.updated)
                if not closed:
                    raise LimitExceeded(f"vault '{self.vault}' keeps {MAX_WORK} running work documents already; finish some first")
                for old in closed[: len(kept) - MAX_WORK + 1]:
                    remove_record(self.folder / f"{old.id}{_SUFFIX}")
                    kept.pop(old.id, None)
            now = time.time()
            work = WorkSummary(
                id=new_work_id(now),
                vault=self.vault,
                session=session,
                what=what,
                kind=kind,
                notes=list(dict.fromkeys(notes)),
                state=WorkState.RUNNING,
                started=now,
                updated=now,
            )
            self._write(work)
            return work

    def change(self, work: WorkSummary, **fields: object) -> WorkSummary:
        with self._lock:
            changed = msgspec.structs.replace(work, updated=time.time(), **fields)
            self._write(changed)
            return changed

    def tag(self, session: str | None, *, op_id: str | None = None, proposal: str | None = None) -> str | None:
        """Add an operation or proposal of ``session`` to its running work here; the work's id, or None.

        Called once the operation is applied (or the proposal stored), so it never fails the
        call: :meth:`check_room` refused beforehand what the work could not take, and a record
        that cannot be written now (its folder gone, the disk full) is logged.
        """
        with self._lock:
            try:
                work = self.running_for(session)
            except VaultError as exc:
                log.warning("work record not told of an operation", vault=self.vault, op=op_id or proposal, error=exc.message)
                return None
            if work is None:
                return None
            try:
                if op_id is not None and op_id not in work.ops:
                    self.change(work, ops=[*work.ops, op_id][-MAX_WORK_OPS:])
                if proposal is not None and proposal not in work.proposals:
                    self.change(self.get(work.id), proposals=[*work.proposals, proposal][-MAX_WORK_OPS:])
            except VaultError as exc:
                log.warning("work record not told of an operation", vault=self.vault, work=work.id, op=op_id or proposal, error=exc.message)
            return work.id

    def check_room(self, session: str | None, *, proposal: bool = False) -> None:
        """Refuse a write (or a proposal) the session's running work could not take, before it is made.

        Raises:
            LimitExceeded: LIMIT, the work holds :data:`MAX_WORK_OPS` operations, or one more id
                would take its record over :data:`MAX_WORK_BYTES`.
        """
        with self._lock:
            work = self.running_for(session)
        if work is None:
            return
        if not proposal and len(work.ops) >= MAX_WORK_OPS:
            raise LimitExceeded(f"work {work.id} holds {MAX_WORK_OPS} operations already; finish it and start another")
        more = {"proposals": [*work.proposals, _ID_ROOM]} if proposal else {"ops": [*work.ops, _ID_ROOM]}
        if len(msgspec.json.encode(msgspec.structs.replace(work, **more))) > MAX_WORK_BYTES:
            raise LimitExceeded(f"work {work.id} is at its {MAX_WORK_BYTES}-byte bound; finish it and start another")


_stores: dict[Path, WorkStore] = {}
_stores_lock = threading.Lock()


def work_for(root: Path, vault: str) -> WorkStore:
    """The one work store of the vault at ``root``."""
    with _stores_lock:
        store = _stores.get(root)
        if store is None or store.vault != vault:
            store = _stores[root] = WorkStore(root, vault)
        return store
