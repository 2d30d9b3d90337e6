"""Path safety (V04), deny globs (P02) and the write channel policy (P01)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from protocol.methods.common import Channel
from protocol.methods.vaults import WritePolicy
from vaultd.policy import (
    check_inside_vault,
    check_new_path,
    deny_path_issue,
    path_key,
    write_channel_issue,
)

if TYPE_CHECKING:
    from pathlib import Path


def codes(rel: str, **kw: object) -> list[str]:
    return [i.code for i in check_new_path(rel, **kw)]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "rel",
    ["a.md", "folder/sub/Note name.md", "한국어/노트.md", "x/.hidden.md", "a..b.md", "e\u0301.md"],
)
def test_safe_paths_pass(rel: str) -> None:
    assert check_new_path(rel) == []


@pytest.mark.parametrize(
    "rel",
    [
        "",
        "/etc/passwd.md",
        "C:/x.md",
        "../up.md",
        "a/../b.md",
        "./a.md",
        "a//b.md",
        "a/",
        "a\\b.md",
        "a\x00b.md",
        "a\tb.md",
        "a\x1fb.md",
        "a\x7fb.md",
        "a\x85b.md",
        "a\x9fb.md",
        ".git/config.md",
        "x/.GIT/a.md",
        ".vaultd/a.md",
        ".Obsidian/app.md",
        "sub/.trash/a.md",
        ".vaultd-1234.tmp",
        "dir/.VAULTD-x.TMP",
        "trailing./a.md",
        "trailing /a.md",
        "note.md.",
        "note.md ",
        "note.txt",
        "note.MD",
        ".md",
        "folder/.md",
        "\ud800.md",
    ],
)
def test_unsafe_paths_refused(rel: str) -> None:
    issues = check_new_path(rel, note=not rel.startswith(".vaultd-") and not rel.startswith("dir/"))
    assert issues, rel
    assert {i.code for i in issues} == {"V04"}
    assert all(i.path == rel for i in issues)


def test_temp_like_names_are_refused_even_for_non_notes() -> None:
    assert codes(".vaultd-abc.tmp", note=False) == ["V04"]
    assert codes("attachments/diagram.png", note=False) == []


def test_component_length_edge() -> None:
    ok = "a" * 252 + ".md"  # 255 bytes
    assert check_new_path(ok) == []
    assert codes("b" + ok) == ["V04"]  # 256 bytes


def test_component_length_counts_utf8_bytes() -> None:
    name_255 = "가" * 83 + "abc.md"  # 249 + 6 = 255 bytes
    assert len(name_255.encode()) == 255
    assert check_new_path(name_255) == []
    name_256 = "가" * 83 + "abcd.md"
    assert len(name_256.encode()) == 256
    assert codes(name_256) == ["V04"]


def test_whole_path_length_edge() -> None:
    comp = "d" * 100
    base = "/".join([comp] * 10)  # 1009 bytes
    ok = base + "/" + "n" * (1024 - len(base) - 1 - 3) + ".md"
    assert len(ok.encode()) == 1024
    assert check_new_path(ok) == []
    too_long = ok[:-3] + "x.md"
    assert len(too_long.encode()) == 1025
    assert codes(too_long) == ["V04"]


def test_non_note_paths_need_no_md_suffix() -> None:
    assert check_new_path("files/report.pdf", note=False) == []
    assert codes("files/report.pdf") == ["V04"]


def test_collision_by_case_and_normalization_names_the_existing_path() -> None:
    index = {path_key("Notes/Café.md"): ["Notes/Café.md"]}

    def existing(key: str) -> list[str]:
        return index.get(key, [])

    nfd = "notes/Cafe\u0301.md"
    issues = check_new_path(nfd, existing)
    assert [i.code for i in issues] == ["V04"]
    assert "'Notes/Café.md'" in issues[0].message
    assert check_new_path("NOTES/CAFÉ.md", existing)[0].code == "V04"
    # the same path is the same file: a rewrite, not a collision
    assert check_new_path("Notes/Café.md", existing) == []
    assert check_new_path("Notes/Other.md", existing) == []


def test_path_key_is_stable_under_casefold_and_nfc() -> None:
    assert path_key("Straße.md") == path_key("STRASSE.md")
    assert path_key("e\u0301.md") == path_key("\u00e9.md") == path_key("\u00c9.MD")


# check_inside_vault touches the filesystem.


def test_inside_vault_plain_file_and_missing_parents(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "n.md").write_text("x")
    assert check_inside_vault(tmp_path, "a/n.md") == []
    assert check_inside_vault(tmp_path, "a/new.md") == []
    assert check_inside_vault(tmp_path, "b/c/d.md") == []


def test_inside_vault_refuses_symlinked_folder_even_inside(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "link")
    issues = check_inside_vault(tmp_path, "link/n.md")
    assert [i.code for i in issues] == ["V04"] and "symlink" in issues[0].message


def test_inside_vault_refuses_symlinked_folder_outside(tmp_path: Path) -> None:
    vault, outside = tmp_path / "v", tmp_path / "out"
    vault.mkdir()
    outside.mkdir()
    os.symlink(outside, vault / "escape")
    assert [i.code for i in check_inside_vault(vault, "escape/deeper/n.md")] == ["V04"]


def test_inside_vault_refuses_symlink_target(tmp_path: Path) -> None:
    (tmp_path / "t.md").write_text("x")
    os.symlink(tmp_path / "t.md", tmp_path / "l.md")
    os.symlink(tmp_path / "nowhere.md", tmp_path / "dangling.md")
    assert "symlink" in check_inside_vault(tmp_path, "l.md")[0].message
    assert "symlink" in check_inside_vault(tmp_path, "dangling.md")[0].message


def test_inside_vault_refuses_hard_link_and_non_regular(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (tmp_path / "outside.md").write_text("x")
    os.link(tmp_path / "outside.md", vault / "hl.md")
    assert "hard links" in check_inside_vault(vault, "hl.md")[0].message
    (vault / "dir.md").mkdir()
    assert "not a regular file" in check_inside_vault(vault, "dir.md")[0].message
    (vault / "file").write_text("x")
    assert "not a folder" in check_inside_vault(vault, "file/n.md")[0].message


def test_inside_vault_refuses_dotdot_without_touching_outside(tmp_path: Path) -> None:
    assert [i.code for i in check_inside_vault(tmp_path, "../x.md")] == ["V04"]
    assert [i.code for i in check_inside_vault(tmp_path, "/etc/passwd")] == ["V04"]


def test_vault_root_may_itself_be_reached_through_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "alias")
    assert check_inside_vault(tmp_path / "alias", "a/n.md") == []


# deny_paths


@pytest.mark.parametrize(
    ("glob", "rel", "denied"),
    [
        ("private/**", "private/a.md", True),
        ("private/**", "private/x/y/z.md", True),
        ("private/**", "privateer/a.md", False),
        ("private", "private/a.md", True),
        ("private/", "private/a.md", True),
        ("Private/**", "private/a.md", True),  # matched on the casefolded key, whatever the disk
        ("*.key.md", "a.key.md", True),
        ("*.key.md", "sub/a.key.md", False),  # * stays inside one component
        ("**/*.key.md", "sub/deep/a.key.md", True),
        ("**/*.key.md", "a.key.md", True),  # ** spans zero folders
        ("a/**/b.md", "a/b.md", True),
        ("a/**/b.md", "a/x/y/b.md", True),
        ("a/**/b.md", "a/x/y/c.md", False),
        ("journal/202?-*.md", "journal/2024-01.md", True),
        ("journal/[0-9]*.md", "journal/x.md", False),
        ("**", "anything/at/all.md", True),
    ],
)
def test_deny_globs(glob: str, rel: str, denied: bool) -> None:
    issue = deny_path_issue(rel, [glob])
    assert (issue is not None) == denied
    if issue is not None:
        assert issue.code == "P02" and issue.path == rel


def test_deny_no_globs() -> None:
    assert deny_path_issue("a.md", []) is None


def test_deny_many_stars_is_fast() -> None:
    glob = "/".join(["**"] * 30 + ["*a*a*a*a*a*a*a*b"])
    rel = "/".join(["a" * 200] * 5)
    assert deny_path_issue(rel, [glob]) is None


# write channel


@pytest.mark.parametrize(
    ("policy", "allowed"),
    [
        (WritePolicy.MCP, {Channel.CLI, Channel.MCP, Channel.EDITOR}),
        (WritePolicy.CLI, {Channel.CLI}),
        (WritePolicy.NONE, set()),
    ],
)
def test_write_channel(policy: WritePolicy, allowed: set[Channel]) -> None:
    for channel in Channel:
        issue = write_channel_issue(policy, channel)
        assert (issue is None) == (channel in allowed), (policy, channel)
        if issue is not None:
            assert issue.code == "P01"
