"""A sync's integration is one operation: the person's index only ever follows what vaultd
committed, and a SIGKILL between any two of its steps is finished at the next start.

The teammate is plain ``git`` (a clone of the same bare remote), so the commits a sync integrates
say nothing of vaultd unless a test makes them; this machine is a real daemon on a real socket,
started again after each kill. Every fault point between the steps is driven, counted, by
``python -m reliability.sync_crash`` (its slice: tests/reliability/test_sync_crash_slice.py).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import pytest

from protocol.errors import ErrorCode, ErrorData
from protocol.methods.git import VAULT_SYNC, SyncParams, SyncResult
from protocol.methods.git_settings import GitMode
from protocol.methods.proposals import PROPOSAL_LIST, ProposalListParams
from protocol.methods.reads import LIST, ListParams
from protocol.methods.vaults import VAULT_ADD, Kind, VaultAddParams
from protocol.methods.writes import CREATE, PATCH, CreateParams, PatchParams
from tests.support import gitrepo
from tests.support.gitrepo import git
from tests.support.harness import Daemon, Home, vaultctl
from tests.support.typed import TypedClient, TypedClients, applied
from tests.support.wait import wait_until
from vaultctl.client import CallError, DaemonUnavailable

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

FILLER = "".join(f"line {i} of the shared note\n" for i in range(12))
SEED = {
    "Shared.md": f"# Shared\n\n## From A\n\n- start\n\n{FILLER}\n## From B\n\n- start\n",
    "Team.md": "---\nstatus: draft\n---\n# Team\n\nThe plan is to ship in May.\n",
}


@pytest.fixture
def home() -> Iterator[Home]:
    h = Home.create()
    yield h
    h.cleanup()


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    seed = gitrepo.init(tmp_path / "seed", SEED)
    origin = gitrepo.bare(tmp_path / "org.git")
    git(seed, "push", "-q", str(origin), "main")
    return origin


def _start(home: Home, clients: TypedClients, faults: str | None = None) -> tuple[Daemon, TypedClient]:
    if faults is None:
        home.env.pop("VAULTD_FAULTS", None)
    else:
        home.env["VAULTD_FAULTS"] = faults
    daemon = Daemon(home)
    return daemon, clients.open(home, timeout=120)


def _indexed(client: TypedClient) -> None:
    client.call(LIST, ListParams(vault="team", fresh=True, limit=1))


def _sync(client: TypedClient) -> SyncResult:
    return client.call(VAULT_SYNC, SyncParams(vault="team"))


def _sync_in_thread(client: TypedClient, replies: list[SyncResult | ErrorData]) -> threading.Thread:
    """A sync started beside the test, its answer (a result or the error's data) put in ``replies``."""

    def sync() -> None:
        try:
            replies.append(_sync(client))
        except CallError as exc:
            replies.append(exc.data)

    thread = threading.Thread(target=sync)
    thread.start()
    return thread


def _join(home: Home, clients: TypedClients, remote: Path, folder: Path, faults: str | None = None) -> tuple[Daemon, TypedClient, Path]:
    repo = gitrepo.clone(remote, folder, "Ada Lovelace")
    daemon, client = _start(home, clients, faults)
    client.call(VAULT_ADD, VaultAddParams(id="team", path=str(repo), kind=Kind.ORG, git=GitMode.CHECKPOINT, remote=str(remote)))
    _indexed(client)
    return daemon, client, repo


def _teammate(remote: Path, folder: Path, message: str = "the teammate's edits") -> str:
    """The teammate changes the A section of Shared.md and Team.md's plan, adds New.md, and pushes;
    origin's new head."""
    mate = gitrepo.clone(remote, folder, "Grace Hopper")
    (mate / "Shared.md").write_text(SEED["Shared.md"].replace("## From A\n\n- start", "## From A\n\n- theirs, from A"))
    (mate / "Team.md").write_text(SEED["Team.md"].replace("ship in May", "ship in June"))
    (mate / "New.md").write_text("# New\n\nWritten by the teammate.\n")
    git(mate, "add", "-A")
    git(mate, "commit", "-q", "-m", message)
    git(mate, "push", "-q", "origin", "main")
    return git(remote, "rev-parse", "main")


def _staged(repo: Path) -> str:
    return git(repo, "diff", "--cached", "--name-only", "HEAD")


@pytest.mark.parametrize("local", ["nothing", "a commit"])
def test_a_note_edited_while_a_sync_fetches_merges_and_stays_an_unstaged_edit(
    home: Home, typed_clients: TypedClients, remote: Path, tmp_path: Path, local: str
) -> None:
    """The person saves a note in their editor while the sync fetches; origin changed the same note
    on other lines. The merge is written, and the person's index follows only what vaultd
    committed: with nothing local the branch fast-forwards to origin's head and the note is an
    ordinary unstaged edit of it; with a local commit the merge commit holds the merged note."""
    gate = tmp_path / "fetched.gate"
    daemon, client, repo = _join(home, typed_clients, remote, tmp_path / "mine", f"pause=sync-after-fetch@1:{gate}")
    try:
        if local == "a commit":
            client.call(CREATE, CreateParams(vault="team", path="Mine", body="# Mine\n"))
        fetched = _teammate(remote, tmp_path / "mate")
        replies: list[SyncResult | ErrorData] = []
        syncing = _sync_in_thread(client, replies)
        wait_until(gate.exists, 60, "the sync to fetch")
        shared = repo / "Shared.md"
        shared.write_text(shared.read_text().replace("## From B\n\n- start", "## From B\n\n- typed in the editor"))
        gate.unlink()
        syncing.join(120)
        assert not syncing.is_alive(), replies
        assert isinstance(replies[0], SyncResult), replies
        merged = shared.read_text()
        assert "- theirs, from A" in merged, "both edits are in the note"
        assert "- typed in the editor" in merged, "both edits are in the note"
        assert _staged(repo) == "", "vaultd never stages anything in the person's index"
        if local == "nothing":
            assert gitrepo.head(repo) == fetched
            assert git(repo, "diff", "--name-only") == "Shared.md", "an ordinary unstaged edit against origin's version"
            assert git(repo, "status", "--porcelain", "--untracked-files=no").splitlines() == ["M Shared.md"]  # ' M', stripped
        else:
            assert gitrepo.head(repo, "HEAD^2") == fetched
            assert git(repo, "status", "--porcelain") == "", "the merge commit holds the merged note"

        created = applied(client.call(CREATE, CreateParams(vault="team", path="After", body="# After\n")))
        assert created.commit == gitrepo.head(repo), "the next checkpoint is not held back"
        assert not created.warnings, "the next checkpoint is not held back"
        synced = _sync(client)
        assert synced.pushed, "the next sync is not held back"
        assert git(remote, "rev-parse", "main") == gitrepo.head(repo), "the next sync is not held back"
        assert git(repo, "status", "--porcelain") == ""
        assert _staged(repo) == ""
        assert "- typed in the editor" in git(remote, "show", "main:Shared.md"), "the edit reached origin"
    finally:
        client.close()
        daemon.stop()


def test_a_kill_between_a_conflicts_writes_and_its_proposal_keeps_the_persons_version(
    home: Home, typed_clients: TypedClients, remote: Path, tmp_path: Path
) -> None:
    """SIGKILL after the integration's journal committed origin's text and before the conflict's
    proposal was stored: the restart finishes the integration, and the proposal is there."""
    daemon, client, repo = _join(home, typed_clients, remote, tmp_path / "mine", "crash=sync-after-integrate")
    try:
        client.call(PATCH, PatchParams(vault="team", target="Team", old="ship in May", new="ship in April"))
        fetched = _teammate(remote, tmp_path / "mate")
        with pytest.raises(DaemonUnavailable):  # the connection breaks as the daemon dies
            _sync(client)
        assert daemon.proc.wait(30) != 0
    finally:
        client.close()
        daemon.stop()

    daemon, client = _start(home, typed_clients)
    try:
        _indexed(client)
        assert not (repo / ".vaultd" / "git" / "integration").exists(), "the integration was finished"
        assert "ship in June" in (repo / "Team.md").read_text(), "the vault holds origin's version"
        assert gitrepo.head(repo, "HEAD^2") == fetched, "the merge commit was made"
        assert git(repo, "status", "--porcelain") == ""
        assert _staged(repo) == ""
        listed = client.call(PROPOSAL_LIST, ProposalListParams(vault="team")).proposals
        [proposal] = [p for p in listed if p.targets == ["Team.md"]]
        assert proposal.proposer == "sync:origin"
        applying = vaultctl(home, "proposals", "apply", proposal.id, "--vault", "team")
        assert applying.code == 0, applying.err
        both = (repo / "Team.md").read_text()
        assert "ship in April" in both, "the person's edit is back, beside origin's"
        assert "ship in June" in both, "the person's edit is back, beside origin's"
        synced = _sync(client)
        assert synced.pushed
        assert git(remote, "rev-parse", "main") == gitrepo.head(repo)
    finally:
        client.close()
        daemon.stop()


@pytest.mark.parametrize(
    "message",
    ["the teammate's edits", "note.patch: by vaultd elsewhere\n\nVaultd-Op: 20260101T000000.000000-0a0b0c0d\nVaultd-Channel: sync\n"],
    ids=["plain-commit", "commit-with-vaultd-trailers"],
)
def test_a_kill_right_after_a_fast_forward_is_finished_at_restart(
    home: Home, typed_clients: TypedClients, remote: Path, tmp_path: Path, message: str
) -> None:
    """SIGKILL after update-ref moved the branch to origin's head and before the person's index
    followed: the restart makes the index follow, whatever the tip commit says of itself, so
    nothing shows as staged and the person's next ``git commit`` holds only their own change."""
    daemon, client, repo = _join(home, typed_clients, remote, tmp_path / "mine", "crash=sync-after-update-ref")
    try:
        fetched = _teammate(remote, tmp_path / "mate", message)
        with pytest.raises(DaemonUnavailable):  # the connection breaks as the daemon dies
            _sync(client)
        assert daemon.proc.wait(30) != 0
    finally:
        client.close()
        daemon.stop()
    assert gitrepo.head(repo) == fetched, "killed after the branch moved"

    daemon, client = _start(home, typed_clients)
    try:
        _indexed(client)
        assert _staged(repo) == "", "nothing shows as staged"
        assert git(repo, "status", "--porcelain") == ""
        created = applied(client.call(CREATE, CreateParams(vault="team", path="After", body="# After\n")))
        assert created.commit == gitrepo.head(repo), "checkpoints are not held back"
        assert not created.warnings, "checkpoints are not held back"
    finally:
        client.close()
        daemon.stop()
    (repo / "Mine.md").write_text("# Mine\n")
    git(repo, "add", "Mine.md")
    git(repo, "commit", "-q", "-m", "the person's own commit")
    assert git(repo, "diff", "--name-status", "HEAD~1", "HEAD") == "A\tMine.md", "the person's commit reverts nothing of origin's"
    assert "- theirs, from A" in git(repo, "show", "HEAD:Shared.md")


def test_a_sync_whose_write_meets_an_editors_save_is_undone_whole_and_the_next_sync_merges_it(
    home: Home, typed_clients: TypedClients, remote: Path, tmp_path: Path
) -> None:
    """The editor saves a note after the integration's journal is written and before its files
    are: the sync answers CONFLICT with nothing integrated (no record left for a later start to
    finish from a stale plan), and the next sync merges the saved note with origin's."""
    gate = tmp_path / "journal.gate"
    daemon, client, repo = _join(home, typed_clients, remote, tmp_path / "mine", f"pause=after-journal@1:{gate}")
    try:
        old = gitrepo.head(repo)
        _teammate(remote, tmp_path / "mate")
        replies: list[SyncResult | ErrorData] = []
        syncing = _sync_in_thread(client, replies)
        wait_until(gate.exists, 60, "the integration's journal")
        shared = repo / "Shared.md"
        shared.write_text(shared.read_text().replace("## From B\n\n- start", "## From B\n\n- saved meanwhile"))
        gate.unlink()
        syncing.join(120)
        assert not syncing.is_alive(), replies
        assert isinstance(replies[0], ErrorData), replies
        assert replies[0].code is ErrorCode.CONFLICT, replies
        assert not (repo / ".vaultd" / "git" / "integration").exists(), "nothing is left to finish later"
        assert gitrepo.head(repo) == old, "nothing was integrated"
        assert not (repo / "New.md").exists(), "nothing was integrated"
        assert _staged(repo) == ""

        synced = _sync(client)
        assert synced.pushed
        assert git(remote, "rev-parse", "main") == gitrepo.head(repo)
        merged = shared.read_text()
        assert "- theirs, from A" in merged
        assert "- saved meanwhile" in merged
        assert (repo / "New.md").exists()
        assert git(repo, "status", "--porcelain") == ""
        assert _staged(repo) == ""
    finally:
        client.close()
        daemon.stop()
