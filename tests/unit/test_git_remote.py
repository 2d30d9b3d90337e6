"""Remote URLs: spellings of one place compare equal, different places never do; rewrites and
mismatches are refused on a real repository's config."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support import gitrepo
from vaultd.git.exclude import PATTERNS, ensure, missing
from vaultd.git.remote import normalize, problems
from vaultd.git.repo import find

if TYPE_CHECKING:
    from pathlib import Path

SAME = [
    ("https://github.com/org/notes.git", "https://GitHub.com/org/notes"),
    ("https://ada:tok@github.com/org/notes.git/", "https://github.com/org/notes"),
    ("git@github.com:org/notes.git", "ssh://git@github.com/org/notes"),
    ("ssh://git@github.com:22/org/notes", "ssh://github.com:22/org/notes.git"),
    ("file:///srv/git/notes.git", "/srv/git/notes.git"),
    ("/srv/git//notes.git/", "/srv/git/notes.git"),
]
DIFFERENT = [
    ("https://github.com/org/notes", "https://github.com/org/other"),
    ("https://github.com/org/notes", "https://gitlab.com/org/notes"),
    ("/srv/git/notes", "/srv/git/notes.git"),  # two local repositories
    ("/srv/git/Notes.git", "/srv/git/notes.git"),  # local paths keep their case
    ("https://github.com/org/notes", "ssh://github.com/org/notes"),
]


@pytest.mark.parametrize(("a", "b"), SAME)
def test_spellings_of_one_remote_are_equal(a: str, b: str) -> None:
    assert normalize(a, "/repo") == normalize(b, "/repo")


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_different_remotes_differ(a: str, b: str) -> None:
    assert normalize(a, "/repo") != normalize(b, "/repo")


NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)


@given(
    st.sampled_from(["https", "ssh", "git"]), NAME.map(lambda s: f"{s}.example.org"), st.lists(NAME, min_size=1, max_size=3).map("/".join)
)
def test_normalizing_is_idempotent_and_ignores_host_case(scheme: str, host: str, path: str) -> None:
    url = f"{scheme}://{host}/{path}.git"
    once = normalize(url, "/repo")
    assert normalize(once, "/repo") == once
    assert normalize(f"{scheme}://{host.upper()}/{path}", "/repo") == once


def test_origin_must_be_the_registered_remote_unrewritten(tmp_path: Path) -> None:
    repo_path = gitrepo.init(tmp_path / "vault", {"a.md": "a\n"})
    repo = find(repo_path)
    assert repo is not None
    remote = str(tmp_path / "org.git")
    assert [i.code for i in problems(repo, remote)] == ["R05"], "no origin at all"
    gitrepo.git(repo_path, "remote", "add", "origin", remote)
    assert problems(repo, remote) == []
    assert problems(repo, None)[0].code == "R05", "no registered remote"
    gitrepo.git(repo_path, "remote", "set-url", "--push", "origin", str(tmp_path / "elsewhere.git"))
    assert "push URL" in problems(repo, remote)[0].message
    gitrepo.git(repo_path, "remote", "set-url", "--delete", "--push", "origin", str(tmp_path / "elsewhere.git"))
    gitrepo.git(repo_path, "config", "url.https://evil.example/.insteadOf", str(tmp_path))
    found = problems(repo, remote)
    assert found and "rewrite" in found[0].message


def test_machine_files_go_to_info_exclude_once_and_the_persons_lines_stay(tmp_path: Path) -> None:
    repo_path = gitrepo.init(tmp_path / "vault", {"a.md": "a\n"})
    exclude = repo_path / ".git" / "info" / "exclude"
    exclude.write_text("# mine\n*.bak\n")
    repo = find(repo_path)
    assert repo is not None and missing(repo) == list(PATTERNS)
    assert ensure(repo) == list(PATTERNS)
    assert ensure(repo) == [] and missing(repo) == []
    text = exclude.read_text()
    assert text.startswith("# mine\n*.bak\n") and text.count(".vaultd/") == 1
    assert not (repo_path / ".gitignore").exists()
