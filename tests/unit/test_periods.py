"""Which day a relative spec names for a periodic note: ``-N`` / ``+N`` count the period's steps, a
month step keeps the day of the month or takes the month's last day, and the bounds hold."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultd.obsidian.daily import MAX_DAYS_AWAY, DayError, resolve_day
from vaultd.obsidian.moment import format_date

TODAY = dt.date(2024, 1, 31)


@pytest.mark.parametrize(
    ("spec", "period", "day"),
    [
        ("-1", "week", dt.date(2024, 1, 24)),
        ("+1", "month", dt.date(2024, 2, 29)),  # 31 January + 1 month: the last day of February
        ("+2", "month", dt.date(2024, 3, 31)),
        ("-1", "quarter", dt.date(2023, 10, 31)),
        ("+1", "quarter", dt.date(2024, 4, 30)),
        ("-1", "year", dt.date(2023, 1, 31)),
        ("yesterday", "month", dt.date(2024, 1, 30)),  # a named day stays a day
        ("2024-05-05", "year", dt.date(2024, 5, 5)),
        ("+3", "day", dt.date(2024, 2, 3)),
    ],
)
def test_a_relative_spec_counts_the_periods_steps(spec: str, period: str, day: dt.date) -> None:
    assert resolve_day(spec, TODAY, period) == day


def test_the_bound_holds_in_periods_too() -> None:
    assert resolve_day("+100", TODAY, "year") == dt.date(2124, 1, 31)  # 36,525 days: within the bound
    with pytest.raises(DayError):
        resolve_day("+101", TODAY, "year")  # past MAX_DAYS_AWAY
    with pytest.raises(DayError):
        resolve_day("+999999", TODAY, "year")  # leaves the calendar
    assert MAX_DAYS_AWAY == 36600


@given(st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2100, 12, 31)), st.integers(-50, 50))
def test_a_month_step_lands_in_the_month_it_counts(today: dt.date, steps: int) -> None:
    day = resolve_day(f"{steps:+d}", today, "month")
    assert (day.year * 12 + day.month) - (today.year * 12 + today.month) == steps
    assert day.day == today.day or day.day < today.day and (day + dt.timedelta(days=1)).day == 1


@given(st.dates(min_value=dt.date(1900, 1, 8), max_value=dt.date(2100, 12, 24)))
def test_the_days_of_a_week_name_one_week_note(today: dt.date) -> None:
    sunday = today - dt.timedelta(days=today.isoweekday() % 7)
    names = {format_date(sunday + dt.timedelta(days=i), "gggg-[W]ww") for i in range(7)}
    assert len(names) == 1
    assert format_date(resolve_day("-1", today, "week"), "gggg-[W]ww") != names.pop()
