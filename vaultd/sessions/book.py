"""The daemon's session records, one JSON file each in ``<home>/sessions/``.

A record is opened by an agent's ``hello`` (or a host hook naming its session) and continued by
any later connection naming the same id. It is bounded three ways: at most
:data:`~protocol.methods.sessions.MAX_SESSIONS` records (the longest-unseen ended ones go first),
:data:`~protocol.methods.sessions.MAX_ITEMS` entries per list, and
:data:`~protocol.methods.sessions.MAX_RECORD_BYTES` per record as stored (its oldest reads,
prompts and paths go first, counted in ``dropped``). Prompts are kept as a one-line summary, and
not at all when the line looks like a secret.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import msgspec
import structlog

from protocol.methods.sessions import (
    MAX_DESCRIPTION,
    MAX_ITEMS,
    MAX_PROMPT_CHARS,
    MAX_PROMPTS,
    MAX_RECORD_BYTES,
    MAX_SESSIONS,
    NoteRef,
    OpRef,
    PromptLine,
    SessionRecord,
)
from vaultd.errors import Conflict
from vaultd.sessions.files import ensure_folder, read_records, remove_record, write_record

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

log = structlog.get_logger("vaultd.sessions")

_SUFFIX = ".json"
_decoder = msgspec.json.Decoder(SessionRecord)
WITHHELD = "(prompt not kept: it looks like it holds a secret)"


def prompt_summary(prompt: str) -> str:
    """The prompt's first non-blank line, control characters dropped, cut at the bound."""
    line = next((ln.strip() for ln in prompt.splitlines() if ln.strip()), "")
    line = "".join(ch for ch in line if ch.isprintable())
    if len(line) > MAX_PROMPT_CHARS:
        line = line[: MAX_PROMPT_CHARS - 1] + "…"
    from vaultd.policy import secret_issues  # the policy's rules: loaded with the first prompt, not at the daemon's start

    if secret_issues(line, "prompt"):
        return WITHHELD
    return line


def _bounded(record: SessionRecord) -> tuple[SessionRecord, bytes]:
    """The record cut to its bounds, oldest entries first, and its bytes."""
    lists: dict[str, list[Any]] = {
        "read": record.read[-MAX_ITEMS:],
        "touched": record.touched[-MAX_ITEMS:],
        "op_list": record.op_list[-MAX_ITEMS:],
        "proposal_list": record.proposal_list[-MAX_ITEMS:],
        "work": record.work[-MAX_ITEMS:],
        "prompts": record.prompts[-MAX_PROMPTS:],
    }
    dropped = record.dropped + sum(len(getattr(record, k)) - len(v) for k, v in lists.items())
    record = msgspec.structs.replace(record, dropped=dropped, **lists)
    data = msgspec.json.encode(record)
    while len(data) > MAX_RECORD_BYTES:
        longest = max(("read", "prompts", "touched", "op_list", "proposal_list", "work"), key=lambda k: len(getattr(record, k)))
        items = getattr(record, longest)
        cut = max(1, len(items) // 4)
        record = msgspec.structs.replace(record, dropped=record.dropped + cut, **{longest: items[cut:]})
        data = msgspec.json.encode(record)
    return record, data


class SessionBook:
    """Every session record, cached in memory, written through on each change (event loop only)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._records: dict[str, SessionRecord] | None = None
        self._live: dict[str, int] = {}  #: open connections per session
        #: Told of each record as its session ends (vaultd writes it into the vaults that opt in).
        self.on_end: Callable[[SessionRecord], None] | None = None

    def _ended(self, record: SessionRecord) -> None:
        if self.on_end is not None:
            try:
                self.on_end(record)
            except RuntimeError as exc:  # the daemon is stopping: its tasks take no more
                log.warning("session end not passed on", session=record.id, error=str(exc))

    def _load(self) -> dict[str, SessionRecord]:
        if self._records is not None:
            return self._records
        found, unreadable = read_records(self.folder, _SUFFIX, MAX_RECORD_BYTES, _decoder.decode, lambda r: r.id)
        for name in unreadable:  # empty or torn: its session starts a new record, written over it whole
            log.warning("unreadable session record passed over", name=name)
        self._records = found
        return found

    def _store(self, record: SessionRecord) -> SessionRecord:
        record, data = _bounded(record)
        self._load()[record.id] = record
        try:
            ensure_folder(self.folder)
            write_record(self.folder / f"{record.id}{_SUFFIX}", data)
        except OSError as exc:
            log.warning("session record not written", session=record.id, error=str(exc))
        return record

    def _make_room(self) -> None:
        records = self._load()
        while len(records) >= MAX_SESSIONS:
            ended = [r for r in records.values() if self._live.get(r.id, 0) == 0]
            oldest = min(ended or list(records.values()), key=lambda r: r.seen)
            records.pop(oldest.id)
            remove_record(self.folder / f"{oldest.id}{_SUFFIX}")

    def _twin(self, session: str) -> str | None:
        """A recorded session whose id is ``session``'s in other letter case. Its record's file,
        ``<id>.json``, would be ``session``'s too on a disk that folds case (macOS's by default),
        so the two are compared by path key, as vaultd compares paths, on every disk."""
        if session in self._load():
            return None
        from vaultd.policy.paths import path_key  # the policy package: loaded with a new session, not at start

        key = path_key(session)
        return next((other for other in self._load() if path_key(other) == key), None)

    def check(self, session: str) -> None:
        """Refuse a new session whose id differs from a recorded one's only in letter case.

        Raises:
            Conflict: CONFLICT, naming the recorded session.
        """
        twin = self._twin(session)
        if twin is not None:
            raise Conflict(
                f"session id {session} differs from the recorded session {twin} only in letter case, and both would be "
                "one record on a disk that folds case; name the session otherwise (VAULTD_SESSION)"
            )

    def _touch(self, session: str, client: str) -> SessionRecord | None:
        """The session's record with ``seen`` now, a new one if none is kept; None for an id that
        :meth:`check` refuses (a call already answered is not recorded rather than refused)."""
        record = self._load().get(session)
        now = time.time()
        if record is None:
            if self._twin(session) is not None:
                log.warning("session not recorded: its id differs from a recorded one only in letter case", session=session)
                return None
            self._make_room()
            shown = "".join(ch if ch.isprintable() else " " for ch in client)  # no line break, no terminal escape
            record = SessionRecord(id=session, client=shown[:64], started=now, seen=now)
        return msgspec.structs.replace(record, seen=now)

    # -- what happens in a session ----------------------------------------------------------

    def opened(self, session: str, client: str) -> None:
        """A connection named the session: a new record, or the old one continued (resumed).

        Raises:
            Conflict: CONFLICT, the id differs from a recorded session's only in letter case.
        """
        self.check(session)
        record = self._touch(session, client)
        if record is None:
            return
        self._live[session] = self._live.get(session, 0) + 1
        self._store(msgspec.structs.replace(record, ended=None))

    def closed(self, session: str) -> None:
        left = self._live.get(session, 0) - 1
        if left > 0:
            self._live[session] = left
            return
        self._live.pop(session, None)
        record = self._load().get(session)
        if record is not None:
            self._ended(self._store(msgspec.structs.replace(record, ended=time.time())))

    def ended(self, session: str, client: str) -> None:
        """A host's hook: its session ended.

        Raises:
            Conflict: CONFLICT, the id differs from a recorded session's only in letter case.
        """
        self.check(session)
        record = self._touch(session, client)
        if record is not None:
            self._ended(self._store(msgspec.structs.replace(record, ended=time.time())))

    def started(self, session: str, client: str) -> None:
        """A host's hook: its session started or resumed.

        Raises:
            Conflict: CONFLICT, the id differs from a recorded session's only in letter case.
        """
        self.check(session)
        record = self._touch(session, client)
        if record is not None:
            self._store(msgspec.structs.replace(record, ended=None))

    def read(self, session: str, client: str, vault: str, paths: list[str]) -> None:
        if not paths:
            return
        record = self._touch(session, client)
        if record is None:
            return
        have = {(n.vault, n.path) for n in record.read[-MAX_ITEMS:]}
        new = [NoteRef(vault=vault, path=p) for p in dict.fromkeys(paths) if (vault, p) not in have]
        if not new and session in self._load():
            # A note read again changes only ``seen``: kept in memory, written with the record's next
            # change. An agent rereads notes many times a session, and each write is a synced file.
            self._load()[session] = record
            return
        self._store(msgspec.structs.replace(record, read=[*record.read, *new]))

    def wrote(self, session: str, client: str, vault: str, op: str, paths: list[str], *, op_id: str | None, proposal: str | None) -> None:
        record = self._touch(session, client)
        if record is None:
            return
        have = {(n.vault, n.path) for n in record.touched[-MAX_ITEMS:]}
        touched = [*record.touched, *(NoteRef(vault=vault, path=p) for p in dict.fromkeys(paths) if (vault, p) not in have)]
        if op_id is not None:
            record = msgspec.structs.replace(record, op_list=[*record.op_list, OpRef(vault=vault, id=op_id, op=op)], ops=record.ops + 1)
        if proposal is not None:
            record = msgspec.structs.replace(
                record, proposal_list=[*record.proposal_list, OpRef(vault=vault, id=proposal, op=op)], proposals=record.proposals + 1
            )
        self._store(msgspec.structs.replace(record, touched=touched))

    def worked(self, session: str, client: str, vault: str, work_id: str, what: str) -> None:
        record = self._touch(session, client)
        if record is None:
            return
        description = record.description or what[:MAX_DESCRIPTION]
        self._store(msgspec.structs.replace(record, work=[*record.work, f"{vault}:{work_id}"], description=description))

    def prompted(self, session: str, client: str, prompt: str) -> None:
        """A host's hook: the person sent a prompt.

        Raises:
            Conflict: CONFLICT, the id differs from a recorded session's only in letter case.
        """
        self.check(session)
        record = self._touch(session, client)
        line = prompt_summary(prompt)
        if record is None or not line:
            return
        description = record.description or (line if line != WITHHELD else "")
        self._store(
            msgspec.structs.replace(record, prompts=[*record.prompts, PromptLine(at=time.time(), text=line)], description=description)
        )

    # -- reading ----------------------------------------------------------------------------

    def get(self, session: str) -> SessionRecord | None:
        return self._load().get(session)

    def live(self, session: str) -> bool:
        return self._live.get(session, 0) > 0

    def recent(self, limit: int, *, open_only: bool = False) -> list[SessionRecord]:
        records = [r for r in self._load().values() if not open_only or r.ended is None]
        records.sort(key=lambda r: (r.seen, r.id), reverse=True)
        return records[:limit]
