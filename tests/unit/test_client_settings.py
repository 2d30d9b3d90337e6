"""The client's own settings: the reply timeout's bounds, at their edges."""

from __future__ import annotations

import pytest

from vaultctl.client import DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S, TIMEOUT_ENV, BadSetting, client_timeout


@pytest.mark.parametrize(
    "raw, seconds",
    [
        ("", DEFAULT_TIMEOUT_S),
        ("  ", DEFAULT_TIMEOUT_S),
        ("86400", MAX_TIMEOUT_S),
        ("1e-9", 1e-9),
        (" 2.5 ", 2.5),
    ],
)
def test_accepted(raw: str, seconds: float) -> None:
    assert client_timeout({TIMEOUT_ENV: raw}) == seconds


def test_unset_is_the_default() -> None:
    assert client_timeout({}) == DEFAULT_TIMEOUT_S


@pytest.mark.parametrize("raw", ["0", "-0", "-1", "86400.0001", "nan", "inf", "-inf", "1s", "soon"])
def test_refused(raw: str) -> None:
    with pytest.raises(BadSetting, match=TIMEOUT_ENV):
        client_timeout({TIMEOUT_ENV: raw})
