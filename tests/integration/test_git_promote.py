"""Promotion from a personal vault into an org vault: previewed with a fingerprint, screened (fail
closed), provenance on both sides, committed in the org vault and pushed by its next sync; an
agent's promotion is only ever a proposal a person applies."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.methods.git import PROMOTE, VAULT_SYNC, PromoteParams, SyncParams
from protocol.methods.git_settings import GitMode
from protocol.methods.proposals import PROPOSAL_LIST, PROPOSAL_SHOW, ProposalListParams, ProposalRef
from protocol.methods.reads import READ, ReadParams
from protocol.methods.vaults import VAULT_ADD, VAULT_REMOVE, Kind, VaultAddParams, VaultRemoveParams, VaultRemovePreview
from protocol.methods.writes import CREATE, CreateParams
from tests.support import gitrepo
from tests.support.agent import agent, ok
from tests.support.gitrepo import git
from tests.support.harness import Daemon, Home, vaultctl
from tests.support.typed import TypedClient, TypedClients, applied, previewed, refused
from vaultctl.client import CallError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

GITHUB = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
PERSONAL = {
    "ideas/Method.md": "---\ntags: [method]\n---\n# Method\n\nHow we review, see [[Glossary]] and [[My Diary]].\n",
    "My Diary.md": "# My Diary\n\nPrivate.\n",
    "Leaky.md": f"# Leaky\n\ntoken {GITHUB}\n",
    "Contact.md": "# Contact\n\nwrite to ada@example.org\n",
}
ORG = {"Glossary.md": "# Glossary\n\nTerms.\n"}


@pytest.fixture(scope="module")
def shared() -> Iterator[Home]:
    """One daemon for the module; each test registers its own pair of vaults."""
    home = Home.create()
    daemon = Daemon(home)
    yield home
    daemon.stop()
    home.cleanup()


@pytest.fixture
def home(shared: Home) -> Home:
    return shared


@pytest.fixture
def setup(shared: Home, typed_clients: TypedClients, tmp_path: Path) -> tuple[TypedClient, Path, Path, Path]:
    """Vaults 'me' (personal) and 'team' (org, with a bare remote), fresh for each test."""
    c = typed_clients.open(shared)
    for vid in ("me", "team"):  # the previous test's pair
        try:
            removal = c.call(VAULT_REMOVE, VaultRemoveParams(id=vid))
            assert isinstance(removal, VaultRemovePreview)
        except CallError:
            continue
        c.call(VAULT_REMOVE, VaultRemoveParams(id=vid, confirm=True, fingerprint=removal.fingerprint))
    personal = gitrepo.init(tmp_path / "personal", PERSONAL)
    seed = gitrepo.init(tmp_path / "seed", ORG)
    remote = gitrepo.bare(tmp_path / "org.git")
    git(seed, "push", "-q", str(remote), "main")
    org = gitrepo.clone(remote, tmp_path / "org")
    c.call(VAULT_ADD, VaultAddParams(id="me", path=str(personal), git=GitMode.CHECKPOINT))
    c.call(VAULT_ADD, VaultAddParams(id="team", path=str(org), kind=Kind.ORG, git=GitMode.CHECKPOINT, remote=str(remote)))
    return c, personal, org, remote


def _refusal(c: TypedClient, params: PromoteParams) -> tuple[ErrorCode, list[str]]:
    """The error code and the issue codes a promotion is refused with."""
    with pytest.raises(CallError) as caught:
        c.call(PROMOTE, params)
    return caught.value.data.code, [i.code for i in caught.value.data.issues]


def test_a_person_promotes_with_provenance_on_both_sides_and_sync_pushes_it(
    setup: tuple[TypedClient, Path, Path, Path], home: Home
) -> None:
    c, personal, org, remote = setup
    preview = vaultctl(home, "promote", "Method", "--to", "team", "--vault", "me")
    assert preview.code == 0
    assert "vaultctl promote Method --to team --vault me --confirm --fingerprint" in preview.out
    shown = previewed(c.call(PROMOTE, PromoteParams(vault="me", target="Method", to="team")))
    assert shown.changes[0].path == "ideas/Method.md"
    assert shown.detail.dropped_links == ["6: [[My Diary]]"], "a link the org cannot resolve becomes text"
    assert IssueCode.R07 in [w.code for w in shown.warnings]
    assert not (org / "ideas" / "Method.md").exists(), "a preview writes nothing"

    done = applied(c.call(PROMOTE, PromoteParams(vault="me", target="Method", to="team", confirm=True, fingerprint=shown.fingerprint)))
    copy = c.call(READ, ReadParams(vault="team", target="ideas/Method.md"))
    source = c.call(READ, ReadParams(vault="me", target="ideas/Method.md"))
    assert copy.frontmatter is not None
    assert source.frontmatter is not None
    assert copy.frontmatter["promoted_from"] == f"me:ideas/Method.md (op {done.detail.source_op_id})"
    assert source.frontmatter["promoted_to"] == f"team:ideas/Method.md (op {done.op_id})"
    assert "see [[Glossary]] and My Diary." in copy.body
    assert "[[My Diary]]" in source.body
    assert done.commit == gitrepo.head(org)
    assert done.detail.source_commit == gitrepo.head(personal)
    assert git(org, "status", "--porcelain") == ""
    assert git(personal, "status", "--porcelain") == ""

    again = _refusal(c, PromoteParams(vault="me", target="Method", to="team"))
    assert again == (ErrorCode.VALIDATION, [IssueCode.V08]), "a second promotion needs again"
    elsewhere = _refusal(c, PromoteParams(vault="me", target="Method", to="team", again=True))
    assert elsewhere == (ErrorCode.VALIDATION, [IssueCode.V08]), "an org note is never overwritten"

    synced = c.call(VAULT_SYNC, SyncParams(vault="team"))
    assert synced.pushed
    assert "ideas/Method.md" in gitrepo.tree(remote, "main")


def test_the_screen_fails_closed(setup: tuple[TypedClient, Path, Path, Path]) -> None:
    c, _, org, _ = setup
    code, issues = _refusal(c, PromoteParams(vault="me", target="Leaky", to="team"))
    assert code is ErrorCode.VALIDATION, "a secret never reaches the org"
    assert IssueCode.V06 in issues, "a secret never reaches the org"
    code, issues = _refusal(c, PromoteParams(vault="me", target="Contact", to="team"))
    assert code is ErrorCode.VALIDATION, "personal data is refused by the org's policy"
    assert IssueCode.V07 in issues, "personal data is refused by the org's policy"
    with refused(ErrorCode.POLICY):  # only into org vaults
        c.call(PROMOTE, PromoteParams(vault="team", target="Glossary", to="me"))
    assert sorted(p.name for p in org.iterdir() if not p.name.startswith(".")) == ["Glossary.md"], "a refusal writes nothing"


async def test_an_agents_promotion_is_a_proposal_a_person_applies(setup: tuple[TypedClient, Path, Path, Path], home: Home) -> None:
    c, personal, org, _ = setup
    async with agent(home) as client:
        preview = ok(await client.call_tool("note_promote", {"vault": "me", "target": "Method", "to": "team"}))
        assert preview["outcome"] == "preview"
        assert [w["code"] for w in preview["warnings"]][0] == "G01"
        held = ok(
            await client.call_tool(
                "note_promote", {"vault": "me", "target": "Method", "to": "team", "confirm": True, "fingerprint": preview["fingerprint"]}
            )
        )
        assert held["outcome"] == "proposed"
        assert not (org / "ideas" / "Method.md").exists()
    listed = c.call(PROPOSAL_LIST, ProposalListParams(vault="me"))
    assert [p.id for p in listed.proposals] == [held["proposal"]]
    assert listed.proposals[0].targets == ["ideas/Method.md", "me:ideas/Method.md"]
    applied = vaultctl(home, "proposals", "apply", held["proposal"], "--vault", "me")
    assert applied.code == 0, applied.err
    assert "promoted_from: me:ideas/Method.md (op " in (org / "ideas" / "Method.md").read_text()
    assert "promoted_to: team:ideas/Method.md (op " in (personal / "ideas" / "Method.md").read_text()
    message = git(org, "log", "-1", "--format=%B")
    assert f"Vaultd-Proposal: {held['proposal']} by mcp:" in message


def test_a_promotion_of_a_note_full_of_dead_links_keeps_its_receipts_bounded(setup: tuple[TypedClient, Path, Path, Path]) -> None:
    """Every receipt of a promotion, applied as well as previewed, lists at most the cap and counts the rest."""
    c, _, org, _ = setup
    cap, dead = 100, 150
    body = "".join(f"[[gone{i:04d}]]\n" for i in range(dead))
    c.call(CREATE, CreateParams(vault="me", path="Debt", body=body))
    shown = previewed(c.call(PROMOTE, PromoteParams(vault="me", target="Debt", to="team")))
    total = len(shown.warnings) + shown.warnings_omitted
    assert len(shown.warnings) == cap
    assert total > cap
    assert len(shown.detail.dropped_links) == cap
    assert shown.detail.dropped_omitted == dead - cap
    done = applied(c.call(PROMOTE, PromoteParams(vault="me", target="Debt", to="team", confirm=True, fingerprint=shown.fingerprint)))
    assert len(done.warnings) == cap
    assert done.warnings_omitted == total - cap, "an applied receipt counts what it leaves out, as the preview did"
    assert done.detail.dropped_omitted == dead - cap
    assert (org / "Debt.md").read_text().count("[[") == 0, "every dead link became text"


async def test_an_approved_promotion_writes_only_the_copy_the_person_reviewed(
    setup: tuple[TypedClient, Path, Path, Path], home: Home
) -> None:
    """Regression: applying an agent's promotion compared only what each file held before, so a
    copy planned anew against a changed org vault (its link to Glossary now dropped to text) was
    written though nobody reviewed it."""
    c, personal, org, _ = setup
    async with agent(home) as client:
        preview = ok(await client.call_tool("note_promote", {"vault": "me", "target": "Method", "to": "team"}))
        held = ok(
            await client.call_tool(
                "note_promote", {"vault": "me", "target": "Method", "to": "team", "confirm": True, "fingerprint": preview["fingerprint"]}
            )
        )
    shown = c.call(PROPOSAL_SHOW, ProposalRef(vault="me", id=held["proposal"]))
    assert "see [[Glossary]]" in shown.diffs[0].diff, "the person reviews a copy that links to the org's Glossary"
    moved = vaultctl(home, "move", "Glossary", "terms/Lexicon", "--vault", "team", "--json")
    fingerprint = moved.json()["fingerprint"]
    assert vaultctl(home, "move", "Glossary", "terms/Lexicon", "--vault", "team", "--confirm", "--fingerprint", fingerprint).code == 0
    before = (personal / "ideas" / "Method.md").read_bytes()
    applied = vaultctl(home, "proposals", "apply", held["proposal"], "--vault", "me", "--json")
    assert applied.code == 75, (applied.code, applied.out, applied.err)
    assert "G03" in applied.out + applied.err
    assert "stale" in (applied.out + applied.err)
    assert not (org / "ideas" / "Method.md").exists()
    assert (personal / "ideas" / "Method.md").read_bytes() == before
