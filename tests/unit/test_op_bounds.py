"""An operation's bounds at their edges: the engine's check, and a journal of the most entries an
operation may have (the longest paths included) is sealed, opened and undoable; one more is not."""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING

import msgspec
import pytest

from vaultd.errors import LimitExceeded
from vaultd.txn import journal, seal
from vaultd.txn.engine import check_bounds
from vaultd.txn.plan import (
    MAX_CAPTURE_BYTES,
    MAX_NOTE_BYTES,
    MAX_OP_BYTES,
    MAX_OP_FILES,
    MAX_REPORT_BYTES,
    Change,
    Plan,
    file_bound,
    over_bounds,
    read_limit,
)

if TYPE_CHECKING:
    from pathlib import Path

OP_ID = "20261203T092409.123456-1a2b3c4d"


def test_the_bounds_hold_at_their_edges() -> None:
    assert over_bounds(MAX_OP_FILES, MAX_OP_BYTES) is None
    assert over_bounds(MAX_OP_FILES + 1, 0) == f"the operation would write {MAX_OP_FILES + 1} files; the limit is {MAX_OP_FILES}"
    assert over_bounds(1, MAX_OP_BYTES + 1) == f"the operation would write {MAX_OP_BYTES + 1} bytes; the limit is {MAX_OP_BYTES}"
    plan = Plan(op="note.move", changes=[Change(path=f"n/{i}.md", before=None, after=b"x") for i in range(MAX_OP_FILES)], summary="")
    check_bounds(plan)
    plan.changes.append(Change(path="n/one more.md", before=None, after=b"x"))
    with pytest.raises(LimitExceeded, match="limit is"):
        check_bounds(plan)


def _long_path(i: int) -> str:
    """A path near the 1 KiB path bound, with components under 255 bytes."""
    path = "/".join(c * 240 for c in "abcd") + f"/{i:05d}" + "e" * 40 + ".md"
    assert 1000 < len(path.encode()) <= 1024
    return path


def _journal(folder: Path, key: bytes, entries: list[journal.Entry]) -> None:
    folder.mkdir(mode=0o700)
    manifest = journal.Manifest(op_id=folder.name, op="note.move", created=0.0, channel="cli", summary="s", entries=entries)
    data = msgspec.json.encode(manifest)
    assert len(data) <= journal.MAX_MANIFEST_BYTES, "a manifest of the most entries, longest paths, must fit its bound"
    (folder / journal.MANIFEST).write_bytes(data)
    (folder / journal.MAC).write_bytes(seal.seal(key, data))


def test_a_journal_of_the_most_entries_opens_and_one_more_does_not(tmp_path: Path) -> None:
    key = os.urandom(32)
    sha = hashlib.sha256(b"after").hexdigest()
    original = b"the last file's bytes before"
    entries = [journal.Entry(path=_long_path(i), before_sha=None, after_sha=sha, original=None) for i in range(MAX_OP_FILES - 1)]
    # the last entry is a rewrite: its original is orig-9999, the highest name a journal holds
    last = journal.Entry(
        path="last.md", before_sha=hashlib.sha256(original).hexdigest(), after_sha=sha, original=f"orig-{MAX_OP_FILES - 1}"
    )
    folder = tmp_path / OP_ID
    _journal(folder, key, [*entries, last])
    (folder / last.original).write_bytes(original)  # type: ignore[operator]
    manifest = journal.open_journal(folder, key)
    assert len(manifest.entries) == MAX_OP_FILES
    journal.check_originals(folder, manifest)

    over = tmp_path / "over" / OP_ID
    over.parent.mkdir()
    _journal(over, key, [*entries, last, journal.Entry(path="one more.md", before_sha=None, after_sha=sha, original=None)])
    with pytest.raises(journal.UntrustedJournal, match="entries"):
        journal.open_journal(over, key)


@pytest.mark.parametrize(
    ("path", "bound"),
    [
        ("notes/n.md", MAX_NOTE_BYTES),
        ("n.MD", MAX_NOTE_BYTES),
        ("reports/r.md", MAX_REPORT_BYTES),
        ("reports/deep/r.md", MAX_REPORT_BYTES),
        ("notes/reports/r.md", MAX_NOTE_BYTES),  # a folder named reports elsewhere holds notes
        ("reportsx/r.md", MAX_NOTE_BYTES),
        ("reports/r.txt", MAX_CAPTURE_BYTES),
        ("a.png", MAX_CAPTURE_BYTES),
    ],
)
def test_each_file_kind_has_its_bound_at_its_edge(path: str, bound: int) -> None:
    """The engine bounds a file by what its path says it is: a report may outgrow a note, and no
    note (nor any other file) gains a report's bound."""
    assert file_bound(path) == read_limit(path) == bound
    check_bounds(Plan(op="report.write", changes=[Change(path=path, before=None, after=b"a" * bound)], summary=""))
    with pytest.raises(LimitExceeded, match=f"{bound + 1} bytes"):  # a raw copy past 64 MiB is past the operation's bound too
        check_bounds(Plan(op="report.write", changes=[Change(path=path, before=None, after=b"a" * (bound + 1))], summary=""))
