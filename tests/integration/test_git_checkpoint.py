"""Checkpoints: a real daemon on real repositories commits each operation exactly once, through its
own index file, never what the person staged, and never leaves the repository corrupt (a crash at
each step of a commit included)."""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.methods.common import Channel, Empty, Params
from protocol.methods.git import (
    NOTE_DIFF,
    NOTE_HISTORY,
    REVERT,
    VAULT_GIT,
    VAULT_SYNC,
    NoteDiffParams,
    NoteHistoryParams,
    RevertParams,
    SyncParams,
    VaultGitParams,
)
from protocol.methods.git_settings import GitMode
from protocol.methods.reads import READ, ReadParams
from protocol.methods.service import DOCTOR, DoctorParams
from protocol.methods.vaults import VAULT_ADD, VAULT_LIST, VaultAddParams
from protocol.methods.writes import (
    APPEND,
    CREATE,
    DELETE,
    MOVE,
    PATCH,
    UNDO,
    AppendParams,
    CreateParams,
    DeleteParams,
    MoveParams,
    PatchParams,
    UndoParams,
)
from tests.support import gitrepo
from tests.support.gitrepo import git
from tests.support.harness import Daemon, Home, vaultctl
from tests.support.typed import TypedClient, TypedClients, applied, previewed, refused
from vaultctl.client import CallError, DaemonUnavailable

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from protocol.methods.spec import MethodSpec

NOTES = {
    "Alpha.md": "# Alpha\n\nThe first note.\n",
    "Gamma.md": "# Gamma\n\nA note the person edits by hand.\n",
    ".gitignore": "scratch/\n",
}
_ids = itertools.count(1)
P = TypeVar("P", bound=Params)


@pytest.fixture(scope="module")
def shared() -> Iterator[tuple[Home, Daemon]]:
    """One daemon for the module; each test registers vaults of its own."""
    home = Home.create()
    daemon = Daemon(home)
    yield home, daemon
    daemon.stop()
    home.cleanup()


@pytest.fixture
def client(shared: tuple[Home, Daemon], typed_clients: TypedClients) -> TypedClient:
    return typed_clients.open(shared[0])


def _add(home: Home, client: TypedClient, files: dict[str, str] = NOTES, **settings: Any) -> tuple[str, Path]:
    vid = f"v{next(_ids)}"
    repo = gitrepo.init(home.root / vid, files)
    client.call(VAULT_ADD, VaultAddParams(id=vid, path=str(repo), git=GitMode.CHECKPOINT, **settings))
    return vid, repo


def _cli(home: Home, *args: str) -> Any:
    result = vaultctl(home, *args, "--json")
    assert result.code == 0, (args, result.out, result.err)
    return json.loads(result.out)


def test_each_operation_is_one_commit_with_its_exact_bytes_and_trailers(shared: tuple[Home, Daemon], client: TypedClient) -> None:
    home = shared[0]
    vid, repo = _add(home, client)
    first = gitrepo.head(repo)
    created = _cli(home, "new", "inbox/Beta", "--title", "Beta", "--vault", vid)
    assert created["outcome"] == "applied"
    assert created["commit"]
    patched = applied(client.call(PATCH, PatchParams(vault=vid, target="Alpha", old="first", new="very first")))
    assert gitrepo.head(repo) == patched.commit
    assert git(repo, "rev-parse", f"{patched.commit}~2") == first, "one commit per operation, nothing else"

    message = git(repo, "log", "-1", "--format=%an <%ae>%n%B", created["commit"])
    assert message.startswith("Ada Lovelace <ada@example.org>\nnote.create: created inbox/Beta.md")
    assert f"Vaultd-Op: {created['op_id']}" in message
    assert "Vaultd-Channel: cli" in message
    # The commit holds exactly what the operation wrote, and its log line.
    changed = git(repo, "show", "--name-only", "--format=", created["commit"]).splitlines()
    assert sorted(changed) == ["inbox/Beta.md", "log.md"]
    assert git(repo, "show", f"{patched.commit}:Alpha.md") + "\n" == (repo / "Alpha.md").read_text()
    assert gitrepo.op_ids(repo) == [patched.op_id, created["op_id"]]
    # The person's repository is coherent: nothing staged, nothing modified, no machine file.
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert (repo / ".gitignore").read_text() == NOTES[".gitignore"], "the person's .gitignore is never touched"
    excluded = (repo / ".git" / "info" / "exclude").read_text()
    assert ".vaultd/" in excluded
    assert "**/.obsidian/workspace*.json" in excluded
    assert ".trash/" in excluded
    assert gitrepo.fsck(repo) == ""


def test_an_agents_operation_names_the_agent_and_a_delete_never_commits_the_trash(
    shared: tuple[Home, Daemon], client: TypedClient, typed_clients: TypedClients
) -> None:
    home = shared[0]
    vid, repo = _add(home, client)
    agent = typed_clients.open(home, Channel.MCP, client_name="claude-code", session="s-42")
    made = applied(agent.call(APPEND, AppendParams(vault=vid, target="Alpha", section="Ideas", markdown="- an agent's idea")))
    assert made.commit is not None
    trailers = git(repo, "log", "-1", "--format=%(trailers)", made.commit)
    assert "Vaultd-Channel: mcp" in trailers
    assert "Vaultd-Agent: claude-code (session s-42)" in trailers
    agent.close()

    preview = previewed(client.call(DELETE, DeleteParams(vault=vid, target="Gamma")))
    done = applied(client.call(DELETE, DeleteParams(vault=vid, target="Gamma", confirm=True, fingerprint=preview.fingerprint)))
    assert (repo / ".trash" / "Gamma.md").exists()
    assert done.commit is not None
    files = gitrepo.tree(repo, done.commit)
    assert "Gamma.md" not in files
    assert not any(p.startswith(".trash/") for p in files)
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""


def test_what_the_person_staged_is_never_committed(shared: tuple[Home, Daemon], client: TypedClient) -> None:
    home = shared[0]
    vid, repo = _add(home, client)
    (repo / "Gamma.md").write_text("# Gamma\n\nstaged by the person\n")
    git(repo, "add", "Gamma.md")
    (repo / "Gamma.md").write_text("# Gamma\n\nstaged by the person, then edited again\n")
    staged_blob = git(repo, "rev-parse", ":Gamma.md")
    before = gitrepo.head(repo)

    waiting = applied(client.call(CREATE, CreateParams(vault=vid, path="Beta")))
    assert waiting.commit is None, "the write stands; the commit waits"
    warning = next(w for w in waiting.warnings if w.code == IssueCode.R01)
    assert "Gamma.md" in warning.message
    assert gitrepo.head(repo) == before
    assert git(repo, "rev-parse", ":Gamma.md") == staged_blob, "the staging area is as the person left it"
    doctor = client.call(DOCTOR, DoctorParams(vault=vid))
    assert any("staged changes in the vault's paths" in f.finding for f in doctor.findings)

    git(repo, "restore", "--staged", "Gamma.md")
    later = applied(client.call(PATCH, PatchParams(vault=vid, target="Alpha", old="first", new="next")))
    assert later.commit is not None
    assert later.warnings == []
    # The waiting operation is committed first, on its own, then this one.
    assert gitrepo.op_ids(repo)[:2] == [later.op_id, waiting.op_id]
    committed = {git(repo, "show", f"{c}:Gamma.md", check=False) for c in git(repo, "rev-list", "HEAD").splitlines()}
    assert not any("staged by the person" in text for text in committed), "staged content never reached a commit"
    assert git(repo, "status", "--porcelain") == "M Gamma.md", "the hand edit is left to the person"


def test_a_vault_in_a_subfolder_commits_only_under_it(shared: tuple[Home, Daemon], client: TypedClient) -> None:
    home = shared[0]
    repo = gitrepo.init(home.root / "monorepo", {"README.md": "top\n", "notes/Alpha.md": "# Alpha\n"})
    (repo / "README.md").write_text("top, staged\n")
    git(repo, "add", "README.md")  # staged outside the vault's folder: not vaultd's business
    client.call(VAULT_ADD, VaultAddParams(id="sub", path=str(repo / "notes"), git=GitMode.CHECKPOINT))
    done = applied(client.call(APPEND, AppendParams(vault="sub", target="Alpha", section="Log", markdown="- one")))
    assert done.commit is not None
    assert sorted(git(repo, "show", "--name-only", "--format=", done.commit).splitlines()) == ["notes/Alpha.md", "notes/log.md"]
    assert git(repo, "diff", "--cached", "--name-only") == "README.md", "the person's staging outside the vault is untouched"
    with refused(ErrorCode.POLICY) as refusal:
        client.call(VAULT_SYNC, SyncParams(vault="sub"))
    assert "root" in refusal.data.message


def test_history_reads_follow_renames_and_undo_falls_back_to_a_revert(shared: tuple[Home, Daemon], client: TypedClient) -> None:
    home = shared[0]
    vid, repo = _add(home, client)
    edited = applied(client.call(PATCH, PatchParams(vault=vid, target="Alpha", old="first", new="second")))
    preview = previewed(client.call(MOVE, MoveParams(vault=vid, target="Alpha", to="archive/Alpha Old")))
    moved = applied(
        client.call(MOVE, MoveParams(vault=vid, target="Alpha", to="archive/Alpha Old", confirm=True, fingerprint=preview.fingerprint))
    )
    history = _cli(home, "history", "Alpha Old", "--vault", vid)
    assert [e["status"] for e in history["entries"]] == ["renamed", "modified", "added"]
    assert history["entries"][0]["renamed_from"] == "Alpha.md"
    assert history["entries"][0]["op_id"] == moved.op_id
    then = client.call(READ, ReadParams(vault=vid, target="Alpha Old", at="HEAD~2"))
    assert then.path == "Alpha.md"
    assert "The first note." in then.body
    diff = client.call(NOTE_DIFF, NoteDiffParams(vault=vid, target="Alpha Old", from_rev="HEAD~2"))
    assert "-The first note." in diff.diff
    assert "+The second note." in diff.diff
    with refused(ErrorCode.NOT_FOUND):
        client.call(READ, ReadParams(vault=vid, target="Alpha Old", at="no-such-branch"))
    with refused(ErrorCode.INVALID_PARAMS):  # a revision can never be an option
        client.call(READ, ReadParams(vault=vid, target="Alpha Old", at="--output=/tmp/x"))

    # Past the journal's window (the edit's journal pruned away), undo points to git history.
    for folder in (repo / ".vaultd" / "journal").iterdir():
        if folder.name == edited.op_id:
            import shutil

            shutil.rmtree(folder)
    with refused(ErrorCode.NOT_FOUND) as gone:
        client.call(UNDO, UndoParams(vault=vid, op_id=edited.op_id))
    assert [i.code for i in gone.data.issues] == [IssueCode.R02]
    with refused(ErrorCode.CONFLICT):  # the note moved since: nothing is put back over it
        client.call(REVERT, RevertParams(vault=vid, op_id=edited.op_id))
    back = previewed(client.call(MOVE, MoveParams(vault=vid, target="Alpha Old", to="Alpha")))
    client.call(MOVE, MoveParams(vault=vid, target="Alpha Old", to="Alpha", confirm=True, fingerprint=back.fingerprint))
    fallback = vaultctl(home, "undo", edited.op_id, "--vault", vid)
    assert fallback.code == 0
    assert "preview of op.revert" in fallback.out
    assert f"vaultctl revert {edited.op_id}" in fallback.out
    shown = previewed(client.call(REVERT, RevertParams(vault=vid, op_id=edited.op_id)))
    assert shown.detail.files == ["Alpha.md"]
    done = applied(client.call(REVERT, RevertParams(vault=vid, op_id=edited.op_id, confirm=True, fingerprint=shown.fingerprint)))
    assert "The first note." in (repo / "Alpha.md").read_text()
    assert done.commit == gitrepo.head(repo)


def test_a_crash_at_each_step_of_a_checkpoint_commits_the_operation_exactly_once(
    shared: tuple[Home, Daemon], typed_clients: TypedClients
) -> None:
    """Killed right after the operation committed, after the commit object was written, and after
    the branch moved: each time the restarted daemon commits the operation once, and the
    repository passes ``git fsck``."""
    home = Home.create()
    repo = gitrepo.init(home.root / "vault", NOTES)
    # Each restart first commits what the last crash left uncommitted, which passes the next crash
    # point once: hence @2 (the restart's own commit comes first, the new operation's second).
    points = ["after-commit", "git-after-commit-tree@2", "git-after-update-ref@2"]
    made: list[str] = []
    try:
        for i, point in enumerate([*points, None]):
            if point is None:
                home.env.pop("VAULTD_FAULTS", None)
            else:
                home.env["VAULTD_FAULTS"] = f"crash={point}"
            d = Daemon(home)
            c = typed_clients.open(home)
            if i == 0:
                c.call(VAULT_ADD, VaultAddParams(id="v", path=str(repo), git=GitMode.CHECKPOINT))
            else:  # the note the last crash interrupted is in the vault and committed exactly once
                c.call(READ, ReadParams(target=made[-1], vault="v", fresh=True))
                ops = gitrepo.op_ids(repo)
                assert len(ops) == len(made), (points[i - 1], ops)
                assert len(made) == len(set(ops)), (points[i - 1], ops)
                assert f"{made[-1]}.md" in gitrepo.tree(repo)
                assert gitrepo.fsck(repo) == ""
                assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
            if point is None:
                done = applied(c.call(CREATE, CreateParams(path="After", vault="v")))
                assert done.commit == gitrepo.head(repo)
                assert len(gitrepo.op_ids(repo)) == len(made) + 1
                d.stop()
                break
            made.append(f"Crashed {i}")
            with pytest.raises(DaemonUnavailable):  # the connection breaks as the daemon dies
                c.call(CREATE, CreateParams(path=made[-1], vault="v", body="# Crashed\n"))
            assert d.proc.wait(10) != 0
            d.stop()
    finally:
        home.cleanup()


def test_git_settings_and_history_bounds_are_enforced_at_their_edges(
    shared: tuple[Home, Daemon], client: TypedClient, typed_clients: TypedClients
) -> None:
    home = shared[0]
    vid, repo = _add(home, client)

    def code(spec: MethodSpec[P, Any], params: P) -> ErrorCode | None:
        try:
            client.call(spec, params)
        except CallError as exc:
            return exc.data.code
        return None

    assert code(NOTE_HISTORY, NoteHistoryParams(vault=vid, target="Alpha", limit=200)) is None
    assert code(NOTE_HISTORY, NoteHistoryParams(vault=vid, target="Alpha", limit=201)) is ErrorCode.INVALID_PARAMS
    assert code(VAULT_GIT, VaultGitParams(id=vid, snapshot_quiet_s=1)) is None
    assert code(VAULT_GIT, VaultGitParams(id=vid, snapshot_quiet_s=0)) is ErrorCode.INVALID_PARAMS
    assert code(VAULT_GIT, VaultGitParams(id=vid, snapshot_quiet_s=86400)) is None
    assert code(VAULT_GIT, VaultGitParams(id=vid, snapshot_quiet_s=86401)) is ErrorCode.INVALID_PARAMS
    assert code(VAULT_GIT, VaultGitParams(id=vid, sync_interval_s=59)) is ErrorCode.INVALID_PARAMS
    info = client.call(VAULT_GIT, VaultGitParams(id=vid, sync_interval_s=60, remote=str(home.root / "org.git")))
    assert info.entry.sync_interval_s == 60
    assert info.entry.git is GitMode.CHECKPOINT
    assert client.call(VAULT_GIT, VaultGitParams(id=vid, sync_interval_s=0)).entry.sync_interval_s is None
    remote_option = code(VAULT_GIT, VaultGitParams(id=vid, remote="--upload-pack=touch /tmp/x"))
    assert remote_option is ErrorCode.INVALID_PARAMS, "a remote is never an option"
    assert code(VAULT_GIT, VaultGitParams(id=vid, remote="x", clear_remote=True)) is ErrorCode.INVALID_PARAMS
    assert client.call(VAULT_GIT, VaultGitParams(id=vid, clear_remote=True)).entry.remote is None
    plain = home.root / f"plain-{vid}"
    plain.mkdir()
    no_repository = code(VAULT_ADD, VaultAddParams(id=f"p{vid}", path=str(plain), git=GitMode.CHECKPOINT))
    assert no_repository is ErrorCode.UNAVAILABLE, "git needs a repository"
    agent = typed_clients.open(home, Channel.MCP)
    with pytest.raises(CallError) as refusal:
        agent.call(VAULT_GIT, VaultGitParams(id=vid, mode=GitMode.OFF))
    assert refusal.value.data.code in (ErrorCode.POLICY, ErrorCode.METHOD_NOT_FOUND)
    agent.close()
    assert client.call(VAULT_LIST, Empty()).vaults
    assert (repo / ".git").is_dir()
