"""Where a snippet's matches are: every mark the daemon reports sits between ``**`` markers it
wrote, and no ``**`` of the note's own text is reported as one."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultd.vault import fts_query

PIECES = st.one_of(
    st.text(alphabet=st.sampled_from(list("ab *\u2026해")), max_size=30),
    st.sampled_from([fts_query.MARK_OPEN, fts_query.MARK_CLOSE, "\u200b", "**"]),
)


@given(st.lists(PIECES, max_size=60).map("".join), st.lists(st.sampled_from(["사업", "해"]), max_size=2), st.booleans(), st.booleans())
@settings(max_examples=400, deadline=None)
def test_marks_point_between_the_markers_the_daemon_wrote(raw: str, cjk: list[str], before: bool, after: bool) -> None:
    text, marks = fts_query.marked_snippet(raw, cjk, cut_before=before, cut_after=after)
    assert text == fts_query.shape_snippet(raw, cjk, cut_before=before, cut_after=after)
    assert marks == sorted(marks)
    for start, end in marks:
        assert 2 <= start < end <= len(text) - 2
        assert text[start - 2 : start] == "**" and text[end : end + 2] == "**"
    for (_, end), (start, _) in zip(marks, marks[1:], strict=False):
        assert end + 2 <= start - 2  # marks never overlap, markers included


def test_a_notes_own_stars_are_not_marks() -> None:
    raw = f"2 ** 3 and {fts_query.MARK_OPEN}alpha{fts_query.MARK_CLOSE} and **bold**"
    text, marks = fts_query.marked_snippet(raw)
    assert text == "2 ** 3 and **alpha** and **bold**"
    assert [text[a:b] for a, b in marks] == ["alpha"]
