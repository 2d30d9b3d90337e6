"""added_lines: what a write adds, by multiset difference of line contents."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from vaultd.policy import added_lines, split_lines


def test_new_file_adds_every_line() -> None:
    assert added_lines(None, "a\nb\n") == [(1, "a"), (2, "b")]
    assert added_lines(None, "") == []


def test_appended_and_inserted_lines() -> None:
    assert added_lines("a\nb\n", "a\nx\nb\ny") == [(2, "x"), (4, "y")]


def test_moving_lines_adds_nothing() -> None:
    assert added_lines("a\nb\nc\n", "c\na\nb\n") == []


def test_a_second_copy_is_added_and_the_later_copy_counts() -> None:
    assert added_lines("a\n", "a\nb\na\n") == [(2, "b"), (3, "a")]


def test_line_endings_do_not_count() -> None:
    assert added_lines("a\r\nb\r\n", "a\nb\n") == []
    assert split_lines("a\r\nb") == ["a", "b"]
    assert split_lines("a\n\n") == ["a", ""]


lines = st.lists(st.sampled_from(["a", "b", "c", "", " x", "password: y"]), max_size=20)


@given(lines, lines)
def test_added_is_the_multiset_difference(before: list[str], after: list[str]) -> None:
    got = added_lines("\n".join(before), "\n".join(after))
    expected = Counter(split_lines("\n".join(after))) - Counter(split_lines("\n".join(before)))
    assert Counter(text for _, text in got) == expected
    after_lines = split_lines("\n".join(after))
    assert all(after_lines[n - 1] == text for n, text in got)
    assert [n for n, _ in got] == sorted(n for n, _ in got)


def test_decoded_lines_expose_escaped_values_to_the_scanners() -> None:
    from vaultd.policy import decoded_lines, scan_secret_lines
    from vaultd.vault.frontmatter import parse

    token = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI2kM4"
    escaped = "".join(f"\\x{ord(c):02x}" for c in token)
    note = f'---\nrefs:\n  api: "{escaped}"\nlist: [a, 2]\n---\nbody\n'
    assert scan_secret_lines(enumerate(note.split("\n"), start=1)) == []  # the raw text hides it
    data = parse(note).data
    lines = decoded_lines(data, line=1)
    assert (1, "list: a") in lines and (1, "list: 2") in lines
    assert [(f.rule.value, f.line) for f in scan_secret_lines(lines)] == [("github-token", 1)]
    assert decoded_lines(None) == [] and decoded_lines({}) == []
