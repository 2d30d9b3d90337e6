"""Session records and work documents on disk (:mod:`vaultd.sessions.files`): each write is durable
before it replaces the old record, so a crash leaves the old record or the new one; an empty or
torn record, as an older daemon's crash or a full disk could leave one, is passed over and the
session goes on."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import msgspec
import pytest

from protocol.methods.sessions import SessionRecord
from vaultd import faults
from vaultd.sessions.book import SessionBook
from vaultd.sessions.files import write_record

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture
def injected() -> Iterator[None]:
    yield
    faults.configure(None)


@pytest.mark.parametrize("primitive", ["write", "fsync"])
def test_a_record_write_that_fails_before_its_rename_leaves_the_old_record_whole(primitive: str, tmp_path: Path, injected: None) -> None:
    """The new bytes are written and fsynced in a temp file before the rename: a write or an fsync
    that fails (as a crash between them would stop it) leaves the old record and no temp file."""
    record = tmp_path / "s-one.json"
    write_record(record, b'{"old": true}')
    faults.configure(f"error={primitive}:EIO@1")
    with pytest.raises(OSError, match="injected"):
        write_record(record, b'{"new": true}')
    assert record.read_bytes() == b'{"old": true}'
    assert os.listdir(tmp_path) == ["s-one.json"], "no temp file is left behind"
    faults.configure(None)
    write_record(record, b'{"new": true}')
    assert record.read_bytes() == b'{"new": true}' and os.stat(record).st_mode & 0o777 == 0o600


def test_an_empty_or_torn_record_is_passed_over_and_its_session_goes_on(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    kept = SessionRecord(id="s-kept", client="x", started=1.0, seen=1.0)
    (folder / "s-kept.json").write_bytes(msgspec.json.encode(kept))
    (folder / "s-empty.json").write_bytes(b"")
    (folder / "s-torn.json").write_bytes(msgspec.json.encode(SessionRecord(id="s-torn", client="x", started=1.0, seen=1.0))[:20])
    book = SessionBook(folder)
    assert [r.id for r in book.recent(10)] == ["s-kept"], "what did not decode is not a record"
    for session in ("s-empty", "s-torn"):
        book.opened(session, "agent")
        book.read(session, "agent", "v", ["Alpha.md"])
        again = SessionBook(folder).get(session)  # as the next daemon reads it
        assert again is not None and [n.path for n in again.read] == ["Alpha.md"], session
    assert SessionBook(folder).get("s-kept") == kept


def test_a_note_read_again_is_not_written_again_and_its_session_is_still_seen(tmp_path: Path) -> None:
    """Each record write is a synced file: a reread note, which changes nothing but ``seen``, keeps
    the record on disk as it is, while the book still knows the session was seen just now."""
    folder = tmp_path / "sessions"
    book = SessionBook(folder)
    book.opened("s-one", "agent")
    book.read("s-one", "agent", "v", ["Alpha.md"])
    on_disk = os.stat(folder / "s-one.json")
    first = book.get("s-one")
    assert first is not None
    for _ in range(3):
        book.read("s-one", "agent", "v", ["Alpha.md"])
    after = os.stat(folder / "s-one.json")
    assert (after.st_ino, after.st_mtime_ns) == (on_disk.st_ino, on_disk.st_mtime_ns), "a reread wrote the record again"
    seen = book.get("s-one")
    assert seen is not None and seen.seen >= first.seen and [n.path for n in seen.read] == ["Alpha.md"]
    book.read("s-one", "agent", "v", ["Beta.md"])
    written = SessionBook(folder).get("s-one")  # as the next daemon reads it: the next change carries ``seen``
    assert written is not None and [n.path for n in written.read] == ["Alpha.md", "Beta.md"]
    assert written.seen >= seen.seen
