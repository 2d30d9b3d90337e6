"""The plain-scalar rules a flat header is read with are ruamel.yaml's own, copied so that reading
one does not load ruamel.yaml (docs/performance.md, "What a vault's machinery costs"): each copy
is held equal to ruamel's here."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ruamel.yaml.resolver import implicit_resolvers
from ruamel.yaml.util import timestamp_regexp

from vaultd.vault import yaml_scalars
from vaultd.vault.frontmatter_yaml import load_careful


def test_the_yaml_12_resolvers_are_ruamels_own_in_ruamels_order() -> None:
    theirs = [
        (tag, regexp.pattern, regexp.flags, tuple(firsts))
        for versions, tag, regexp, firsts in implicit_resolvers
        if (1, 2) in versions and tag in yaml_scalars._CONVERTERS
    ]
    ours = [
        (tag, re.compile(pattern, flags).pattern, re.compile(pattern, flags).flags, firsts)
        for tag, pattern, flags, firsts in yaml_scalars.IMPLICIT_12
    ]
    assert ours == theirs


def test_the_timestamp_pattern_is_ruamels_own() -> None:
    assert yaml_scalars.TIMESTAMP_PATTERN == timestamp_regexp.pattern
    assert re.compile(yaml_scalars.TIMESTAMP_PATTERN, re.X).flags == timestamp_regexp.flags


@pytest.mark.parametrize(
    "text",
    [
        "",
        "~",
        "null",
        "true",
        "False",
        "012",
        "0o17",
        "0x1F",
        "1_000",
        "1e3",
        ".5",
        "-.inf",
        ".NaN",
        "2024-01-31",
        "2024-1-5 7:08:09",
        "2024-01-31T10:20:30.1234567Z",
        "2024-01-31 10:20:30 -05:30",
        "2023-02-30",
        "2023-02-30 10:00:00",
        "yes",
        "on",
        "0:30",
    ],
)
def test_a_plain_scalar_reads_as_ruamel_reads_it(text: str) -> None:
    data, issues = load_careful(f"k: {text}\n")
    assert not issues
    assert data is not None
    assert yaml_scalars.resolve_plain(text) == data["k"]


_PLAINISH = st.from_regex(r"\A[0-9][0-9_:.eE+\-Tt Z]{0,28}\Z", fullmatch=True).map(str.strip)


@given(_PLAINISH)
def test_a_scalar_that_starts_as_a_number_or_a_date_reads_as_ruamel_reads_it(text: str) -> None:
    data, issues = load_careful(f"k: {text}\n")
    if issues or data is None:  # not a plain scalar of one line (say "1: 2"): not this rule's to read
        return
    assert yaml_scalars.resolve_plain(text) == data["k"]
