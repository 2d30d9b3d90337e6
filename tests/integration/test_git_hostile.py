"""A vault folder and a remote are untrusted input.

A repository's own config names commands for every key git runs one from, and attributes name its
filters and drivers: none runs on a snapshot, a checkpoint, a sync, a history read or doctor, and
vault.add and doctor report them (R09). Origin's commits with paths git or vaultd refuse, case
twins, vaultd's and Obsidian's trash folders, and blobs over the bounds are refused before
anything moves (R08): the branch, the person's index and the files stay as they were, and the
daemon reads no oversized blob (its peak resident memory stays put).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.limits import MAX_NOTE_BYTES
from protocol.methods.git import NOTE_HISTORY, VAULT_SNAPSHOT, VAULT_SYNC, NoteHistoryParams, SnapshotParams, SyncParams
from protocol.methods.git_settings import GitMode
from protocol.methods.service import DOCTOR, DoctorParams, Level
from protocol.methods.vaults import VAULT_ADD, VaultAddParams, VaultInfo
from protocol.methods.writes import CREATE, CreateParams
from tests.support import gitrepo
from tests.support.gitrepo import git
from tests.support.harness import Daemon, Home
from tests.support.hostile_git import big_blob, clear, make_hostile, push_tree, ran, state, tree_with
from tests.support.typed import TypedClient, TypedClients, applied, refused
from vaultctl.client import CallError

SEED = {"note.md": "# Note\n\nfirst\n", "Plan.md": "# Plan\n\nship in May\n", "data.txt": "plain\n", "table.csv": "a,b\n"}


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    seed = gitrepo.init(tmp_path / "seed", SEED)
    bare = gitrepo.bare(tmp_path / "org.git")
    git(seed, "push", "-q", str(bare), "main")
    return bare


def _client(clients: TypedClients, home: Home) -> TypedClient:
    return clients.open(home, timeout=120)


def _add(c: TypedClient, vault_id: str, repo: Path, origin: Path, mode: GitMode = GitMode.SNAPSHOT) -> VaultInfo:
    return c.call(VAULT_ADD, VaultAddParams(id=vault_id, path=str(repo), git=mode, remote=str(origin), snapshot_quiet_s=1))


def _hwm_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_a_repositorys_own_config_never_runs_code(
    home: Home, daemon: Daemon, typed_clients: TypedClients, origin: Path, tmp_path: Path
) -> None:
    repo = gitrepo.clone(origin, tmp_path / "victim")
    marks = tmp_path / "marks"
    make_hostile(repo, marks)
    (repo / "app.log").write_text("first\n")
    c = _client(typed_clients, home)

    info = _add(c, "v", repo, origin)
    assert ran(marks) == [], "registering ran the repository's commands"

    # Hand edits of the same size, so git must compare contents (through a clean filter, if one ran).
    for name, text in (("note.md", "# Note\n\nFIRST\n"), ("data.txt", "PLAIN\n"), ("table.csv", "A,B\n"), ("app.log", "FIRST\n")):
        (repo / name).write_text(text)
        os.utime(repo / name, (1_600_000_000, 1_600_000_000))
    snap = c.call(VAULT_SNAPSHOT, SnapshotParams(vault="v"))
    assert ran(marks) == [], "a snapshot ran the repository's commands"
    assert sorted(snap.paths) == [".gitattributes", "app.log", "data.txt", "note.md", "table.csv"]
    assert gitrepo.tree(repo)["note.md"] == git(repo, "hash-object", "--no-filters", "note.md"), "committed byte for byte"

    created = c.call(CREATE, CreateParams(vault="v", path="New", body="# New\n"))
    assert applied(created).commit, "a checkpoint ran the repository's commands"
    assert ran(marks) == [], "a checkpoint ran the repository's commands"

    # A fetch refspec of the repository's own would move a branch of the person's to origin's head.
    git(repo, "branch", "keep")
    kept = gitrepo.head(repo, "keep")
    git(repo, "config", "--replace-all", "remote.origin.fetch", "+refs/heads/main:refs/heads/keep")
    other = gitrepo.clone(origin, tmp_path / "other", "Grace Hopper")
    (other / "Theirs.md").write_text("# Theirs\n")
    git(other, "add", "Theirs.md")
    git(other, "commit", "-q", "-m", "theirs")
    git(other, "push", "-q", "origin", "main")
    clear(marks)  # the test's own git ran the hooks; vaultd's calls are what is checked
    with refused(ErrorCode.POLICY) as refspec:
        c.call(VAULT_SYNC, SyncParams(vault="v"))
    assert "refs/heads/keep" in refspec.data.message, refspec.data
    assert gitrepo.head(repo, "keep") == kept, "the person's branch did not move"
    git(repo, "config", "--replace-all", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")
    clear(marks)
    synced = c.call(VAULT_SYNC, SyncParams(vault="v"))
    assert synced.pushed, "a sync ran the repository's commands"
    assert synced.incoming == 1, "a sync ran the repository's commands"
    assert ran(marks) == [], "a sync ran the repository's commands"
    assert gitrepo.head(repo, "keep") == kept
    assert git(origin, "rev-parse", "main") == synced.head

    c.call(NOTE_HISTORY, NoteHistoryParams(vault="v", target="note"))
    doctor = c.call(DOCTOR, DoctorParams(vault="v"))
    assert ran(marks) == [], "a history read or doctor ran the repository's commands"
    found = [f for f in doctor.findings if f.check == "git:v" and "uploadpack" in f.finding]
    assert found
    assert found[0].level is Level.WARN

    [warning] = info.warnings
    assert warning.code == IssueCode.R09
    assert "remote.origin.uploadpack" in warning.message
    assert "filter.evilclean.clean" in warning.message
    assert "filter.included.clean" in warning.message, "keys from an included file are found too"

    # A remote helper cannot be unset by config: the sync is refused before any transfer.
    git(repo, "config", "remote.origin.vcs", "evil")
    with refused(ErrorCode.POLICY) as helper:
        c.call(VAULT_SYNC, SyncParams(vault="v"))
    assert IssueCode.R05 in [i.code for i in helper.data.issues]
    assert ran(marks) == []
    c.close()


def test_the_config_is_read_again_when_it_changes(
    home: Home, daemon: Daemon, typed_clients: TypedClients, origin: Path, tmp_path: Path
) -> None:
    """A filter added to the config after vaultd first ran git there is neutralised too."""
    repo = gitrepo.clone(origin, tmp_path / "victim")
    marks = tmp_path / "marks"
    c = _client(typed_clients, home)
    assert _add(c, "w", repo, origin).warnings == []
    c.call(CREATE, CreateParams(vault="w", path="First", body="# First\n"))
    make_hostile(repo, marks, keys={"filter.late.clean": f"touch {marks}/late; cat"}, hooks=False, include=False)
    (repo / ".gitattributes").write_text("* filter=late\n")
    (repo / "Plan.md").write_text("# Plan\n\nSHIP in May\n")
    os.utime(repo / "Plan.md", (1_600_000_000, 1_600_000_000))
    assert c.call(VAULT_SNAPSHOT, SnapshotParams(vault="w")).paths == [".gitattributes", "Plan.md"]
    assert ran(marks) == []
    c.close()


BAD_TREES: dict[str, dict[str, bytes]] = {
    "dotgit upper": {".GIT/config": b"[core]\n\thooksPath = /tmp\n"},
    "dotgit mixed": {".Git/hooks/post-checkout": b"#!/bin/sh\n"},
    "dotgit ntfs dot": {".git./config": b"x\n"},
    "dotgit short name": {"git~1/config": b"x\n"},
    "dotgit hfs": {".g\u200cit/config": b"x\n"},
    "dotgit nested": {"notes/.git/config": b"x\n"},
    "dotdot": {"../escape.md": b"# out\n"},
    "case twin": {"Note.md": b"# twin\n"},
    "case twin folder": {"PLAN.md/x.md": b"# folder twin\n"},
    "trash": {".trash/gone.md": b"# in the trash\n"},
    "state folder": {".vaultd/journal/x": b"forged\n"},
    "secret name": {"keys/ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8" + ".md": b"# k\n"},
    "windows drops": {"trail./x.md": b"# t\n"},
    "note over the bound": {"over.md": b"a" * (MAX_NOTE_BYTES + 1)},
}


@pytest.fixture(scope="module")
def shared() -> Any:
    home = Home.create()
    daemon = Daemon(home)
    yield home, daemon
    daemon.stop()
    home.cleanup()


@pytest.mark.parametrize("case", sorted(BAD_TREES))
def test_origin_commits_with_refused_paths_are_refused_before_anything_moves(
    shared: tuple[Home, Daemon], typed_clients: TypedClients, origin: Path, tmp_path: Path, case: str
) -> None:
    home, _ = shared
    repo = gitrepo.clone(origin, tmp_path / "victim")
    rogue = gitrepo.clone(origin, tmp_path / "rogue", "Mallory Rogue")
    c = _client(typed_clients, home)
    vault_id = f"t{sorted(BAD_TREES).index(case)}"
    _add(c, vault_id, repo, origin, mode=GitMode.CHECKPOINT)
    before = state(repo)

    push_tree(rogue, tree_with(rogue, "HEAD", BAD_TREES[case]))
    with pytest.raises(CallError) as caught:
        c.call(VAULT_SYNC, SyncParams(vault=vault_id))
    data = caught.value.data
    assert data.code in (ErrorCode.POLICY, ErrorCode.LIMIT), data
    assert [i.code for i in data.issues][:1] == [IssueCode.R08], data
    assert state(repo) == before, "the branch, the index and the files are as they were"
    assert not (tmp_path / "escape.md").exists()

    # The vault goes on: a checkpoint commits, and once origin drops the path the sync goes through.
    done = c.call(CREATE, CreateParams(vault=vault_id, path="After", body="# After\n"))
    assert applied(done).commit == gitrepo.head(repo)
    push_tree(rogue, git(rogue, "rev-parse", "HEAD~1^{tree}"), "drop it")
    if case.startswith(("dotgit", "dotdot")):
        # The refused objects are still in origin's history: git's own checks refuse every fetch of it.
        with refused(ErrorCode.POLICY):
            c.call(VAULT_SYNC, SyncParams(vault=vault_id))
    else:
        synced = c.call(VAULT_SYNC, SyncParams(vault=vault_id))
        assert synced.pushed, synced
        assert gitrepo.fsck(repo) == ""
    c.close()


def test_a_note_at_the_bound_is_integrated(shared: tuple[Home, Daemon], typed_clients: TypedClients, origin: Path, tmp_path: Path) -> None:
    home, _ = shared
    repo = gitrepo.clone(origin, tmp_path / "victim")
    rogue = gitrepo.clone(origin, tmp_path / "rogue", "Mallory Rogue")
    c = _client(typed_clients, home)
    _add(c, "edge", repo, origin, mode=GitMode.CHECKPOINT)
    body = b"# Edge\n\n" + b"e" * (MAX_NOTE_BYTES - 9) + b"\n"
    assert len(body) == MAX_NOTE_BYTES
    push_tree(rogue, tree_with(rogue, "HEAD", {"edge.md": body}))
    assert c.call(VAULT_SYNC, SyncParams(vault="edge")).incoming == 1
    assert (repo / "edge.md").read_bytes() == body
    c.close()


def test_oversized_blobs_are_refused_unread(home: Home, daemon: Daemon, typed_clients: TypedClients, origin: Path, tmp_path: Path) -> None:
    """Two notes of 200 MiB of one byte each (a few hundred KiB on the wire): refused by their sizes
    before any is read; the daemon's peak resident memory does not grow by anything like them."""
    repo = gitrepo.clone(origin, tmp_path / "victim")
    rogue = gitrepo.clone(origin, tmp_path / "rogue", "Mallory Rogue")
    size = 200 * 1024 * 1024
    tree = tree_with(rogue, "HEAD", {})
    entries = git(rogue, "ls-tree", "-z", tree).split("\0")
    for name in ("huge-1.md", "huge-2.md"):
        entries.append(f"100644 blob {big_blob(rogue, size, name[-4:-3].encode())}\t{name}")
    push_tree(rogue, git(rogue, "mktree", "-z", input="\0".join(e for e in entries if e) + "\0"))
    c = _client(typed_clients, home)
    _add(c, "big", repo, origin, mode=GitMode.CHECKPOINT)
    before = state(repo)
    peak = _hwm_kib(daemon.pid)

    with refused(ErrorCode.LIMIT, IssueCode.R08) as refusal:
        c.call(VAULT_SYNC, SyncParams(vault="big"))
    assert "huge-1.md" in refusal.data.message
    assert str(size) in refusal.data.message
    assert state(repo) == before
    grown = _hwm_kib(daemon.pid) - peak
    assert grown < 64 * 1024, f"the daemon's peak resident memory grew by {grown} KiB"
    c.close()
