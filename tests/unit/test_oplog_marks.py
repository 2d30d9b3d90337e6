"""The log line's bound and its agent mark: an agent's line keeps room for the mark a person's
approval adds, so the line screened when it was proposed always fits when it is applied."""

from __future__ import annotations

import datetime as dt

import pytest

from protocol.methods.writes import LogEvent, LogType
from vaultd.errors import ValidationFailed
from vaultd.vault.oplog import MAX_LINE_BYTES, PROPOSAL_ID_CHARS, agent_mark, format_line

WHEN = dt.datetime(2026, 12, 6, 9, 30)
PID = "p20261206093000-0123abcd"


def _event(note_chars: int) -> LogEvent:
    return LogEvent(type=LogType.EXTRACT, source="agent", note="x" * note_chars)


def _base() -> int:
    """Bytes of a line with an empty note and no mark, its newline included."""
    return len(format_line(_event(1), WHEN, agent=False).encode()) - 1


def test_the_proposal_id_is_as_long_as_the_room_kept_for_it() -> None:
    assert len(PID) == PROPOSAL_ID_CHARS
    assert agent_mark() == " (vaultd:agent)" and agent_mark(PID) == f" (vaultd:agent, proposal {PID})"


def test_a_persons_line_may_fill_the_bound() -> None:
    fits = MAX_LINE_BYTES - _base()
    assert len(format_line(_event(fits), WHEN, agent=False).encode()) == MAX_LINE_BYTES
    with pytest.raises(ValidationFailed):
        format_line(_event(fits + 1), WHEN, agent=False)


def test_an_agents_line_keeps_room_for_the_approval_mark() -> None:
    fits = MAX_LINE_BYTES - _base() - len(agent_mark(PID))
    own = format_line(_event(fits), WHEN, agent=True)
    approved = format_line(_event(fits), WHEN, agent=True, proposal=PID)
    assert own.endswith(" (vaultd:agent)\n") and approved.endswith(f" (vaultd:agent, proposal {PID})\n")
    assert len(approved.encode()) == MAX_LINE_BYTES, "at the bound, the applied line fits exactly"
    with pytest.raises(ValidationFailed):
        format_line(_event(fits + 1), WHEN, agent=True)
    with pytest.raises(ValidationFailed):
        format_line(_event(fits + 1), WHEN, agent=True, proposal=PID)
