"""moment.js formats as Obsidian's settings use them: a table of moment's documented examples,
the locale weeks around the turn of the year, refused tokens, and round trips (format, then parse
gives the date back for every format that determines one)."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultd.obsidian.moment import MomentError, UnsupportedToken, format_date, parse_date, tokens

#: moment's documentation (momentjs.com/docs/#/displaying/format/) formats 2010-02-14 15:25:50.125
#: and 1986-09-04 20:30 this way.
VALENTINE = dt.datetime(2010, 2, 14, 15, 25, 50, 125000)
SEPTEMBER = dt.datetime(1986, 9, 4, 20, 30)
DOCUMENTED = [
    (VALENTINE, "dddd, MMMM Do YYYY, h:mm:ss a", "Sunday, February 14th 2010, 3:25:50 pm"),
    (VALENTINE, "ddd, hA", "Sun, 3PM"),
    (VALENTINE, "[Today is] dddd", "Today is Sunday"),
    (VALENTINE, "YYYY [escaped] YYYY", "2010 escaped 2010"),
    (SEPTEMBER, "LT", "8:30 PM"),
    (SEPTEMBER, "LTS", "8:30:00 PM"),
    (SEPTEMBER, "L", "09/04/1986"),
    (SEPTEMBER, "l", "9/4/1986"),
    (SEPTEMBER, "LL", "September 4, 1986"),
    (SEPTEMBER, "ll", "Sep 4, 1986"),
    (SEPTEMBER, "LLL", "September 4, 1986 8:30 PM"),
    (SEPTEMBER, "lll", "Sep 4, 1986 8:30 PM"),
    (SEPTEMBER, "LLLL", "Thursday, September 4, 1986 8:30 PM"),
    (SEPTEMBER, "llll", "Thu, Sep 4, 1986 8:30 PM"),
]
#: the tokens of moment's format table, one date each
TOKENS = [
    ("M", "2"), ("Mo", "2nd"), ("MM", "02"), ("MMM", "Feb"), ("MMMM", "February"),
    ("Q", "1"), ("Qo", "1st"),
    ("D", "14"), ("Do", "14th"), ("DD", "14"),
    ("DDD", "45"), ("DDDo", "45th"), ("DDDD", "045"),
    ("d", "0"), ("do", "0th"), ("dd", "Su"), ("ddd", "Sun"), ("dddd", "Sunday"),
    ("e", "0"), ("E", "7"),
    ("w", "8"), ("wo", "8th"), ("ww", "08"),
    ("W", "6"), ("Wo", "6th"), ("WW", "06"),
    ("YY", "10"), ("YYYY", "2010"), ("gggg", "2010"), ("GGGG", "2010"),
    ("A", "PM"), ("a", "pm"),
    ("H", "15"), ("HH", "15"), ("h", "3"), ("hh", "03"), ("k", "15"), ("kk", "15"),
    ("m", "25"), ("mm", "25"), ("s", "50"), ("ss", "50"),
    ("S", "1"), ("SS", "12"), ("SSS", "125"),
]  # fmt: skip


@pytest.mark.parametrize(("when", "fmt", "expected"), DOCUMENTED)
def test_moments_documented_examples(when: dt.datetime, fmt: str, expected: str) -> None:
    assert format_date(when, fmt) == expected


@pytest.mark.parametrize(("token", "expected"), TOKENS)
def test_every_token_of_the_format_table(token: str, expected: str) -> None:
    assert format_date(VALENTINE, token) == expected


def test_unix_timestamps_follow_the_machine_clock_as_moment_does() -> None:
    aware = dt.datetime(2013, 2, 4, 21, 28, 16, 123000, tzinfo=dt.UTC)
    assert format_date(aware, "X") == "1360013296"
    assert format_date(aware, "x") == "1360013296123"
    assert format_date(aware, "Z ZZ") == "+00:00 +0000"


@pytest.mark.parametrize(
    ("day", "locale", "iso"),
    [
        ("2024-12-29", "2025-W01", "2024-W52"),  # a Sunday: the locale week holding 1 January begins
        ("2024-12-28", "2024-W52", "2024-W52"),
        ("2021-01-01", "2021-W01", "2020-W53"),
        ("2023-01-01", "2023-W01", "2022-W52"),
        ("2022-12-31", "2022-W53", "2022-W52"),
        ("2027-01-03", "2027-W02", "2026-W53"),
    ],
)
def test_locale_and_iso_weeks_at_the_turn_of_the_year(day: str, locale: str, iso: str) -> None:
    date = dt.date.fromisoformat(day)
    assert format_date(date, "gggg-[W]ww") == locale
    assert format_date(date, "GGGG-[W]WW") == iso


def test_escapes_and_unknown_letters_are_literal() -> None:
    assert format_date(VALENTINE, "\\Y YYYY-[MM]") == "Y 2010-MM"
    assert format_date(VALENTINE, "\\YYYYY") == "YYYYY"  # the backslash escapes the whole token after it
    assert format_date(VALENTINE, "YYYY-MM-DDTHH:mm") == "2010-02-14T15:25"
    assert format_date(VALENTINE, "[[]YYYY[]]") == "[2010]"


@pytest.mark.parametrize("fmt", ["YYYY-MM-DD zz", "NNNN", "yyyy", "YYYYY", "GGGGG", "gg", "Y"])
def test_an_unsupported_token_is_a_clear_error(fmt: str) -> None:
    with pytest.raises(UnsupportedToken) as caught:
        format_date(VALENTINE, fmt)
    assert repr(caught.value.token) in str(caught.value) and "does not support" in str(caught.value)


def test_a_format_over_its_bound_is_refused_at_the_bound_and_past_it() -> None:
    assert len(tokens("[" + "x" * 254 + "]")) == 1  # 256 characters: at the bound
    with pytest.raises(MomentError):
        tokens("x" * 257)


@pytest.mark.parametrize(
    ("text", "fmt", "expected"),
    [
        ("2024-12-29 Sunday", "YYYY-MM-DD dddd", dt.datetime(2024, 12, 29)),
        ("2025-W01", "gggg-[W]ww", dt.datetime(2024, 12, 29)),
        ("2020-W53", "GGGG-[W]WW", dt.datetime(2020, 12, 28)),
        ("202401011230", "YYYYMMDDHHmm", dt.datetime(2024, 1, 1, 12, 30)),
        ("February 14th 2010, 3:25 pm", "MMMM Do YYYY, h:mm a", dt.datetime(2010, 2, 14, 15, 25)),
        ("2010-045", "YYYY-DDDD", dt.datetime(2010, 2, 14)),
        ("99-01-02", "YY-MM-DD", dt.datetime(1999, 1, 2)),
    ],
)
def test_parse(text: str, fmt: str, expected: dt.datetime) -> None:
    assert parse_date(text, fmt) == expected


@pytest.mark.parametrize(
    ("text", "fmt"), [("2024-13-01", "YYYY-MM-DD"), ("2024-02-30", "YYYY-MM-DD"), ("nope", "YYYY"), ("2024-W60", "gggg-[W]ww")]
)
def test_parse_refuses_what_names_no_date(text: str, fmt: str) -> None:
    with pytest.raises(MomentError):
        parse_date(text, fmt)


DATE_FORMATS = [
    "YYYY-MM-DD",
    "YYYY-MM-DD dddd",
    "YYYYMMDDHHmmss",
    "dddd, MMMM Do YYYY",
    "ddd, MMM D YYYY",
    "[Journal] YYYY/MM/DD",
    "YYYY-DDDD",
    "gggg-[W]ww-e",
    "GGGG-[W]WW-E",
    "L LTS",
    "YYYY-MM-DD hh:mm:ss.SSS a",
    "M/D/YYYY H:m:s",
]


@given(
    st.datetimes(min_value=dt.datetime(1970, 1, 2), max_value=dt.datetime(2099, 12, 30)).map(lambda d: d.replace(microsecond=0)),
    st.sampled_from(DATE_FORMATS),
)
def test_format_then_parse_gives_the_date_back(when: dt.datetime, fmt: str) -> None:
    back = parse_date(format_date(when, fmt), fmt)
    shown = {t.text for t in tokens(fmt) if not t.literal}
    if shown & {"H", "HH", "h", "hh", "LTS"}:
        assert back == when
    else:
        assert back.date() == when.date()


@given(st.dates(min_value=dt.date(1971, 1, 1), max_value=dt.date(9998, 12, 1)))
def test_locale_week_names_the_week_that_holds_the_day(day: dt.date) -> None:
    start = parse_date(format_date(day, "gggg-ww"), "gggg-ww").date()
    assert start.isoweekday() % 7 == 0 and 0 <= (day - start).days < 7
