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

import errno
import hashlib
import os
import secrets
import shutil
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

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
from protocol.methods.proposals import ProposalState
from vaultd.errors import LimitExceeded, NotFound, PolicyRefused, VaultError
from vaultd.fsio import ReadRefused, Refusal, read_regular, write_atomic
from vaultd.gate.store import store_for as proposals_for
from vaultd.txn import journal, seal
from vaultd.vault.layout import STATE_DIR

if TYPE_CHECKING:
    from collections.abc import Iterator

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
    agent: bool = False  #: made on an agent's channel (older records: a person's)
    session: str | None = None  #: the agent session that made it; only it may return or cancel it


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
        """Drop the oldest closed records past :data:`MAX_KEPT_CHECKOUTS`, but never one a pending
        proposal applies from: the person's decision needs it (those are bounded by the
        proposals' own bound)."""
        kept = self.records()
        over = len(kept) - MAX_KEPT_CHECKOUTS
        if over <= 0:
            return
        waiting = self._waiting_proposals()
        closed = sorted(
            (r for r in kept if r.state is not CheckoutState.OPEN and r.id != keep and (r.proposal is None or r.proposal not in waiting)),
            key=lambda r: (r.created, r.id),
        )
        with self._lock:
            for record in closed[: max(over, 0)]:
                try:
                    os.unlink(self.folder / f"{record.id}{_SUFFIX}")
                except FileNotFoundError:
                    pass
                log.info("checkout record dropped", checkout=record.id, bound=MAX_KEPT_CHECKOUTS, vault=str(self.root))

    def _waiting_proposals(self) -> set[str]:
        """The ids of the vault's pending proposals; every returned one counts as waiting when
        the proposals cannot be read (a record is kept rather than lost)."""
        try:
            entries, _ = proposals_for(self.root).entries()
        except VaultError:
            return {r.proposal for r in self.records() if r.proposal is not None}
        return {p.id for p in entries if p.state is ProposalState.PENDING}


_stores: dict[Path, CheckoutStore] = {}
_stores_lock = threading.Lock()


def store_for(root: Path) -> CheckoutStore:
    with _stores_lock:
        store = _stores.get(root)
        if store is None:
            store = _stores[root] = CheckoutStore(root)
        return store


# -- the scratch folder ------------------------------------------------------------------------------
#
# An agent's own tools may do anything inside the scratch root, including leaving a symbolic link
# where a folder was. So below the root nothing is looked up by path: each folder is opened one
# component at a time relative to its parent, never following a link, and each copy is made,
# read and dropped relative to its folder's descriptor. A link anywhere on the way refuses the
# step (POLICY); nothing is written, read or deleted through it.

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_folder(parent_fd: int | None, name: str, shown: str, *, create: bool) -> int:
    """The folder ``name`` (relative to ``parent_fd``; None: a path from the process), opened
    without following a link, and made (0700) when absent and ``create`` is set.

    Raises:
        FileNotFoundError: absent and ``create`` is off.
        PolicyRefused: POLICY, a link or not a folder stands there.
    """
    try:
        return _opened(parent_fd, name, shown)
    except FileNotFoundError:
        if not create:
            raise
    try:
        os.mkdir(name, 0o700, dir_fd=parent_fd)
    except FileExistsError:
        pass  # made meanwhile: opened like any other, never followed
    return _opened(parent_fd, name, shown)


def _opened(parent_fd: int | None, name: str, shown: str) -> int:
    """A folder's descriptor, opened without following a link.

    Raises:
        PolicyRefused: POLICY, ``name`` is a symbolic link or not a folder.
    """
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise PolicyRefused(f"{shown} is a symbolic link or not a folder; vaultd never follows one in a checkout's folder") from exc
        raise


def _parts(record: Record, path: str) -> list[str]:
    """The folders from the scratch root down to the copy of ``path``, and its file name.

    Raises:
        PolicyRefused: POLICY, the path could name something other than one file in the folder.
    """
    folder = Path(record.folder)
    parts = [folder.parent.name, folder.name, *path.split("/")]
    if "\x00" in path or any(p in ("", ".", "..") for p in parts):
        raise PolicyRefused(f"the copy of {path!r} cannot be a file inside the checkout's folder")
    return parts


@contextmanager
def _folder_of(record: Record, folders: list[str], *, create: bool) -> Iterator[int]:
    """The descriptor of the folder reached by ``folders`` from the scratch root, none followed.

    Raises:
        FileNotFoundError: a folder is absent and ``create`` is off.
        PolicyRefused: POLICY, the root or a folder below it is a link.
    """
    root = Path(record.folder).parent.parent
    if create:
        root.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # private to the user, as the home
    fd = _open_folder(None, str(root), str(root), create=create)
    shown = root
    try:
        for name in folders:
            shown = shown / name
            nxt = _open_folder(fd, name, str(shown), create=create)
            os.close(fd)
            fd = nxt
        yield fd
    finally:
        os.close(fd)


def write_copies(record: Record) -> None:
    """Make the checkout's folder and write each copy in it as a new file (private to the user,
    as vaultd's own files).

    Raises:
        PolicyRefused: POLICY, a link stands on the way, or a file is there already.
    """
    for c in record.copies:
        parts = _parts(record, c.path)
        with _folder_of(record, parts[:-1], create=True) as fd:
            try:
                out = os.open(parts[-1], _NEW_FLAGS, 0o600, dir_fd=fd)
            except FileExistsError as exc:
                raise PolicyRefused(f"something stands where the copy of {c.path} goes; nothing was checked out") from exc
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise PolicyRefused(f"a link stands where the copy of {c.path} goes; nothing was checked out") from exc
                raise
            try:
                view = memoryview(c.base.encode("utf-8"))
                while view:
                    view = view[os.write(out, view) :]
            finally:
                os.close(out)


def read_copy(record: Record, path: str) -> str | None:
    """The copy's text as the agent left it; None when it is gone.

    Raises:
        PolicyRefused: POLICY, the copy is not a regular file inside the scratch folder (a symlink,
            a folder, a path leading out, a link on the way), or not UTF-8.
        LimitExceeded: LIMIT, the copy is over the checkout's byte bound.
    """
    parts = _parts(record, path)
    try:
        with _folder_of(record, parts[:-1], create=False) as fd:
            data, _ = read_regular(parts[-1], MAX_CHECKOUT_BYTES, dir_fd=fd)
    except FileNotFoundError:
        return None
    except PolicyRefused as exc:
        raise PolicyRefused(f"the copy of {path} is not inside the checkout's folder ({exc.message}); nothing was returned") from exc
    except ReadRefused as exc:
        if exc.refusal is Refusal.TOO_BIG:
            raise LimitExceeded(f"the copy of {path} is over {MAX_CHECKOUT_BYTES} bytes; nothing was returned") from exc
        raise PolicyRefused(f"the copy of {path} is not a regular file ({exc.refusal.value}); nothing was returned") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PolicyRefused(f"the copy of {path} is not UTF-8 text; nothing was returned") from exc


def drop_copies(record: Record) -> None:
    """Delete the checkout's folder, relative to its parent's descriptor: a link where the
    folder or a folder above it was is left as it is (logged), and nothing it leads to is touched."""
    folder = Path(record.folder)
    try:
        with _folder_of(record, [folder.parent.name], create=False) as fd:
            shutil.rmtree(folder.name, dir_fd=fd)  # refuses a link in the folder's place
    except FileNotFoundError:
        pass
    except (PolicyRefused, OSError, RecursionError) as exc:  # a folder nested without end stays, logged
        log.warning("checkout copies not dropped", checkout=record.id, error=getattr(exc, "message", None) or str(exc))


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
