"""A vault's checkouts: sealed records in ``.vaultd/checkouts/``, copies in a scratch folder outside it.

The record of a checkout holds the bytes of each note as it was checked out (the base of the
three-way merge) and, once returned, the copies as they were returned: what the proposal shows
and what applying it re-plans from. It is sealed under the daemon's key like a proposal, so a
record edited by hand (or by an agent's shell) is never used. The copies live in a folder beside
the daemon's home, ``<home>-checkouts/<vault>/<id>/`` (or under ``$VAULTD_CHECKOUTS``), never in
the vault nor in the home itself: the index, search and lint never see them, and an agent's own
file tools, which the guard keeps off the vaults and off vaultd's home, may edit them freely.
vaultd reads them back only at the return, bounded, as regular files inside that folder.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import threading
import time
from pathlib import Path

import msgspec
import structlog

from protocol.methods.checkouts import (
    MAX_CHECKOUT_BYTES,
    MAX_KEPT_CHECKOUTS,
    CheckoutInfo,
    CheckoutNote,
    CheckoutState,
    CheckoutSummary,
)
from vaultd.errors import LimitExceeded, NotFound, PolicyRefused
from vaultd.fsio import ReadRefused, Refusal, read_regular, write_atomic
from vaultd.txn import journal, seal
from vaultd.vault.layout import STATE_DIR

log = structlog.get_logger("vaultd.checkout")

RECORDS_DIR = f"{STATE_DIR}/checkouts"  #: vault-relative
SCRATCH_ENV = "VAULTD_CHECKOUTS"  #: where checkouts' copies go, when set (an absolute folder)
_DOMAIN = b"vaultd-checkout\0"
_SUFFIX = ".json"
_MAX_RECORD_BYTES = 3 * MAX_CHECKOUT_BYTES + 1024 * 1024  #: base, returned copies, and what JSON adds


class Copy(msgspec.Struct, kw_only=True):
    path: str
    base: str  #: the note's text when checked out
    returned: str | None = None  #: the copy's text when returned (None: not returned, or not edited)
    reached: str | None = None


class Record(msgspec.Struct, kw_only=True):
    id: str
    vault: str
    name: str
    state: CheckoutState
    created: float
    folder: str  #: the scratch folder (absolute)
    copies: list[Copy]
    proposal: str | None = None
    decided: float | None = None


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Record)


def new_id(now: float) -> str:
    return time.strftime("c%Y%m%d%H%M%S", time.gmtime(now)) + "-" + secrets.token_hex(4)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def scratch_root(home: Path) -> Path:
    """The folder of every checkout's copies: ``$VAULTD_CHECKOUTS``, or ``<home>-checkouts`` beside
    the home (outside it: the guard refuses agents' edits inside vaultd's home)."""
    chosen = os.environ.get(SCRATCH_ENV)
    if chosen and os.path.isabs(chosen):
        return Path(chosen)
    return home.parent / f"{home.name}-checkouts"


def scratch_folder(home: Path, vault_id: str, checkout_id: str) -> Path:
    return scratch_root(home) / vault_id / checkout_id


def copy_path(record: Record, path: str) -> Path:
    return Path(record.folder) / path


class CheckoutStore:
    """One vault's checkout records. Every method does file work: call it from a worker thread;
    callers that change records hold the vault's writer lock."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folder = root / RECORDS_DIR
        self._lock = threading.Lock()

    def _check_folder(self, *, create: bool) -> bool:
        """Whether the folder exists (made when ``create``).

        Raises:
            Unavailable: UNAVAILABLE, the folder is not vaultd's own (a symlink, another user's).
        """
        return journal.own_folder(self.root, self.folder, create=create, shown=RECORDS_DIR, keeps="checkouts")

    def _read(self, path: Path) -> Record | None:
        """The record at ``path``, or None when its seal fails (logged; never used)."""
        try:
            data, _ = read_regular(path, _MAX_RECORD_BYTES)
        except ReadRefused:
            log.warning("refused a checkout record", name=path.name, reason="not a regular file of a readable size")
            return None
        mac, sep, body = data.partition(b"\n")
        if not sep or not seal.verify(seal.installed_key(), _DOMAIN + body, mac):
            log.warning("refused a checkout record", name=path.name, reason="its seal does not match")
            return None
        try:
            record = _decoder.decode(body)
        except msgspec.DecodeError:
            return None
        return record if f"{record.id}{_SUFFIX}" == path.name else None

    def get(self, checkout_id: str) -> Record:
        """The checkout's record, its seal checked now.

        Raises:
            NotFound: NOT_FOUND, no such checkout is kept.
            PolicyRefused: POLICY, its record fails the seal; it is never used.
        """
        with self._lock:
            if not self._check_folder(create=False):
                raise NotFound(f"no checkout {checkout_id}; see checkout.list")
            path = self.folder / f"{checkout_id}{_SUFFIX}"
            try:
                record = self._read(path)
            except FileNotFoundError:
                raise NotFound(f"no checkout {checkout_id} (never made, or dropped); see checkout.list") from None
        if record is None:
            raise PolicyRefused(f"checkout {checkout_id} is not used: its record changed since vaultd wrote it")
        return record

    def records(self) -> list[Record]:
        """Every readable record, newest first."""
        with self._lock:
            if not self._check_folder(create=False):
                return []
            found = []
            for entry in sorted(os.scandir(self.folder), key=lambda e: e.name):
                if entry.name.endswith(_SUFFIX):
                    try:
                        record = self._read(Path(entry.path))
                    except OSError:
                        continue
                    if record is not None:
                        found.append(record)
        found.sort(key=lambda r: (r.created, r.id), reverse=True)
        return found

    def put(self, record: Record) -> None:
        """Store a record sealed, then drop the oldest closed ones past the bound.

        Raises:
            LimitExceeded: LIMIT, the record would be over its bound; nothing is stored.
        """
        body = _encoder.encode(record)
        if len(body) > _MAX_RECORD_BYTES:
            raise LimitExceeded(f"the checkout's record would be {len(body)} bytes, over its {_MAX_RECORD_BYTES}-byte bound")
        with self._lock:
            self._check_folder(create=True)
            write_atomic(self.folder / f"{record.id}{_SUFFIX}", seal.seal(seal.installed_key(), _DOMAIN + body) + b"\n" + body)
        self._expire(keep=record.id)

    def _expire(self, keep: str) -> None:
        kept = self.records()
        over = len(kept) - MAX_KEPT_CHECKOUTS
        closed = sorted((r for r in kept if r.state is not CheckoutState.OPEN and r.id != keep), key=lambda r: (r.created, r.id))
        with self._lock:
            for record in closed[: max(over, 0)]:
                try:
                    os.unlink(self.folder / f"{record.id}{_SUFFIX}")
                except FileNotFoundError:
                    pass
                log.info("checkout record dropped", checkout=record.id, bound=MAX_KEPT_CHECKOUTS, vault=str(self.root))


_stores: dict[Path, CheckoutStore] = {}
_stores_lock = threading.Lock()


def store_for(root: Path) -> CheckoutStore:
    with _stores_lock:
        store = _stores.get(root)
        if store is None:
            store = _stores[root] = CheckoutStore(root)
        return store


# -- the scratch folder ------------------------------------------------------------------------------


def write_copies(record: Record) -> None:
    """Make the scratch folder and write each copy (private to the user, as vaultd's own files)."""
    folder = Path(record.folder)
    folder.parent.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # private to the user, as the home
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    for c in record.copies:
        target = copy_path(record, c.path)
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        target.write_bytes(c.base.encode("utf-8"))


def read_copy(record: Record, path: str) -> str | None:
    """The copy's text as the agent left it; None when it is gone.

    Raises:
        PolicyRefused: POLICY, the copy is not a regular file inside the scratch folder (a symlink,
            a folder, a path leading out), or not UTF-8.
        LimitExceeded: LIMIT, the copy is over the checkout's byte bound.
    """
    folder = Path(record.folder)
    target = copy_path(record, path)
    real = Path(os.path.realpath(target.parent))
    if real != Path(os.path.realpath(folder)) and Path(os.path.realpath(folder)) not in real.parents:
        raise PolicyRefused(f"the copy of {path} is not inside the checkout's folder; nothing was returned")
    try:
        data, _ = read_regular(target, MAX_CHECKOUT_BYTES)
    except FileNotFoundError:
        return None
    except ReadRefused as exc:
        if exc.refusal is Refusal.TOO_BIG:
            raise LimitExceeded(f"the copy of {path} is over {MAX_CHECKOUT_BYTES} bytes; nothing was returned") from exc
        raise PolicyRefused(f"the copy of {path} is not a regular file ({exc.refusal.value}); nothing was returned") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PolicyRefused(f"the copy of {path} is not UTF-8 text; nothing was returned") from exc


def drop_copies(record: Record) -> None:
    shutil.rmtree(record.folder, ignore_errors=True)


# -- answers -----------------------------------------------------------------------------------------


def info_of(record: Record, edited: set[str] | None = None) -> CheckoutInfo:
    """The record as callers see it; ``edited``: the copies found edited now (an open checkout)."""
    notes = [
        CheckoutNote(
            path=c.path,
            copy=str(copy_path(record, c.path)),
            base_sha=sha(c.base),
            edited=(c.path in edited) if edited is not None else (c.returned is not None and c.returned != c.base),
            reached=c.reached,
        )
        for c in record.copies
    ]
    return CheckoutInfo(
        id=record.id,
        vault=record.vault,
        name=record.name,
        state=record.state,
        created=record.created,
        folder=record.folder,
        notes=notes,
        proposal=record.proposal,
    )


def summary_of(record: Record) -> CheckoutSummary:
    return CheckoutSummary(
        id=record.id,
        name=record.name,
        state=record.state,
        created=record.created,
        notes=len(record.copies),
        folder=record.folder if record.state is CheckoutState.OPEN else "",
        proposal=record.proposal,
    )
