"""vaultd's operation log is recognised by its first line and indexed by its header alone."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from vaultd.vault.layout import LOG_HEADER, is_operation_log
from vaultd.vault.note import parse_note

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
