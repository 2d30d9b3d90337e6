"""vaultd's operation log is recognised by its first line and indexed by its header alone, at any
length; every other note keeps the note bound."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultd.vault.layout import LOG_HEADER, is_operation_log
from vaultd.vault.note import MAX_NOTE_BYTES, parse_note
from vaultd.vault.reading import HEAD_FIRST_BYTES, read_note
from vaultd.vault.walk import FileStat, SkippedFile

if TYPE_CHECKING:
    from pathlib import Path

HEAD = LOG_HEADER.rstrip("\n")


@given(rest=st.binary(max_size=2000), newline=st.sampled_from(["\n", "\r\n"]))
def test_the_header_line_marks_the_log_whatever_follows(rest: bytes, newline: str) -> None:
    raw = (HEAD + newline).encode() + rest
    assert is_operation_log(raw)
    record, doc = parse_note("log.md", raw, size=len(raw), mtime_ns=1, ino=1)
    assert record.sha256 == hashlib.sha256(raw).hexdigest(), "the hash is of the whole file"
    assert (record.title, record.links, record.tags, record.blocks) == ("vaultd operation log", [], [], [])
    assert record.size == len(raw)
    assert doc.body.strip() == HEAD, "the search document holds the header only"


@given(first=st.text(max_size=60).filter(lambda s: "\n" not in s and "\r" not in s and s != HEAD), rest=st.text(max_size=200))
def test_any_other_first_line_is_a_note(first: str, rest: str) -> None:
    assert not is_operation_log((first + "\n" + rest).encode())


def test_the_edges_of_the_header() -> None:
    assert is_operation_log(HEAD.encode()), "the header alone, no newline yet"
    assert not is_operation_log((HEAD + "s\n").encode()), "a longer first line is someone's note"
    assert not is_operation_log(("\ufeff" + LOG_HEADER).encode()), "vaultd never writes a BOM"
    assert not is_operation_log((" " + LOG_HEADER).encode())


EVENT = b"2024-03-01 09:00  EXTRACT  -  vaultd:note.create -> a.md  -  create a.md (20240301T090000-0a0b0c0d)\n"


def _file(folder: Path, name: str, head: bytes, size: int) -> FileStat:
    """A file of exactly ``size`` bytes: ``head``, then event lines, then padding to the byte."""
    body = head + EVENT * ((size - len(head)) // len(EVENT))
    (folder / name).write_bytes(body + b"x" * (size - len(body)))
    st = (folder / name).stat()
    return FileStat(name, st.st_size, st.st_mtime_ns, st.st_ino, True)


@pytest.mark.parametrize(
    "size", [HEAD_FIRST_BYTES - 1, HEAD_FIRST_BYTES, HEAD_FIRST_BYTES + 1, MAX_NOTE_BYTES, MAX_NOTE_BYTES + 1, 3 * MAX_NOTE_BYTES]
)
def test_the_log_is_indexed_at_any_length(tmp_path: Path, size: int) -> None:
    """On either side of the length where only the first bytes are read, and of the note bound."""
    fs = _file(tmp_path, "log.md", LOG_HEADER.encode(), size)
    parsed = read_note(tmp_path, fs)
    assert not isinstance(parsed, SkippedFile), parsed
    record, doc = parsed
    assert (record.path, record.size, record.ino) == ("log.md", size, fs.ino)
    header_only = parse_note("log.md", LOG_HEADER.encode(), size=0, mtime_ns=0, ino=0)[0]
    assert (record.title, record.links, record.tags, record.words) == ("vaultd operation log", [], [], header_only.words)
    assert doc.body.strip() == HEAD


def test_the_logs_identity_changes_with_each_append_and_only_then(tmp_path: Path) -> None:
    fs = _file(tmp_path, "log.md", LOG_HEADER.encode(), HEAD_FIRST_BYTES + 10)
    first = read_note(tmp_path, fs)
    again = read_note(tmp_path, fs)
    assert not isinstance(first, SkippedFile) and not isinstance(again, SkippedFile)
    assert first[0].sha256 == again[0].sha256, "the same file, the same identity"
    with (tmp_path / "log.md").open("ab") as fh:
        fh.write(EVENT)
    after = read_note(tmp_path, fs)
    assert not isinstance(after, SkippedFile)
    assert after[0].sha256 != first[0].sha256 and after[0].size == fs.size + len(EVENT)


@pytest.mark.parametrize(("size", "indexed"), [(MAX_NOTE_BYTES, True), (MAX_NOTE_BYTES + 1, False)])
def test_a_note_keeps_the_note_bound(tmp_path: Path, size: int, indexed: bool) -> None:
    """Only vaultd's log is exempt: a user's note over the bound is skipped, at the byte."""
    fs = _file(tmp_path, "big.md", b"# Big\n", size)
    parsed = read_note(tmp_path, fs)
    assert isinstance(parsed, SkippedFile) is not indexed
    if isinstance(parsed, SkippedFile):
        assert parsed.code == "S01"
    else:
        assert parsed[0].sha256 == hashlib.sha256((tmp_path / "big.md").read_bytes()).hexdigest()


@settings(max_examples=40, deadline=None)
@given(rest=st.binary(max_size=300), pad=st.integers(min_value=0, max_value=2 * HEAD_FIRST_BYTES))
def test_a_file_opening_with_the_header_is_the_log_whatever_its_length(
    tmp_path_factory: pytest.TempPathFactory, rest: bytes, pad: int
) -> None:
    folder = tmp_path_factory.mktemp("log")
    (folder / "log.md").write_bytes(LOG_HEADER.encode() + rest + b"\n" * pad)
    st_ = (folder / "log.md").stat()
    parsed = read_note(folder, FileStat("log.md", st_.st_size, st_.st_mtime_ns, st_.st_ino, True))
    assert not isinstance(parsed, SkippedFile)
    assert parsed[0].title == "vaultd operation log" and parsed[0].links == [] and parsed[0].size == st_.st_size
