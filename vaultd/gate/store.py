"""The vault's proposals, kept durably in ``.vaultd/proposals/``: sealed, bounded, never trusted unread.

Each proposal is one file ``<id>.json``: a line with the hex HMAC of the body under the daemon's
journal key (domain-separated from journal manifests), then the body. A proposal is what a person
will apply, so a file whose seal fails (edited by hand, copied from another machine, written by
another daemon) is never applied and never deleted: it is listed as refused, for the user to look
at. The folder holds at most :data:`MAX_PROPOSALS`; past that the oldest decided proposals go
first, then the oldest pending ones, each with a log line.

Callers hold the vault's writer lock for every change, so one store per vault needs no lock of
its own beyond the one that keeps its cache consistent across worker threads.
"""

from __future__ import annotations

import os
import secrets
import stat
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import msgspec
import structlog

from protocol.methods.proposals import MAX_PROPOSAL_BYTES, MAX_PROPOSALS, ProposalDetail, ProposalState, ProposalSummary, RefusedProposal
from vaultd.errors import LimitExceeded, NotFound, PolicyRefused
from vaultd.fsio import ReadRefused, fsync_dir, read_regular, write_atomic
from vaultd.txn import journal, seal
from vaultd.vault.layout import STATE_DIR

log = structlog.get_logger("vaultd.gate")

PROPOSALS_DIR = f"{STATE_DIR}/proposals"  #: vault-relative
_DOMAIN = b"vaultd-proposal\0"
_SUFFIX = ".json"
_MAC_CHARS = 64

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(ProposalDetail)


class TamperedProposal(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def new_id(now: float) -> str:
    return time.strftime("p%Y%m%d%H%M%S", time.gmtime(now)) + "-" + secrets.token_hex(4)


def summary_of(detail: ProposalDetail) -> ProposalSummary:
    fields = {f: getattr(detail, f) for f in ProposalSummary.__struct_fields__}
    return ProposalSummary(**fields)


@dataclass(slots=True)
class _Seen:
    key: tuple[int, int, int]  #: (inode, size, mtime_ns) when read: a changed file is read again
    summary: ProposalSummary | None
    refused: str | None


class ProposalStore:
    """One vault's proposals. Every method does file work: call it from a worker thread."""

    def __init__(self, root: Path, limit: int = MAX_PROPOSALS) -> None:
        self.root = root
        self.limit = limit
        self.folder = root / PROPOSALS_DIR
        self._lock = threading.Lock()
        self._seen: dict[str, _Seen] = {}
        self._scanned = False  #: the cache has seen the folder once (adds then update it in place)

    # -- the folder -----------------------------------------------------------------------

    def _check_folder(self, *, create: bool) -> bool:
        """Whether the folder exists (made when ``create``); refuses one that is not vaultd's own.

        Raises:
            Unavailable: UNAVAILABLE, the proposals folder is not vaultd's own (a symlink, another
                user's).
        """
        return journal.own_folder(self.root, self.folder, create=create, shown=PROPOSALS_DIR, keeps="proposals")

    def _path(self, proposal_id: str) -> Path:
        return self.folder / f"{proposal_id}{_SUFFIX}"

    # -- reading --------------------------------------------------------------------------

    def _read(self, path: Path) -> ProposalDetail:
        try:
            data, _ = read_regular(path, MAX_PROPOSAL_BYTES + _MAC_CHARS + 1)
        except ReadRefused as exc:
            raise TamperedProposal(f"not a regular file of a readable size ({exc.refusal.value})") from exc
        mac, sep, body = data.partition(b"\n")
        if not sep or not seal.verify(seal.installed_key(), _DOMAIN + body, mac):
            raise TamperedProposal("its seal does not match: changed since vaultd wrote it, or written by another daemon")
        try:
            detail = _decoder.decode(body)
        except msgspec.DecodeError as exc:
            raise TamperedProposal("sealed but unreadable by this version") from exc
        if f"{detail.id}{_SUFFIX}" != path.name:
            raise TamperedProposal("its id is not its file name")
        return detail

    def _scan(self) -> None:
        """Bring the cache up to date with the folder: new and changed files are read (and their
        seal checked) again, so a file edited while the daemon runs is refused at once."""
        if not self._check_folder(create=False):
            self._seen.clear()
            return
        names = set()
        with os.scandir(self.folder) as it:
            for entry in it:
                if not entry.name.endswith(_SUFFIX):
                    continue
                names.add(entry.name)
                st = entry.stat(follow_symlinks=False)
                key = (st.st_ino, st.st_size, st.st_mtime_ns)
                seen = self._seen.get(entry.name)
                if seen is not None and seen.key == key:
                    continue
                if not stat.S_ISREG(st.st_mode):
                    self._seen[entry.name] = _Seen(key, None, "not a regular file")
                    continue
                try:
                    self._seen[entry.name] = _Seen(key, summary_of(self._read(Path(entry.path))), None)
                except (TamperedProposal, OSError) as exc:
                    reason = exc.reason if isinstance(exc, TamperedProposal) else (exc.strerror or str(exc))
                    if seen is None or seen.refused != reason:
                        log.warning("refused a proposal file", name=entry.name, reason=reason)
                    self._seen[entry.name] = _Seen(key, None, reason)
        for gone in set(self._seen) - names:
            del self._seen[gone]
        self._scanned = True

    def entries(self) -> tuple[list[ProposalSummary], list[RefusedProposal]]:
        """Every kept proposal, newest first, and the files refused."""
        with self._lock:
            self._scan()
            good = [s.summary for s in self._seen.values() if s.summary is not None]
            bad = [RefusedProposal(name=n, reason=s.refused) for n, s in sorted(self._seen.items()) if s.refused is not None]
        good.sort(key=lambda p: (p.created, p.id), reverse=True)
        return good, bad

    def pending_count(self) -> int:
        return sum(1 for p in self.entries()[0] if p.state is ProposalState.PENDING)

    def get(self, proposal_id: str) -> ProposalDetail:
        """The proposal, its seal checked now.

        Raises:
            NotFound: no such proposal is kept (never made, or expired).
            PolicyRefused: its file fails the seal; it is never used.
        """
        with self._lock:
            if not self._check_folder(create=False):
                raise NotFound(f"no proposal {proposal_id}; see 'vaultctl proposals'")
            path = self._path(proposal_id)
            try:
                return self._read(path)
            except FileNotFoundError:
                raise NotFound(f"no proposal {proposal_id} (never made, or expired); see 'vaultctl proposals'") from None
            except TamperedProposal as exc:
                log.warning("refused a proposal file", name=path.name, reason=exc.reason)
                raise PolicyRefused(f"proposal {proposal_id} is not used: {exc.reason}; see 'vaultctl doctor'") from exc

    # -- writing --------------------------------------------------------------------------

    def _write(self, detail: ProposalDetail) -> None:
        """Write it sealed and record it in the cache as read (we know what we wrote).

        Raises:
            LimitExceeded: LIMIT, the sealed proposal would be over ``MAX_PROPOSAL_BYTES``; nothing
                is stored.
        """
        body = _encoder.encode(detail)
        if len(body) > MAX_PROPOSAL_BYTES:
            raise LimitExceeded(
                f"the proposal would be {len(body)} bytes, over the {MAX_PROPOSAL_BYTES}-byte bound; "
                "nothing was stored (a person can run the operation directly)"
            )
        data = seal.seal(seal.installed_key(), _DOMAIN + body) + b"\n" + body
        path = self._path(detail.id)
        write_atomic(path, data, mode=0o600)
        st = os.lstat(path)
        self._seen[path.name] = _Seen((st.st_ino, st.st_size, st.st_mtime_ns), summary_of(detail), None)

    def add(self, detail: ProposalDetail) -> list[ProposalSummary]:
        """Store a new proposal; returns the ones that expired to make room (already logged)."""
        with self._lock:
            self._check_folder(create=True)
            if not self._scanned:
                self._scan()  # once: later adds keep the cache current themselves
            self._write(detail)
            return self._expire(keep=detail.id)

    def replace(self, detail: ProposalDetail) -> None:
        """Store a proposal's new state (same id)."""
        with self._lock:
            self._check_folder(create=True)
            self._write(detail)

    def _expire(self, keep: str) -> list[ProposalSummary]:
        kept = [(n, s.summary) for n, s in self._seen.items() if s.summary is not None]
        over = len(kept) - self.limit
        if over <= 0:
            return []
        # Decided ones first, oldest first; pending ones only when decided ones do not make room.
        order = sorted(kept, key=lambda ns: (ns[1].state is ProposalState.PENDING, ns[1].created, ns[1].id))
        gone = []
        for name, summary in order:
            if over <= 0:
                break
            if summary.id == keep:
                continue
            try:
                os.unlink(self.folder / name)
            except FileNotFoundError:
                pass
            self._seen.pop(name, None)
            over -= 1
            gone.append(summary)
            level = log.warning if summary.state is ProposalState.PENDING else log.info
            level("proposal expired", proposal=summary.id, state=str(summary.state), bound=self.limit, vault=str(self.root))
        if gone:
            fsync_dir(self.folder)
        return gone


_stores: dict[Path, ProposalStore] = {}
_stores_lock = threading.Lock()


def store_for(root: Path) -> ProposalStore:
    """The one store of the vault at ``root`` (the daemon holds the vault's lock, so no other
    process writes its folder)."""
    with _stores_lock:
        store = _stores.get(root)
        if store is None:
            store = _stores[root] = ProposalStore(root)
        return store
