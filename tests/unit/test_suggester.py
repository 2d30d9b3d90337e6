"""The dead-link suggester normalizes its titles at its first suggestion, not as they are added:
what it suggests is the same whichever comes first, the titles or a suggestion."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vaultd.vault.link_targets import Suggester, suggest

_TITLE = st.text(alphabet="abcdeAB -_.1", min_size=1, max_size=12)


@given(st.lists(_TITLE, min_size=1, max_size=12, unique=True), st.lists(_TITLE, max_size=6, unique=True), _TITLE)
def test_a_suggestion_is_the_same_before_and_after_the_titles_are_normalized(first: list[str], later: list[str], query: str) -> None:
    lazy = Suggester(first)
    twin = lazy.copy()  # copied before any suggestion: it normalizes on its own
    lazy.suggest(query)  # normalizes every title; those added after are normalized as they come
    for title in later:
        lazy.add(title)
        twin.add(title)
    if first[0] not in later:
        lazy.remove(first[0])
        twin.remove(first[0])
    titles = lazy.titles()
    assert titles == twin.titles()
    assert lazy.suggest(query) == twin.suggest(query) == Suggester(titles).suggest(query)
    found = suggest(query, titles)
    assert (found is None) == (lazy.suggest(query) is None)
