"""vaultd's own files (P05), by every spelling a filesystem or a sync tool takes as the same file:
the log path in any letter case or Unicode form, ``.vaultd`` and ``.git`` at any depth, and any file
that starts (before or after a write) with the log's header line. Notes beside them stay writable."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultd.policy import owned_path_issue
from vaultd.vault.layout import LOG_HEADER

LOG = LOG_HEADER.encode()


@st.composite
def respelled(draw: st.DrawFn, path: str) -> str:
    """``path`` with each letter's case drawn, in NFC or NFD."""
    out = "".join(c.upper() if draw(st.booleans()) else c.lower() for c in path)
    return unicodedata.normalize(draw(st.sampled_from(["NFC", "NFD"])), out)


NAME = st.text(alphabet="abcdefgh é", min_size=1, max_size=8).map(str.strip).filter(bool)


@settings(max_examples=300, deadline=None)
@given(st.data(), st.sampled_from(["log.md", "Journal/vaultd log.md", "méta/Log.md"]))
def test_the_log_path_in_any_spelling_is_vaultds(data: st.DataObject, log_rel: str) -> None:
    rel = data.draw(respelled(log_rel))
    before = data.draw(st.sampled_from([None, LOG + b"2020-01-01 00:00  EXTRACT  -  a  \xe2\x80\x94  b\n", b"# mine\n"]))
    after = data.draw(st.sampled_from([None, b"# my notes\n", LOG]))
    issue = owned_path_issue(rel, before, after, log_rel=log_rel, vault_id="v")
    assert issue is not None and issue.code == "P05", rel
    assert "log_path" in issue.message and "--log-path" in issue.message


@settings(max_examples=300, deadline=None)
@given(st.lists(NAME, max_size=3), st.lists(NAME, max_size=2), st.sampled_from([".vaultd", ".VaultD", ".git", ".GIT"]))
def test_anything_inside_vaultds_or_gits_folder_is_theirs(above: list[str], below: list[str], folder: str) -> None:
    rel = "/".join([*above, folder, *below, "x.md"])
    issue = owned_path_issue(rel, None, b"# x\n", log_rel="log.md", vault_id="v")
    assert issue is not None and issue.code == "P05", rel


@settings(max_examples=300, deadline=None)
@given(st.lists(NAME, min_size=1, max_size=3), st.booleans())
def test_a_file_starting_with_the_log_header_is_vaultds_wherever_it_is(parts: list[str], before_is_log: bool) -> None:
    rel = "/".join(parts) + ".md"
    before, after = (LOG + b"a line\n", b"# mine now\n") if before_is_log else (b"# note\n", LOG)
    issue = owned_path_issue(rel, before, after, log_rel="elsewhere/log.md", vault_id="v")
    assert issue is not None and issue.code == "P05"


@settings(max_examples=300, deadline=None)
@given(st.lists(NAME, min_size=1, max_size=3))
def test_notes_are_not_vaultds(parts: list[str]) -> None:
    rel = "/".join(parts) + ".md"
    # A note that merely mentions the header, or sits beside the log, is the user's.
    for before, after in ((None, b"# x\n"), (b"# x\n", b"# x\n" + LOG), (b"# x\n", None)):
        assert owned_path_issue(rel, before, after, log_rel="Logs/log.md", vault_id="v") is None, rel
    assert owned_path_issue(".trash/" + rel, None, b"# x\n", log_rel="log.md", vault_id="v") is None
    assert owned_path_issue(".obsidian/bookmarks.json", b"{}", b"{}", log_rel="log.md", vault_id="v") is None
