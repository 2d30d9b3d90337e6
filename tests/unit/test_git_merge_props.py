"""Merging a note changed on two machines never loses what either side added: property tests over
generated notes, with the real ``git merge-file``, plus the fixed cases sync relies on."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vaultd.git.merge import Labels, merge_log, merge_note
from vaultd.vault import frontmatter
from vaultd.vault.frontmatter_emit import emit

KEYS = st.sampled_from(["status", "owner", "due", "tags", "rank"])
VALUES = st.one_of(st.sampled_from(["draft", "done", "ada", "grace"]), st.integers(0, 9), st.lists(st.sampled_from(["a", "b"]), max_size=2))
WORDS = st.text(alphabet="abcdefghij ", min_size=1, max_size=12).map(str.strip).filter(bool)


def _note(fields: dict[str, Any], lines: list[str]) -> bytes:
    return emit("".join(f"{ln}\n" for ln in lines), fields).encode() if fields else "".join(f"{ln}\n" for ln in lines).encode()


@st.composite
def edits(draw: st.DrawFn, base_fields: dict[str, Any], base_lines: list[str], tag: str) -> tuple[dict[str, Any], list[str], list[str]]:
    """One side's version: some keys set or removed, some new lines inserted (each unique to it)."""
    fields = dict(base_fields)
    for key in draw(st.lists(KEYS, max_size=2, unique=True)):
        if draw(st.booleans()) and key in fields:
            del fields[key]
        else:
            fields[key] = draw(VALUES)
    lines = list(base_lines)
    added = []
    for i in range(draw(st.integers(0, 3))):
        text = f"{tag} adds {draw(WORDS)} #{i}"
        lines.insert(draw(st.integers(0, len(lines))), text)
        added.append(text)
    return fields, lines, added


@st.composite
def three_versions(draw: st.DrawFn) -> tuple[Any, ...]:
    base_fields = draw(st.dictionaries(KEYS, VALUES, max_size=3))
    base_lines = [f"base line {i}: {draw(WORDS)}" for i in range(draw(st.integers(0, 12)))]
    ours = draw(edits(base_fields, base_lines, "ours"))
    theirs = draw(edits(base_fields, base_lines, "theirs"))
    return base_fields, base_lines, ours, theirs


def _same(a: Any, b: Any) -> bool:
    return bool(msgspec.json.encode(a) == msgspec.json.encode(b))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(three_versions())
def test_a_merge_keeps_every_line_either_side_added_and_every_key_one_side_changed(case: tuple[Any, ...]) -> None:
    base_fields, base_lines, (o_fields, o_lines, o_added), (t_fields, t_lines, t_added) = case
    base, ours, theirs = _note(base_fields, base_lines), _note(o_fields, o_lines), _note(t_fields, t_lines)
    with tempfile.TemporaryDirectory() as work:
        merged = merge_note(Path(work), base, ours, theirs)
    assert merged is not None
    text = merged.data.decode()
    for line in o_added + t_added:
        assert line in text, (line, text)
    data = frontmatter.parse(text).data or {}
    for key in set(base_fields) | set(o_fields) | set(t_fields):
        b, o, t = (f.get(key, "<missing>") for f in (base_fields, o_fields, t_fields))
        if _same(o, b) and not _same(t, b):
            assert _same(data.get(key, "<missing>"), t), (key, "theirs changed it alone")
        elif _same(t, b) or _same(o, t):
            assert _same(data.get(key, "<missing>"), o), (key, "ours changed it alone, or both alike")
        else:
            assert key in merged.collided and _same(data.get(key, "<missing>"), o), (key, "a collision keeps ours, names theirs")
    assert merged.clean == (merged.conflicts == 0 and not merged.collided)
    if not merged.clean:
        assert "vaultd sync" in text, "a note that did not merge says so"


def test_separate_edits_merge_cleanly_and_a_shared_line_keeps_both_versions(tmp_path: Path) -> None:
    base = b"---\nstatus: draft\n---\n# Plan\n\nship in May\n\n" + b"".join(b"filler %d\n" % i for i in range(8)) + b"\nend\n"
    ours = base.replace(b"filler 0", b"filler zero").replace(b"status: draft", b"status: draft\nowner: ada")
    theirs = base.replace(b"end\n", b"the end\n").replace(b"status: draft", b"status: draft\ntags: [q2]")
    clean = merge_note(tmp_path, base, ours, theirs)
    assert clean is not None and clean.clean
    text = clean.data.decode()
    assert "filler zero" in text and "the end" in text and "owner: ada" in text and "tags:" in text

    ours2 = base.replace(b"ship in May", b"ship in June")
    theirs2 = base.replace(b"ship in May", b"ship in April").replace(b"status: draft", b"status: blocked")
    both = merge_note(tmp_path, base, ours2, theirs2, Labels("here", "there"))
    assert both is not None and not both.clean and both.conflicts == 1 and both.collided == {}
    text = both.data.decode()
    assert "<<<<<<< here\nship in June\n=======\nship in April\n>>>>>>> there" in text
    assert "status: blocked" in text, "a key only origin changed is taken"


def test_binary_versions_do_not_merge(tmp_path: Path) -> None:
    assert merge_note(tmp_path, b"a", b"\xff\xfe", b"b") is None


def test_the_operation_log_merges_as_the_union_of_both_sides_lines(tmp_path: Path) -> None:
    base = b"# vaultd operation log\n2026-01-01 10:00  EXTRACT  -  a  \xe2\x80\x94  one\n"
    ours = base + b"2026-01-02 10:00  EXTRACT  -  b  \xe2\x80\x94  ours\n"
    theirs = base + b"2026-01-02 10:01  EXTRACT  -  c  \xe2\x80\x94  theirs\n"
    merged = merge_log(tmp_path, base, ours, theirs)
    assert merged == base + ours[len(base) :] + theirs[len(base) :]
