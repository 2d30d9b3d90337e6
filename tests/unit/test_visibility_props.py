"""Properties of the free-text screen that keeps log lines naming private notes from agents."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultd.policy.visibility import MAX_CANDIDATES, Visibility, mentioned_paths

_SEPARATORS = [" ", "(", "[", '"', "'", "\u2192 ", "\u2014 ", "|", ",", ":", "  "]
_ENDINGS = ["", " ", ")", "]", ",", " (20261203T120000.000000-ab12cd34)"]

segment = (
    st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="/\\"), min_size=1, max_size=12)
    .map(str.strip)
    .filter(lambda s: s and ".md" not in s.casefold())
)
note_path = st.lists(segment, min_size=1, max_size=4).map(lambda parts: "/".join(parts) + ".md")
prose = st.text(st.characters(codec="utf-8"), max_size=80)


@settings(max_examples=150)
@given(prefix=prose, sep=st.sampled_from(_SEPARATORS), path=note_path, end=st.sampled_from(_ENDINGS))
def test_every_embedded_path_is_a_candidate(prefix: str, sep: str, path: str, end: str) -> None:
    text = f"{prefix}{sep}{path}{end}"
    if ".md" in prefix.casefold() or not path.strip() == path:
        return  # an earlier ".md" bounds where a path may start; covered by the screen test below
    assert path in set(mentioned_paths(text))


@settings(max_examples=150)
@given(prefix=prose, sep=st.sampled_from(_SEPARATORS), name=note_path, end=st.sampled_from(_ENDINGS))
def test_a_line_naming_a_private_note_is_always_hidden(prefix: str, sep: str, name: str, end: str) -> None:
    view = Visibility(["Diary/**"])
    assert view.names_hidden(f"{prefix}{sep}diary/{name}{end}")
    assert view.names_hidden(f"{prefix}{sep}.trash/diary/{name}{end}")
    assert view.names_hidden(f"{prefix} [[diary/{name.removesuffix('.md')}]]{end}")


@given(text=prose)
def test_a_line_naming_no_private_note_is_shown(text: str) -> None:
    if "diary" in text.casefold():
        return
    assert not Visibility(["Diary/**"]).names_hidden(text)
    assert not Visibility([]).names_hidden(text + " diary/x.md")


def test_past_the_candidate_bound_a_line_is_hidden_not_searched() -> None:
    crowded = " ".join(["a"] * (MAX_CANDIDATES + 10)) + ".md"
    assert len(list(mentioned_paths(crowded))) > MAX_CANDIDATES
    assert Visibility(["Diary/**"]).names_hidden(crowded)
    assert not Visibility(["Diary/**"]).names_hidden(" ".join(["a"] * 20) + ".md")
