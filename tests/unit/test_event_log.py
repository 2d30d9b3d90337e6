"""A vault's event log: clocks, what ``since`` can resume, the retention bounds, bulk states,
successors. Everything else (the watcher, subscribers) builds on these."""

from __future__ import annotations

import anyio
import msgspec
import pytest

from protocol.methods.events import (
    BULK_LISTED,
    BULK_MIN_CHANGES,
    BULK_QUIET_MS,
    MAX_EVENT_PATHS,
    AnyEvent,
    NoteChanged,
    NoteCreated,
    OperationApplied,
    OperationUndone,
    StateLeave,
    VaultRemoved,
)
from protocol.methods.receipts import Applied, ChangeAction, ChangeReceipt, LogReceipt, NoDetail, Preview
from vaultd.events.log import EventLog, parse_clock
from vaultd.events.wake import Waker
from vaultd.ops._announce import receipt_event


class FakeClock:
    """Monotonic time the test moves by hand (what the bulk state's quiet is measured with)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _decoded(log: EventLog, after: int = 0) -> list[AnyEvent]:
    records = log.after(after, 1_000_000)
    assert records is not None
    return [msgspec.json.decode(r.data, type=AnyEvent) for r in records]


async def test_each_event_gets_the_next_clock_and_is_encoded_once() -> None:
    log = EventLog("notes")
    assert log.head == 0 and log.clock == f"{log.instance}:0"
    log.record(NoteCreated(path="a.md"), NoteChanged(path="a.md"))
    events = _decoded(log)
    assert [e.clock for e in events] == [f"{log.instance}:1", f"{log.instance}:2"]
    assert all(e.vault == "notes" and e.at > 0 for e in events)
    assert [r.paths for r in log.after(0, 10) or []] == [("a.md",), ("a.md",)]
    assert log.after(2, 10) == [] and log.after(5, 10) == []


async def test_since_resumes_its_own_instance_within_what_is_kept() -> None:
    log = EventLog("notes", retained=3)
    log.record(*(NoteCreated(path=f"{n}.md") for n in range(5)))  # 1..5; 3..5 kept
    assert log.oldest == 3
    assert log.resume(log.token(5)) == 5
    assert log.resume(log.token(2)) == 2, "the events after 2 (3, 4, 5) are all kept"
    assert log.resume(log.token(1)) is None, "event 2 is gone: fresh instance"
    assert log.resume(log.token(6)) is None, "a clock from the future was never given"
    assert log.resume("0badc0de:4") is None, "another instance"
    assert log.resume("not a clock") is None and parse_clock("abc:1") is None
    assert log.after(1, 10) is None and [r.seq for r in log.after(2, 10) or []] == [3, 4, 5]


async def test_retention_is_bounded_in_bytes_too() -> None:
    log = EventLog("notes", retained=10_000, retained_bytes=2_000)
    log.record(*(NoteCreated(path=f"folder/{'x' * 50}{n}.md") for n in range(200)))
    assert log.retained_bytes <= 2_000 and 0 < len(log) < 200
    assert log.after(log.head - len(log), 1000) is not None and log.after(log.head - len(log) - 1, 1000) is None


async def test_many_note_changes_open_a_bulk_state_that_closes_when_quiet() -> None:
    clock = FakeClock()
    log = EventLog("notes", clock=clock)
    log.notes([NoteCreated(path="one.md")])
    log.notes([NoteChanged(path=f"{n}.md") for n in range(BULK_MIN_CHANGES - 1)])
    assert log.leave_bulk_if_quiet() is None, "one fewer than the bound is no bulk state"
    assert not any(r.kind == "state.enter" for r in log.after(0, 1000) or [])
    log.record()  # nothing to record is nothing recorded
    assert log.head == BULK_MIN_CHANGES
    log.notes([NoteCreated(path=f"{n}.md") for n in range(BULK_MIN_CHANGES)])
    log.notes([NoteChanged(path="late.md")])  # still inside: the state spans batches
    assert log.leave_bulk_if_quiet() == pytest.approx(BULK_QUIET_MS / 1000)
    clock.now += BULK_QUIET_MS / 1000
    assert log.leave_bulk_if_quiet(busy=True) == pytest.approx(BULK_QUIET_MS / 1000), "still reading changes: not quiet"
    clock.now += BULK_QUIET_MS / 1000
    assert log.leave_bulk_if_quiet() is None
    kinds = [str(type(e).__struct_config__.tag) for e in _decoded(log)]
    assert kinds[: BULK_MIN_CHANGES + 1] == ["note.created"] + ["note.changed"] * (BULK_MIN_CHANGES - 1) + ["state.enter"]
    assert kinds[-1] == "state.leave" and kinds.count("note.created") == 1 + BULK_MIN_CHANGES
    leave = _decoded(log)[-1]
    assert isinstance(leave, StateLeave) and leave.changes == leave.listed == BULK_MIN_CHANGES + 1


def test_an_operation_event_lists_a_bounded_number_of_paths() -> None:
    changes = [
        ChangeReceipt(path=f"{n}.md", action=ChangeAction.MODIFY, before_sha="a", after_sha="b", bytes=1)
        for n in range(MAX_EVENT_PATHS + 8)
    ]
    receipt = Applied(op="note.move", op_id="op-1", changes=changes, log=LogReceipt(appended=True), detail=NoDetail())
    event = receipt_event(receipt, channel="cli", proposer="cli:vaultctl", undoes=None, proposal=None)
    assert isinstance(event, OperationApplied)
    assert len(event.paths) == MAX_EVENT_PATHS and event.paths_omitted == 8
    undo = receipt_event(receipt, channel="cli", proposer="cli:vaultctl", undoes="op-0", proposal=None)
    assert isinstance(undo, OperationUndone) and undo.undoes == "op-0"
    preview = Preview(op="note.move", fingerprint="f" * 64, changes=changes, detail=NoDetail())
    assert receipt_event(preview, channel="cli", proposer="cli:vaultctl", undoes=None, proposal=None) is None


async def test_a_bulk_state_lists_a_bounded_number_of_changes_and_counts_the_rest() -> None:
    clock = FakeClock()
    log = EventLog("notes", clock=clock)
    log.notes([NoteCreated(path=f"{n}.md") for n in range(BULK_LISTED + 10)])
    clock.now += 1
    log.leave_bulk_if_quiet()
    events = _decoded(log)
    assert len(events) == BULK_LISTED + 2
    leave = events[-1]
    assert isinstance(leave, StateLeave) and (leave.changes, leave.listed) == (BULK_LISTED + 10, BULK_LISTED)


async def test_closing_records_the_last_event_and_a_successor_starts_a_new_instance() -> None:
    log = EventLog("notes")
    waker = Waker()
    log.follow(waker)
    nxt = log.successor_for("the folder came back")
    assert log.closed and log.successor is nxt and nxt.instance != log.instance
    (fresh,) = _decoded(nxt)
    assert str(type(fresh).__struct_config__.tag) == "fresh_instance" and fresh.clock == f"{nxt.instance}:1"
    log.record(NoteCreated(path="late.md"))
    assert log.head == 0, "a closed log records nothing more"
    await waker.wait()  # the close woke the follower
    removed = EventLog("gone")
    removed.close(final=VaultRemoved())
    assert [str(type(e).__struct_config__.tag) for e in _decoded(removed)] == ["vault.removed"] and removed.successor is None


async def test_a_waker_woken_twice_wakes_once_and_none_is_lost() -> None:
    waker = Waker()
    waker.wake()
    waker.wake()
    await waker.wait()
    with anyio.move_on_after(0.05) as timer:
        await waker.wait()
    assert timer.cancelled_caught, "the two wakes were one"
