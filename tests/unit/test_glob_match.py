"""Globs compiled into one regular expression answer exactly as fnmatch per component does
(:func:`vaultd.policy.paths.matching_glob`), and no glob makes matching blow up."""

from __future__ import annotations

import fnmatch

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultd.policy.glob_match import GlobSet
from vaultd.policy.paths import matching_glob, path_key

#: glob text drawn character by character: brackets, negations, ranges, escapes, case, folding
_GLOB_TEXT = st.text(alphabet=list("ab/*?[]!-\\.Aß^&~|"), min_size=1, max_size=14)
#: glob components: folders, stars inside and across components, classes
_GLOB_PART = st.sampled_from(["**", "*", "a", "b*", "*a", "?", "[ab]", "[!a]", "a*b*", "", "A", "*.md", "[a-", "SS"])
_GLOBS = st.one_of(_GLOB_TEXT, st.lists(_GLOB_PART, min_size=1, max_size=6).map("/".join))
_PATH_PART = st.sampled_from(["a", "b", "ab", "ba", "aab", "x.md", "", "A", "bab", "ß", "[a-", "!"])
_PATHS = st.one_of(
    st.text(alphabet=list("ab/.A-[]ßS\\!"), max_size=14),
    st.lists(_PATH_PART, min_size=1, max_size=7).map("/".join),
)


def _fnmatch_per_glob(rel: str, globs: list[str]) -> bool:
    """The rule stated plainly: some glob, component by component through fnmatchcase (``**``
    spanning any number of components), matches the path or one of its folders."""

    def match(pat: list[str], parts: list[str]) -> bool:
        if not pat:
            return True  # the glob matched a folder (or the path): it covers the rest
        if pat[0] == "**":
            return any(match(pat[1:], parts[i:]) for i in range(len(parts) + 1))
        return bool(parts) and fnmatch.fnmatchcase(parts[0], pat[0]) and match(pat[1:], parts[1:])

    parts = path_key(rel).split("/")
    for glob in globs:
        pat = path_key(glob).strip("/").split("/")
        if any(match(pat, parts[:n]) for n in range(1, len(parts) + 1)):
            return True
    return False


@settings(max_examples=1500, deadline=None)
@given(st.lists(_GLOBS, min_size=1, max_size=4), _PATHS)
def test_a_compiled_glob_set_matches_exactly_as_fnmatch_per_glob(globs: list[str], rel: str) -> None:
    expected = matching_glob(rel, globs) is not None
    assert GlobSet(globs).matches(rel) == expected
    assert _fnmatch_per_glob(rel, globs) == expected


def test_folder_globs_cover_what_is_below_them_in_any_case_and_unicode_form() -> None:
    s = GlobSet(["Private", "projects/*/drafts/**", "**/*.secret.md"])
    assert s.matches("private/a.md") and s.matches("PRIVATE/x/y.md")
    assert s.matches("projects/p1/drafts/a.md") and not s.matches("projects/drafts/a.md")
    assert s.matches("a/b/c/note.secret.md") and s.matches("note.SECRET.md")
    assert not s.matches("privateer.md") and not s.matches("notes/a.md")
    assert GlobSet(["café"]).matches("cafe\u0301/a.md")  # NFD spelling of the same folder
    assert not GlobSet([]).matches("a.md")


def test_no_glob_makes_matching_blow_up() -> None:
    """Stars and ``**`` that would backtrack without bound are matched leftmost, once: this
    finishes at once instead of after longer than the universe has existed."""
    glob = "/".join(["**", "a*a*a*a*a*a*a*a*a*a*a*a*b"] * 20)
    rel = "/".join(["a" * 250] * 40)
    assert not GlobSet([glob] * 64).matches(rel)
    assert GlobSet(["*a*a*a*a*a*a*a*a*a*a*a*a*a*a"]).matches("a" * 250 + "/x.md")
