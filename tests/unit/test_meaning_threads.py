"""The meaning worker's choice of threads: a second one only while a second core was free, a
fixed count when configured, and the free cores read from ``/proc/stat`` and the process's own
CPU time."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultd.retrieve.embed_worker import LOWER_AT, MAX_THREADS, RAISE_AT, IdleCores, configured_threads, threads_wanted


def test_one_thread_while_the_other_core_is_busy_two_once_it_is_idle() -> None:
    assert threads_wanted(1.0, 1, 2) == 1  # our core only: the other is someone's
    assert threads_wanted(1.0 + RAISE_AT - 0.01, 1, 2) == 1  # just under the rise
    assert threads_wanted(1.0 + RAISE_AT, 1, 2) == 2  # at it
    assert threads_wanted(2.0, 1, 2) == 2
    assert threads_wanted(2.0, 2, 2) == 2  # both cores ours: stay
    assert threads_wanted(2.0 - LOWER_AT, 2, 2) == 2  # at the drop: stay
    assert threads_wanted(2.0 - LOWER_AT - 0.01, 2, 2) == 1  # under it: back to one
    assert threads_wanted(0.1, 2, 2) == 1


def test_an_unknown_sample_keeps_the_threads_and_the_limit_holds() -> None:
    assert threads_wanted(None, 1, 2) == 1
    assert threads_wanted(None, 2, 2) == 2
    assert threads_wanted(8.0, 1, 1) == 1  # one usable core
    assert threads_wanted(8.0, 2, 1) == 1


@given(st.one_of(st.none(), st.floats(0, 64)), st.integers(1, 8), st.integers(1, 8))
def test_the_choice_moves_by_one_within_its_bounds(free: float | None, current: int, limit: int) -> None:
    chosen = threads_wanted(free, current, limit)
    assert 1 <= chosen <= limit
    assert abs(chosen - min(current, limit)) <= 1


@given(st.floats(0, 64), st.floats(0, 64), st.integers(1, 2))
def test_more_free_cores_never_means_fewer_threads(a: float, b: float, current: int) -> None:
    low, high = sorted((a, b))
    assert threads_wanted(low, current, 2) <= threads_wanted(high, current, 2)


@pytest.mark.parametrize(
    ("value", "threads"),
    [(None, None), ("", None), ("auto", None), ("two", None), ("-1", None), ("0", 1), ("1", 1), ("2", 2), ("9", MAX_THREADS), (" 2 ", 2)],
)
def test_the_configured_threads(value: str | None, threads: int | None) -> None:
    assert configured_threads(value) == threads


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/stat is Linux's")
def test_the_free_cores_are_sampled_from_proc_stat() -> None:
    sampler = IdleCores()
    sum(range(2_000_000))  # some CPU of our own between the samples
    free = sampler.take()
    assert free is not None and 0.0 <= free
