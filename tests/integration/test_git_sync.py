"""Org vaults beyond one machine: two homes, two daemons, two clones of one bare remote.

Both write at once and sync, and end with identical trees holding every acknowledged write; an
edit of one note on both sides becomes a proposal with both versions and loses nothing; a remote
that was force-pushed is refused; a push URL rewritten by ``url.insteadOf`` is refused.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.methods.common import Channel
from protocol.methods.git import VAULT_SYNC, SyncParams, SyncResult
from protocol.methods.git_settings import GitMode
from protocol.methods.proposals import PROPOSAL_SHOW, ProposalRef
from protocol.methods.reads import LIST, ListParams
from protocol.methods.service import DOCTOR, DoctorParams, Level
from protocol.methods.vaults import VAULT_ADD, VAULT_REMOVE, Kind, VaultAddParams, VaultRemoveParams, VaultRemovePreview
from protocol.methods.writes import APPEND, CREATE, PATCH, SET_FRONTMATTER, AppendParams, CreateParams, PatchParams, SetFrontmatterParams
from tests.support import gitrepo
from tests.support.gitrepo import git
from tests.support.harness import Daemon, Home, snapshot, vaultctl
from tests.support.typed import TypedClient, TypedClients, refused
from vaultctl.client import CallError

if TYPE_CHECKING:
    from collections.abc import Iterator

FILLER = "".join(f"line {i} of the shared note\n" for i in range(12))
SEED = {
    "Shared.md": f"# Shared\n\n## From A\n\n- start\n\n{FILLER}\n## From B\n\n- start\n",
    "Team.md": "---\nstatus: draft\nowner: ada\n---\n# Team\n\nThe plan is to ship in May.\n",
}


@dataclass
class Machine:
    """One person's machine: a home, a daemon, and (per test) a clone of the org vault registered
    as 'team'."""

    home: Home
    daemon: Daemon
    name: str
    repo: Path = Path()
    clients: TypedClients = field(init=False)
    client: TypedClient = field(init=False)

    def join(self, remote: Path, folder: Path, clients: TypedClients) -> None:
        self.clients = clients  # each test's own: they close their sessions after it
        self.client = clients.open(self.home)
        try:
            removal = self.client.call(VAULT_REMOVE, VaultRemoveParams(id="team"))
            assert isinstance(removal, VaultRemovePreview)
        except CallError:
            pass
        else:  # the previous test's clone
            self.client.call(VAULT_REMOVE, VaultRemoveParams(id="team", confirm=True, fingerprint=removal.fingerprint))
        self.repo = gitrepo.clone(remote, folder, self.name)
        self.client.call(
            VAULT_ADD, VaultAddParams(id="team", path=str(self.repo), kind=Kind.ORG, git=GitMode.CHECKPOINT, remote=str(remote))
        )

    def sync(self) -> SyncResult:
        return self.client.call(VAULT_SYNC, SyncParams(vault="team"))

    def files(self) -> dict[str, bytes]:
        return {k: v for k, v in snapshot(self.repo).items() if not k.startswith(".git/")}


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    seed = gitrepo.init(tmp_path / "seed", SEED)
    origin = gitrepo.bare(tmp_path / "org.git")
    git(seed, "push", "-q", str(origin), "main")
    return origin


def _machine(name: str) -> Machine:
    home = Home.create()
    return Machine(home, Daemon(home), name)


@pytest.fixture(scope="module")
def two() -> Iterator[tuple[Machine, Machine]]:
    """Two homes and two daemons for the module."""
    a, b = _machine("Ada Lovelace"), _machine("Grace Hopper")
    yield a, b
    for m in (a, b):
        m.daemon.stop()
        m.home.cleanup()


@pytest.fixture
def machines(two: tuple[Machine, Machine], remote: Path, tmp_path: Path, typed_clients: TypedClients) -> tuple[Machine, Machine]:
    """Both machines with a fresh clone of this test's org vault."""
    a, b = two
    a.join(remote, tmp_path / "ada", typed_clients)
    b.join(remote, tmp_path / "grace", typed_clients)
    return a, b


def _converge(a: Machine, b: Machine, remote: Path) -> None:
    """Sync both until neither has anything to integrate or push."""
    for _ in range(4):
        ra, rb = a.sync(), b.sync()
        if ra.outgoing == rb.outgoing == rb.incoming == 0 and gitrepo.head(a.repo) == gitrepo.head(b.repo):
            break
    assert gitrepo.head(a.repo) == gitrepo.head(b.repo) == git(remote, "rev-parse", "main")


def test_two_daemons_write_concurrently_sync_and_converge(machines: tuple[Machine, Machine], remote: Path) -> None:
    a, b = machines
    acked: dict[str, str] = {}  #: note path -> the text its acknowledged write put in it
    appended: list[str] = []
    lock = threading.Lock()

    def work(c: TypedClient, tag: str, section: str) -> None:
        for i in range(4):
            body = f"# {tag} {i}\n\nwritten on {tag}'s machine\n"
            done = c.call(CREATE, CreateParams(vault="team", path=f"{tag}/note-{i}", body=body))
            line = f"- {tag} wrote {i}"
            c.call(APPEND, AppendParams(vault="team", target="Shared", section=section, markdown=line))
            with lock:
                acked[done.changes[0].path] = body
                appended.append(line)
            if i % 2:
                try:
                    c.call(VAULT_SYNC, SyncParams(vault="team"))
                except CallError as exc:  # the other may push meanwhile: then it says retry
                    assert exc.data.code is ErrorCode.CONFLICT, exc.data
        c.close()

    sessions = [(a.clients.open(a.home), "ada", "From A"), (b.clients.open(b.home), "grace", "From B")]
    threads = [threading.Thread(target=work, args=args) for args in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    _converge(a, b, remote)

    files_a, files_b = a.files(), b.files()
    assert files_a == files_b, sorted(set(files_a.items()) ^ set(files_b.items()))
    for path, body in acked.items():
        assert files_a[path].decode().endswith(body.split("\n", 1)[1]), path
    shared = files_a["Shared.md"].decode()
    assert all(line in shared for line in appended), "every acknowledged append is in the merged note"
    log = files_a["log.md"].decode()
    assert sum(1 for ln in log.splitlines() if "vaultd:note.create" in ln) == 8, "both machines' log lines, each once"
    for m in (a, b):
        assert git(m.repo, "status", "--porcelain", "--untracked-files=all") == ""
        assert gitrepo.fsck(m.repo) == ""
        listed = {n.path for n in m.client.call(LIST, ListParams(vault="team", limit=500, fresh=True)).notes}
        assert set(acked) <= listed, "the index holds what sync brought in"


def test_an_edit_on_both_sides_becomes_a_proposal_with_both_versions(machines: tuple[Machine, Machine], remote: Path) -> None:
    a, b = machines
    a.client.call(PATCH, PatchParams(vault="team", target="Team", old="ship in May", new="ship in June"))
    a.client.call(SET_FRONTMATTER, SetFrontmatterParams(vault="team", target="Team", set={"status": "active", "reviewer": "ada"}))
    b.client.call(PATCH, PatchParams(vault="team", target="Team", old="ship in May", new="ship in April"))
    b.client.call(SET_FRONTMATTER, SetFrontmatterParams(vault="team", target="Team", set={"status": "blocked", "tags": ["q2"]}))
    assert a.sync().pushed
    synced = b.sync()
    [conflict] = synced.conflicts
    assert conflict.path == "Team.md"
    assert conflict.kept == "origin"
    assert conflict.proposal
    assert "ship in June" in (b.repo / "Team.md").read_text(), "published history wins in the vault"
    assert "ship in April" in git(b.repo, "show", "HEAD^1:Team.md"), "this machine's version is in the shared history"

    shown = b.client.call(PROPOSAL_SHOW, ProposalRef(vault="team", id=conflict.proposal))
    assert shown.proposer == "sync:origin"
    assert "+ship in April" in shown.diffs[0].diff.replace("The plan is to ", "")
    applied = vaultctl(b.home, "proposals", "apply", conflict.proposal, "--vault", "team")
    assert applied.code == 0, applied.err
    both = (b.repo / "Team.md").read_text()
    assert "ship in April" in both
    assert "ship in June" in both
    assert "<<<<<<< this machine" in both
    assert "reviewer: ada" in both, "keys changed on one side only are merged"
    assert "- q2" in both, "keys changed on one side only are merged"
    assert "status: blocked" in both, "a colliding key keeps this machine's value and names origin's"
    assert '`status`: origin has "active"' in both, "a colliding key keeps this machine's value and names origin's"

    _converge(a, b, remote)
    assert (a.repo / "Team.md").read_text() == both, "the person's resolution reaches the other machine"
    assert git(a.repo, "status", "--porcelain") == ""


def test_a_force_pushed_remote_and_a_rewritten_push_url_are_refused(
    machines: tuple[Machine, Machine], remote: Path, tmp_path: Path
) -> None:
    a, b = machines
    a.client.call(CREATE, CreateParams(vault="team", path="Kept", body="# Kept\n"))
    assert a.sync().pushed
    b.sync()
    head_b = gitrepo.head(b.repo)

    # Someone rewrites origin's main: a new history that drops Kept.md.
    rogue = gitrepo.clone(remote, tmp_path / "rogue", "Mallory Rogue")
    git(rogue, "reset", "-q", "--hard", "HEAD~1")
    (rogue / "Other.md").write_text("# Other\n")
    git(rogue, "add", "-A")
    git(rogue, "commit", "-q", "-m", "rewritten")
    git(rogue, "push", "-q", "--force", "origin", "main")
    forced = git(remote, "rev-parse", "main")

    with refused(ErrorCode.POLICY) as forced_refusal:
        b.sync()
    assert [i.code for i in forced_refusal.data.issues] == [IssueCode.R06]
    assert gitrepo.head(b.repo) == head_b, "nothing integrated"
    assert (b.repo / "Kept.md").exists(), "nothing integrated"
    assert git(remote, "rev-parse", "main") == forced, "nothing pushed over it"

    # A push URL that a rewrite sends elsewhere: refused before anything is fetched or pushed.
    elsewhere = gitrepo.bare(tmp_path / "elsewhere.git")
    git(a.repo, "config", f"url.{elsewhere}.pushInsteadOf", str(remote))
    a.client.call(CREATE, CreateParams(vault="team", path="Secret plan"))
    with refused(ErrorCode.POLICY) as rewritten:
        a.sync()
    assert IssueCode.R05 in [i.code for i in rewritten.data.issues]
    assert git(elsewhere, "for-each-ref") == "", "nothing reached the rewritten destination"
    doctor = a.client.call(DOCTOR, DoctorParams(vault="team"))
    assert doctor.verdict is Level.FAIL
    assert any("rewrite" in f.finding for f in doctor.findings if f.check == "remote:team")

    # Agents never sync: the method is not an MCP tool, whatever client asks.
    agent = a.clients.open(a.home, Channel.MCP)
    with pytest.raises(CallError) as agent_refusal:
        agent.call(VAULT_SYNC, SyncParams(vault="team"))
    assert agent_refusal.value.data.code in (ErrorCode.POLICY, ErrorCode.METHOD_NOT_FOUND)
    agent.close()
