"""Session records' pure rules: the hook payloads read, prompt summaries, and the record's bounds."""

from __future__ import annotations

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from protocol.methods.sessions import MAX_ITEMS, MAX_PROMPT_CHARS, MAX_PROMPTS, MAX_RECORD_BYTES, NoteRef, PromptLine, SessionRecord
from vaultctl.guard.payload import Event, read_hook
from vaultd.api.session_methods import cut_utf8
from vaultd.sessions.book import _bounded, prompt_summary


def test_claude_codes_session_events_are_read_with_their_session_id() -> None:
    prompt = read_hook({"hook_event_name": "UserPromptSubmit", "session_id": "abc-123", "prompt": "do it"}, {})
    assert (prompt.event, prompt.session, prompt.prompt) == (Event.PROMPT, "abc-123", "do it")
    stop = read_hook({"hook_event_name": "Stop", "session_id": "abc-123", "stop_hook_active": True}, {})
    assert (stop.event, stop.stop_active) == (Event.STOP, True)
    assert read_hook({"hook_event_name": "Stop", "session_id": "abc", "stop_hook_active": "yes"}, {}).stop_active is False
    assert read_hook({"hook_event_name": "SessionEnd", "session_id": "abc"}, {}).event is Event.SESSION_END
    start = read_hook({"hook_event_name": "SessionStart", "session_id": "s1", "source": "startup"}, {})
    assert (start.event, start.session) == (Event.SESSION_START, "s1")


def test_a_session_id_that_is_not_one_is_not_recorded() -> None:
    for bad in ("../etc", "a" * 65, "", 7, None, "id with space"):
        assert read_hook({"hook_event_name": "UserPromptSubmit", "session_id": bad, "prompt": "p"}, {}).session is None


def test_a_prompt_summary_is_its_first_line_at_most_the_bound() -> None:
    assert prompt_summary("\n\n  first line  \nsecond") == "first line"
    assert prompt_summary("a" * MAX_PROMPT_CHARS) == "a" * MAX_PROMPT_CHARS
    cut = prompt_summary("b" * (MAX_PROMPT_CHARS + 1))
    assert len(cut) == MAX_PROMPT_CHARS and cut.endswith("…")
    assert prompt_summary("bell \x07 and \x1b[31mred") == "bell  and [31mred"


@given(st.lists(st.text(min_size=1, max_size=300), max_size=300), st.lists(st.text(max_size=400), max_size=120))
def test_a_record_is_cut_to_its_bounds_oldest_first(paths: list[str], prompts: list[str]) -> None:
    record = SessionRecord(
        id="s",
        client="c",
        started=0.0,
        seen=0.0,
        read=[NoteRef(vault="v", path=p) for p in paths],
        prompts=[PromptLine(at=1.0, text=t) for t in prompts],
    )
    kept, data = _bounded(record)
    assert len(data) <= MAX_RECORD_BYTES and data == msgspec.json.encode(kept)
    assert len(kept.read) <= MAX_ITEMS and len(kept.prompts) <= MAX_PROMPTS
    assert kept.read == record.read[len(record.read) - len(kept.read) :], "the newest are kept"
    assert kept.dropped == len(record.read) - len(kept.read) + len(record.prompts) - len(kept.prompts)


@given(st.text(max_size=200), st.integers(min_value=0, max_value=900))
def test_a_hot_summary_is_cut_within_its_bytes_never_inside_a_character(text: str, limit: int) -> None:
    cut = cut_utf8(text, limit)
    assert len(cut.encode()) <= limit and text.startswith(cut)
    if len(text.encode()) <= limit:
        assert cut == text
