"""The checkout's three-way merge: a person's text is never overwritten, each side's own changes
apply, and an overlap keeps the person's lines and is reported."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vaultd.checkout.merge import merge

LINES = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d\n", "e\n", "\n", "f"]), max_size=12).map("".join)


def test_edits_on_different_lines_both_apply() -> None:
    base = "one\ntwo\nthree\nfour\nfive\n"
    ours = "one\nTWO by the person\nthree\nfour\nfive\n"
    theirs = "one\ntwo\nthree\nfour\nFIVE by the agent\n"
    done = merge(base, ours, theirs)
    assert done.text == "one\nTWO by the person\nthree\nfour\nFIVE by the agent\n"
    assert done.overlaps == ()


def test_an_overlap_keeps_the_persons_lines_and_reports_both() -> None:
    base = "title\nshared line\nend\n"
    ours = "title\nthe person's line\nend\n"
    theirs = "title\nthe agent's line\nend\nadded by the agent\n"
    done = merge(base, ours, theirs)
    assert done.text == "title\nthe person's line\nend\nadded by the agent\n"
    assert len(done.overlaps) == 1
    (overlap,) = done.overlaps
    assert (overlap.line, overlap.ours, overlap.theirs) == (1, "the person's line\n", "the agent's line\n")


def test_insertions_at_one_place_are_an_overlap_unless_equal() -> None:
    base = "a\nb\n"
    assert merge(base, "a\nX\nb\n", "a\nY\nb\n").text == "a\nX\nb\n"
    assert len(merge(base, "a\nX\nb\n", "a\nY\nb\n").overlaps) == 1
    same = merge(base, "a\nX\nb\nc\n", "a\nX\nb\n")
    assert same.overlaps == () and same.text == "a\nX\nb\nc\n"


@given(LINES, LINES)
def test_one_sided_changes_win_whole(base: str, side: str) -> None:
    assert merge(base, base, side).text == side
    assert merge(base, side, base).text == side
    assert merge(base, side, side).text == side
    assert merge(base, base, side).overlaps == ()


@given(LINES, LINES, LINES)
def test_every_line_the_person_added_survives(base: str, ours: str, theirs: str) -> None:
    done = merge(base, ours, theirs)
    base_lines = base.splitlines(keepends=True)
    merged_lines = done.text.splitlines(keepends=True)
    for line in ours.splitlines(keepends=True):
        if line not in base_lines:
            assert line in merged_lines, (base, ours, theirs, done)
    for overlap in done.overlaps:
        assert overlap.ours in done.text
