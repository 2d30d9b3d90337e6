"""A session's note: each list cut at its bound (the newest kept), and a file name Obsidian takes
whatever the session id holds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vaultd.views.session_note import MAX_NOTE_ITEMS, SessionView, note_name, session_body


def _view(reads: int) -> SessionView:
    return SessionView(id="s", client="c", vault="v", started=0.0, ended=1.0, read=[f"[[N{n}]]" for n in range(reads)])


def test_a_list_at_its_bound_is_whole_and_one_past_drops_the_oldest() -> None:
    at = session_body(_view(MAX_NOTE_ITEMS))
    assert "earlier" not in at and "[[N0]]" in at and f"[[N{MAX_NOTE_ITEMS - 1}]]" in at
    past = session_body(_view(MAX_NOTE_ITEMS + 1))
    assert "- and 1 earlier" in past and "[[N0]]" not in past and "[[N1]]" in past and f"[[N{MAX_NOTE_ITEMS}]]" in past


@given(st.from_regex(r"[A-Za-z0-9_.:-]{1,64}", fullmatch=True))
def test_a_note_name_is_one_file_obsidian_accepts(session: str) -> None:
    name = note_name(session)
    assert name.endswith(".md") and "/" not in name and ":" not in name and "\\" not in name
