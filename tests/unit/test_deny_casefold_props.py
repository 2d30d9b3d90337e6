"""Deny and private globs match on the normalized key, whatever the filesystem; written paths are
spelled as the disk spells them; note paths are screened like text; private paths hide per channel."""

from __future__ import annotations

import os
import time
import unicodedata
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.methods.common import Channel
from protocol.methods.vaults import Kind, VaultEntry
from vaultd.policy import deny_path_issue, disk_spelling, disk_twin, matching_glob, path_key, path_screen_issues
from vaultd.policy.visibility import Visibility

if TYPE_CHECKING:
    from pathlib import Path

# Letters whose upper and lower forms fold to the same key (German sharp s, ligatures, Greek,
# Cyrillic and precomposed Latin that NFD splits into a base and a combining mark).
LETTERS = "abcdefghijklmnopqrstuvwxyzéüñåçøßæœαβγδжё"
names = st.text(alphabet=LETTERS + "0123456789 -_", min_size=1, max_size=12).filter(lambda s: s.strip() == s and s not in (".", ".."))
folders = st.lists(names, min_size=1, max_size=3)


@st.composite
def spelled(draw: st.DrawFn, text: str) -> str:
    """``text`` with every letter in a drawn case, then in a drawn normalization form."""
    out = "".join(draw(st.sampled_from([c, c.upper(), c.lower()])) for c in text)
    return unicodedata.normalize(draw(st.sampled_from(["NFC", "NFD"])), out)


@given(st.data(), folders, names)
def test_any_case_or_form_of_a_denied_path_is_denied(data: st.DataObject, folder: list[str], name: str) -> None:
    glob = "/".join(folder) + "/**"
    rel = "/".join(folder) + f"/{name}.md"
    variant_path = data.draw(spelled(rel))
    variant_glob = data.draw(spelled(glob))
    assert path_key(variant_path) == path_key(rel)
    for g, p in ((glob, variant_path), (variant_glob, rel), (variant_glob, variant_path)):
        issue = deny_path_issue(p, [g])
        assert issue is not None and issue.code == "P02", (g, p)


@given(st.data(), names, names)
def test_wildcard_globs_match_every_spelling_too(data: st.DataObject, folder: str, name: str) -> None:
    for glob, rel in (
        (f"**/{name}*", f"x/y/{name}-1.md"),
        (f"{folder}/*.md", f"{folder}/{name}.md"),
        (f"{folder}", f"{folder}/deep/{name}.md"),
    ):
        assert matching_glob(data.draw(spelled(rel)), [data.draw(spelled(glob))]) is not None, (glob, rel)


@given(folders, names)
def test_a_sibling_folder_is_not_denied(folder: list[str], name: str) -> None:
    rel = "/".join(folder) + f"x/{name}.md"  # "...x" is another folder than the denied one
    assert deny_path_issue(rel, ["/".join(folder) + "/**"]) is None


@pytest.mark.parametrize("rel", ["PRIVATE/leak.md", "Private/Leak.md", "PrIvAtE/a/b.md"])
def test_the_reported_case(rel: str) -> None:
    assert deny_path_issue(rel, ["private/**"]) is not None
    assert deny_path_issue(rel, ["private"]) is not None


def test_nfd_and_nfc_spellings_share_a_rule() -> None:
    nfc, nfd = "Café/x.md", unicodedata.normalize("NFD", "Café/x.md")
    assert nfc != nfd
    assert deny_path_issue(nfd, ["café/**"]) is not None
    assert deny_path_issue(nfc, [unicodedata.normalize("NFD", "CAFÉ")]) is not None


# -- spelling a written path as the disk spells it ------------------------------------------------


def test_existing_folders_take_their_spelling_from_disk(tmp_path: Path) -> None:
    (tmp_path / "inbox" / "deep").mkdir(parents=True)
    (tmp_path / "Café").mkdir()
    assert disk_spelling(tmp_path, "Inbox/new.md") == ("inbox/new.md", [])
    assert disk_spelling(tmp_path, "INBOX/DEEP/New.md") == ("inbox/deep/New.md", [])
    assert disk_spelling(tmp_path, "inbox/Fresh/x.md") == ("inbox/Fresh/x.md", [])  # the rest is new
    assert disk_spelling(tmp_path, unicodedata.normalize("NFD", "café/x.md")) == ("Café/x.md", [])
    assert disk_spelling(tmp_path, "../inbox/x.md") == ("../inbox/x.md", [])  # left to check_new_path


def test_folder_twins_on_disk_must_be_named_exactly(tmp_path: Path) -> None:
    (tmp_path / "inbox").mkdir()
    (tmp_path / "Inbox").mkdir()
    assert disk_spelling(tmp_path, "Inbox/a.md") == ("Inbox/a.md", [])
    path, issues = disk_spelling(tmp_path, "INBOX/a.md")
    assert path == "INBOX/a.md" and [i.code for i in issues] == ["V04"]


def test_a_file_twin_is_found_by_key(tmp_path: Path) -> None:
    (tmp_path / "inbox").mkdir()
    (tmp_path / "inbox" / "note.md").write_text("x")
    assert disk_twin(tmp_path, "inbox/note.md") == "inbox/note.md"
    assert disk_twin(tmp_path, "inbox/Note.md") == "inbox/note.md"
    assert disk_twin(tmp_path, "inbox/other.md") is None
    assert disk_twin(tmp_path, "nowhere/note.md") is None
    assert disk_twin(tmp_path, "../note.md") is None


# -- screening a path like text -------------------------------------------------------------------

GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
AWS = "AKIA" + "Q3EXAMPLEZ7KEY2X"


@pytest.mark.parametrize("rel", [f"{GITHUB}.md", f"notes/{GITHUB}/a.md", f"keys/{AWS}.md", f"x/a {AWS} b.md"])
def test_a_secret_in_a_path_is_refused_without_echo(rel: str) -> None:
    issues = path_screen_issues(rel, None, Kind.PERSONAL)
    assert issues and {i.code for i in issues} == {"V06"}
    for issue in issues:
        assert issue.path is None
        assert GITHUB not in issue.message and AWS not in issue.message
        assert "ghp_" not in issue.message and "AKIA" not in issue.message


def test_pii_in_a_path_follows_the_vault_policy() -> None:
    rel = "people/ada@example.org.md"
    assert path_screen_issues(rel, None, Kind.PERSONAL) == []
    issues = path_screen_issues(rel, None, Kind.ORG)
    assert [i.code for i in issues] == ["V07"] and issues[0].path is None
    assert "ada@" not in issues[0].message


@pytest.mark.parametrize("rel", ["inbox/Ideas.md", "projects/alpha/Alpha Plan.md", "daily/2024-05-01.md", "東京オフィス開設.md"])
def test_plain_paths_pass(rel: str) -> None:
    assert path_screen_issues(rel, None, Kind.ORG) == []


# -- private paths per channel --------------------------------------------------------------------


PRIVATE_ENTRY = VaultEntry(id="v", path="/v", private_paths=["diary/**", "**/*.secret.md"])


@pytest.mark.parametrize("rel", ["diary/a.md", "DIARY/x/y.md", unicodedata.normalize("NFD", "Diary/é.md"), "a/b.secret.md"])
def test_private_paths_hide_from_mcp(rel: str) -> None:
    agent = Visibility.of(PRIVATE_ENTRY, Channel.MCP)
    assert agent.hidden(rel)
    issue = agent.write_issue(rel)
    assert issue is not None and issue.code == "P04" and issue.path is None


def test_private_paths_hide_from_mcp_only() -> None:
    entry = PRIVATE_ENTRY
    agent = Visibility.of(entry, Channel.MCP)
    assert agent.visible("diaryx/a.md") and agent.write_issue("notes/a.md") is None
    for channel in (Channel.CLI, Channel.EDITOR):
        person = Visibility.of(entry, channel)
        assert not person.hides_anything and person.visible("diary/a.md")


def test_a_twin_made_at_once_after_a_listing_is_seen(tmp_path: Path) -> None:
    """A folder changed moments ago is listed again at each write: a change within the clock's
    granularity cannot hide behind an equal change time."""
    (tmp_path / "inbox").mkdir()
    assert disk_twin(tmp_path, "Inbox") == "inbox"
    assert disk_spelling(tmp_path, "INBOX/a.md") == ("inbox/a.md", [])
    (tmp_path / "Inbox").mkdir()
    _path, issues = disk_spelling(tmp_path, "INBOX/a.md")
    assert [i.code for i in issues] == ["V04"]


def test_a_settled_folders_listing_is_reused_until_it_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vaultd.policy import paths

    monkeypatch.setattr(paths, "SETTLED_NS", 0)  # every listing counts as settled
    monkeypatch.setattr(paths, "_listings", paths._Listings())
    (tmp_path / "inbox").mkdir()
    assert paths._listings.like(str(tmp_path), "INBOX") == ["inbox"]
    kept = paths._listings._kept[str(tmp_path)]
    assert paths._listings.like(str(tmp_path), "Inbox") == ["inbox"]
    assert paths._listings._kept[str(tmp_path)] is kept, "unchanged: the listing is reused"
    time.sleep(0.05)  # past the file system's timestamp granularity
    (tmp_path / "Inbox").mkdir()
    assert sorted(paths._names_like(str(tmp_path), "INBOX")) == ["Inbox", "inbox"], "the new twin is seen"
    os.utime(tmp_path, ns=(0, 0))  # a tool setting the folder's times back cannot hide a change: its ctime moves
    assert sorted(paths._names_like(str(tmp_path), "INBOX")) == ["Inbox", "inbox"]  # kept with mtime 0
    time.sleep(0.05)
    (tmp_path / "Inbox").rmdir()
    os.utime(tmp_path, ns=(0, 0))
    assert paths._names_like(str(tmp_path), "INBOX") == ["inbox"]
