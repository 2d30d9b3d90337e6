"""The configuration vaultd gives git, and the path rules it checks origin's trees against, each
compared with what the real git does."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import gitrepo
from vaultd.git import command, trust, verify
from vaultd.git.remote import transport

if TYPE_CHECKING:
    from pathlib import Path


def test_every_named_driver_and_protocol_is_neutralised_whatever_its_name(tmp_path: Path) -> None:
    repo = gitrepo.init(tmp_path / "r", {"a.md": "x\n"})
    for key, value in {
        "filter.a=b.clean": "evil",
        "filter.x.y.process": "evil",
        "diff.d.textconv": "evil",
        "merge.m.driver": "evil",
        "protocol.ext.allow": "always",
        "pager.log": "evil",
    }.items():
        gitrepo.git(repo, "config", key, value)
    pairs = dict(command.view(repo).overrides)
    assert pairs["filter.a=b.clean"] == "" and pairs["filter.a=b.required"] == "false"
    assert pairs["filter.x.y.process"] == "" and pairs["diff.d.textconv"] == "cat" and pairs["merge.m.driver"] == "false"
    assert pairs["protocol.ext.allow"] == "never" and pairs["pager.log"] == "false"
    assert pairs["core.hooksPath"] == "/dev/null" and pairs["credential.helper"] == ""
    keys = command.view(repo).commands
    assert {"filter.a=b.clean", "filter.x.y.process", "diff.d.textconv", "merge.m.driver", "protocol.ext.allow"} <= set(keys)


def test_the_view_follows_a_changed_config(tmp_path: Path) -> None:
    repo = gitrepo.init(tmp_path / "r", {"a.md": "x\n"})
    assert command.view(repo).commands == ()
    gitrepo.git(repo, "config", "filter.late.clean", "evil")
    assert command.view(repo).commands == ("filter.late.clean",)
    include = tmp_path / "more.cfg"
    gitrepo.git(repo, "config", "include.path", str(include))
    assert "filter.later.smudge" not in command.view(repo).commands
    include.write_text('[filter "later"]\n\tsmudge = evil\n')
    assert "filter.later.smudge" in command.view(repo).commands, "an include target that appears later is read"


def test_too_many_drivers_are_refused(tmp_path: Path) -> None:
    repo = gitrepo.init(tmp_path / "r", {"a.md": "x\n"})
    (repo / ".git" / "config").write_text(
        (repo / ".git" / "config").read_text() + "".join(f'[filter "f{i}"]\n\tclean = x\n' for i in range(trust.MAX_NAMED + 1))
    )
    with pytest.raises(Exception, match="does not run git there"):
        command.run(repo, "status")


def test_output_past_the_limit_is_refused_and_not_kept(tmp_path: Path) -> None:
    repo = gitrepo.init(tmp_path / "r", {"a.md": "x" * 10_000})
    oid = gitrepo.git(repo, "rev-parse", "HEAD:a.md")
    assert len(command.run(repo, "cat-file", "blob", oid, limit=10_000).stdout) == 10_000
    with pytest.raises(Exception, match="printed more than 9999 bytes"):
        command.run(repo, "cat-file", "blob", oid, limit=9_999)


@pytest.mark.parametrize(
    ("url", "scheme"),
    [
        ("/srv/git/team.git", "file"),
        ("file:///srv/x", "file"),
        ("git@host:team.git", "ssh"),
        ("ssh://h/x", "ssh"),
        ("https://h/x", "https"),
        ("ext::sh -c evil", None),
        ("evil::https://h/x", None),
        ("foo://h/x", None),
    ],
)
def test_the_transport_a_sync_may_use(url: str, scheme: str | None) -> None:
    assert transport(url) == scheme


KNOWN = [
    ".git",
    ".GIT",
    ".Git",
    ".git.",
    ".git ",
    ".git. . ",
    "git~1",
    "GIT~1",
    ".git::$INDEX_ALLOCATION",
    ".g\u200cit",
    "\ufeff.git",
    "..",
    ".",
]
SAFE = ["a\\b", ".gitignore", ".github", "git", "git~2", "git~1x", ".gitx", "notes", ".git-notes", "a.md"]


def _git_refuses(repo: Path, oid: str, name: str) -> bool:
    env = {**gitrepo.env(), "GIT_INDEX_FILE": str(repo / ".git" / "scratch-index")}
    proc = subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "core.protectNTFS=true",
            "-c",
            "core.protectHFS=true",
            "update-index",
            "--add",
            "--cacheinfo",
            f"100644,{oid},{name}/x",
        ],
        capture_output=True,
        env=env,
        timeout=30,
    )
    return proc.returncode != 0


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    repo = gitrepo.init(tmp_path_factory.mktemp("scratch") / "r", {"a.md": "x\n"})
    return repo, gitrepo.git(repo, "rev-parse", "HEAD:a.md")


@pytest.mark.parametrize("name", KNOWN + SAFE)
def test_vaultd_refuses_exactly_the_components_git_refuses(scratch: tuple[Path, str], name: str) -> None:
    repo, oid = scratch
    assert verify.git_refuses(name) == (name in KNOWN) == (_git_refuses(repo, oid, name) or name in ("", ".", ".."))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.sampled_from(list(".gitGIT~1 :\\\u200c\u200d\ufeff\u202ex")), min_size=1, max_size=8))
def test_drawn_names_near_dotgit_agree_with_git(scratch: tuple[Path, str], name: str) -> None:
    repo, oid = scratch
    if name in (".", "..") or "\0" in name:
        return
    assert verify.git_refuses(name) == _git_refuses(repo, oid, name), repr(name)
