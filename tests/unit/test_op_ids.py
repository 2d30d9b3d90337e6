"""Operation ids sort in the order they were issued: within one second, when the clock steps back,
and across a restart; and the protocol accepts every id the daemon issues."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.methods.writes import UndoParams
from vaultd.ops import new_op_id
from vaultd.txn import opids

NOON = dt.datetime(2026, 12, 3, 12, 0, 0, tzinfo=dt.UTC)


@pytest.fixture(autouse=True)
def _fresh_clock() -> None:
    opids._last.clear()


def _accepted(op_id: str) -> bool:
    try:
        msgspec.convert({"op_id": op_id}, UndoParams)
    except msgspec.ValidationError:
        return False
    return True


def test_ids_issued_within_one_second_sort_in_issue_order(tmp_path: Path) -> None:
    ids = [new_op_id(NOON, tmp_path) for _ in range(500)]
    assert sorted(ids) == ids
    assert sorted(ids, key=opids.sort_key) == ids
    assert len(set(ids)) == len(ids)


def test_a_clock_stepped_back_still_gives_later_ids(tmp_path: Path) -> None:
    first = new_op_id(NOON, tmp_path)
    earlier = new_op_id(NOON - dt.timedelta(hours=3), tmp_path)
    assert opids.op_time_us(earlier) > opids.op_time_us(first)
    assert sorted([earlier, first]) == [first, earlier]


def test_after_a_restart_ids_follow_the_newest_journal_even_if_the_clock_went_back(tmp_path: Path) -> None:
    before_restart = opids.next_op_id(tmp_path, NOON, lambda: None)
    opids._last.clear()  # a new process knows only what is on disk
    after_restart = opids.next_op_id(tmp_path, NOON - dt.timedelta(days=1), lambda: before_restart)
    assert opids.sort_key(after_restart) > opids.sort_key(before_restart)


def test_each_vault_has_its_own_clock(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    opids.next_op_id(a, NOON, lambda: "20991231T235959.999999-00000000")
    assert opids.next_op_id(b, NOON, lambda: None).startswith("20261203T120000.000000-")


def test_ids_are_readable_utc_times_the_protocol_accepts(tmp_path: Path) -> None:
    local = NOON.astimezone(dt.timezone(dt.timedelta(hours=9)))
    op_id = new_op_id(local, tmp_path)
    assert op_id.startswith("20261203T120000.000000-")
    assert _accepted(op_id)
    assert _accepted("20261203T120000-0123abcd"), "ids written before microseconds are still accepted"
    for bad in (
        "20261203T120000.12-0123abcd",
        "../20261203T120000-0123abcd",
        "20261203T120000.000000-0123abcg",
        "20261203T120000.000000-0123abcd.tmp",
        "",
    ):
        assert not _accepted(bad), bad


def test_ids_of_the_earlier_form_sort_before_new_ones_of_the_same_second() -> None:
    old, new = "20261203T120000-ffffffff", "20261203T120000.000000-00000000"
    assert sorted([new, old]) == [old, new] == sorted([new, old], key=opids.sort_key)


@given(st.lists(st.integers(min_value=-(10**12), max_value=10**12), min_size=1, max_size=60))
def test_any_clock_gives_strictly_increasing_accepted_ids(steps: list[int]) -> None:
    """Whatever the clock does between calls (jumps, repeats, goes back), ids only increase."""
    opids._last.clear()
    root = Path("/vault")
    ids = [opids.next_op_id(root, NOON + dt.timedelta(microseconds=s), lambda: None) for s in steps]
    keys = [opids.sort_key(i) for i in ids]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert ids == sorted(ids)
    assert all(_accepted(i) for i in ids)


_IDS = st.builds(
    lambda second, micro, tail: f"{second:%Y%m%dT%H%M%S}{'' if micro is None else f'.{micro:06d}'}-{tail:08x}",
    st.datetimes(min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2200, 1, 1)),
    st.none() | st.integers(min_value=0, max_value=999_999),
    st.integers(min_value=0, max_value=2**32 - 1),
)


@given(st.lists(_IDS, max_size=40))
def test_the_sort_key_orders_ids_by_their_time(ids: list[str]) -> None:
    """The key is the id's text; it must order as the time the id names, the earlier form first."""
    by_time = sorted(ids, key=lambda i: (opids.op_time_us(i), i))
    assert sorted(ids, key=opids.sort_key) == by_time
