"""Checkouts: an agent (the official MCP SDK client through ``vaultctl mcp``) copies notes out of the
vault, edits the copies with its own file tools, and returns them as one proposal; a person
(``vaultctl``) applies it. A person's edits made meanwhile are kept, overlaps are shown, never
overwritten; the bounds hold at their edge; a copy that leads out of its folder is refused."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from protocol.errors import ErrorCode
from protocol.methods.checkouts import (
    CHECKOUT_CANCEL,
    CHECKOUT_LIST,
    CHECKOUT_MAKE,
    CHECKOUT_RETURN,
    MAX_CHECKOUT_BYTES,
    MAX_CHECKOUT_NOTES,
    MAX_KEPT_CHECKOUTS,
    MAX_OPEN_CHECKOUTS,
    CheckoutListParams,
    CheckoutMakeParams,
    CheckoutRef,
    CheckoutReturnParams,
)
from protocol.methods.common import Channel
from tests.support.agent import agent, ok
from tests.support.guard_driver import edit, judge
from tests.support.harness import Daemon, Home, register, snapshot
from tests.support.typed import refused

if TYPE_CHECKING:
    from tests.support.typed import TypedClient, TypedClients

PLAN = "# Plan\n\nIntro line.\n\n## Steps\n\n- first step\n- second step\n\n## Notes\n\nOld note line.\n"
IDEAS = "# Ideas\n\nSee [[Plan]].\n\nA spare idea.\n"


def _json(cli: Any, *args: str) -> Any:
    result = cli(*args, "--json")
    assert result.code == 0, (args, result.out, result.err)
    return result.json()


def _notes(root: Path) -> dict[str, bytes]:
    return {k: v for k, v in snapshot(root).items() if k != "log.md"}


@pytest.fixture
def vault(daemon: Daemon, home: Home) -> Path:
    root = home.root / "vault"
    root.mkdir()
    (root / "Plan.md").write_text(PLAN)
    (root / "Ideas.md").write_text(IDEAS)
    (root / "Other.md").write_text("# Other\n\nNothing about it.\n")
    (root / "Private").mkdir()
    (root / "Private/Secret.md").write_text("# Secret\n\nSee [[Plan]].\n")
    register(home, root, private_paths=["Private/**"])
    return root


async def test_a_person_edit_made_meanwhile_is_kept_and_the_overlap_shown(vault: Path, home: Home, cli: Any) -> None:
    async with agent(home) as client:
        made = ok(await client.call_tool("checkout_make", {"notes": ["Plan", "Ideas.md"], "name": "tidy plan"}))
        copies = {n["path"]: Path(n["copy"]) for n in made["notes"]}
        assert set(copies) == {"Plan.md", "Ideas.md"}
        folder = Path(made["folder"])
        assert vault not in folder.parents and home.home not in folder.parents, "the copies live outside the vault and the home"
        assert folder.is_relative_to(home.root / "home-checkouts")
        assert copies["Plan.md"].read_text() == PLAN
        # The agent edits its copies with its own file tools; the person edits the note meanwhile.
        copies["Plan.md"].write_text(
            PLAN.replace("- first step", "- first step, done by the agent").replace("Old note line.", "Agent's note line.")
        )
        copies["Ideas.md"].write_text(IDEAS + "\nAn idea from the agent.\n")
        (vault / "Plan.md").write_text(
            PLAN.replace("Intro line.", "Intro line, by the person.").replace("Old note line.", "Person's note line.")
        )
        listed = ok(await client.call_tool("checkout_list", {}))
        assert [(c["id"], c["folder"]) for c in listed["checkouts"]] == [(made["id"], str(folder))]
        returned = ok(await client.call_tool("checkout_return", {"id": made["id"], "reason": "tidied the plan"}))
        pid = returned["proposal"]
        assert pid and sorted(returned["returned"]) == ["Ideas.md", "Plan.md"]
        assert [(o["path"], o["ours"], o["theirs"]) for o in returned["overlaps"]] == [
            ("Plan.md", "Person's note line.\n", "Agent's note line.\n")
        ]
        proposal = ok(await client.call_tool("proposal_show", {"id": pid}))
        assert any(w["code"] == "G04" and "Plan.md" in w["message"] for w in proposal["warnings"])
        tools = {t.name for t in (await client.list_tools()).tools}
        assert "checkout" in tools and "proposal_apply" not in tools, "an agent never applies a proposal"
    assert not any(folder.parent.glob(folder.name)), "a returned checkout's copies are dropped; its record holds them"
    # Nothing is written until the person applies it.
    assert "by the agent" not in (vault / "Plan.md").read_text()
    applied = _json(cli, "proposals", "apply", pid)
    assert applied["outcome"] == "applied"
    plan = (vault / "Plan.md").read_text()
    assert "Intro line, by the person." in plan, "the person's edit is kept"
    assert "Person's note line." in plan and "Agent's note line." not in plan, "an overlap keeps the person's text"
    assert "- first step, done by the agent" in plan, "the agent's own edit is merged in"
    assert (vault / "Ideas.md").read_text() == IDEAS + "\nAn idea from the agent.\n"
    # One operation: one undo takes both notes back to what the person had.
    undone = _json(cli, "undo", applied["op_id"])
    assert undone["outcome"] == "applied"
    assert (vault / "Ideas.md").read_text() == IDEAS
    assert "done by the agent" not in (vault / "Plan.md").read_text()


def test_the_guard_lets_an_agents_own_tools_edit_the_copies_and_nothing_in_the_vault(vault: Path, home: Home, cli: Any) -> None:
    made = _json(cli, "checkout", "make", "Plan")
    copy = made["notes"][0]["copy"]
    env = {**home.env, "CLAUDE_PROJECT_DIR": str(home.root)}
    allowed, why = judge(edit("Edit", copy, cwd=str(home.root)), env)
    assert allowed == 0, why
    refused_code, why = judge(edit("Edit", str(vault / "Plan.md"), cwd=str(home.root)), env)
    assert refused_code == 2 and "Plan.md" in why


def test_a_proposal_is_stale_when_the_note_changes_after_the_return(vault: Path, home: Home, cli: Any) -> None:
    made = _json(cli, "checkout", "make", "Ideas")
    Path(made["notes"][0]["copy"]).write_text(IDEAS + "more\n")
    shown = _json(cli, "checkout", "show", made["id"])
    assert [(n["path"], n["edited"]) for n in shown["notes"]] == [("Ideas.md", True)]
    returned = _json(cli, "checkout", "return", made["id"])
    assert returned["proposal"], "a person's return is a proposal too"
    (vault / "Ideas.md").write_text(IDEAS + "the person again\n")
    before = _notes(vault)
    result = cli("proposals", "apply", returned["proposal"])
    assert result.code != 0 and "G03" in result.err, (result.out, result.err)
    assert _notes(vault) == before


def test_unedited_returns_propose_nothing_and_a_checkout_returns_once(vault: Path, typed: TypedClient) -> None:
    made = typed.call(CHECKOUT_MAKE, CheckoutMakeParams(vault="v", notes=["Plan"]))
    returned = typed.call(CHECKOUT_RETURN, CheckoutReturnParams(vault="v", id=made.id))
    assert returned.proposal is None and returned.unchanged == ["Plan.md"]
    with refused(ErrorCode.CONFLICT):
        typed.call(CHECKOUT_RETURN, CheckoutReturnParams(vault="v", id=made.id))
    with refused(ErrorCode.CONFLICT):
        typed.call(CHECKOUT_CANCEL, CheckoutRef(vault="v", id=made.id))


def test_cancel_discards_the_copies_and_frees_the_bound(vault: Path, typed: TypedClient) -> None:
    made = [typed.call(CHECKOUT_MAKE, CheckoutMakeParams(vault="v", notes=["Other"])) for _ in range(MAX_OPEN_CHECKOUTS)]
    with refused(ErrorCode.LIMIT):
        typed.call(CHECKOUT_MAKE, CheckoutMakeParams(vault="v", notes=["Other"]))
    cancelled = typed.call(CHECKOUT_CANCEL, CheckoutRef(vault="v", id=made[0].id))
    assert cancelled.state == "cancelled" and not Path(made[0].folder).exists()
    assert typed.call(CHECKOUT_CANCEL, CheckoutRef(vault="v", id=made[0].id)).state == "cancelled"
    again = typed.call(CHECKOUT_MAKE, CheckoutMakeParams(vault="v", notes=["Other"]))
    listed = typed.call(CHECKOUT_LIST, CheckoutListParams(vault="v"))
    assert listed.open == MAX_OPEN_CHECKOUTS and again.id in {c.id for c in listed.checkouts}


def test_notes_and_bytes_are_bounded_at_their_edge(vault: Path, typed: TypedClient) -> None:
    for i in range(MAX_CHECKOUT_NOTES + 1):
        (vault / f"Many/N{i:02}.md").parent.mkdir(exist_ok=True)
        (vault / f"Many/N{i:02}.md").write_text(f"# N{i:02}\n")
    names = [f"Many/N{i:02}.md" for i in range(MAX_CHECKOUT_NOTES + 1)]
    full = typed.call(CHECKOUT_MAKE, CheckoutMakeParams(vault="v", notes=names[:MAX_CHECKOUT_NOTES], limit=MAX_CHECKOUT_NOTES))
    assert len(full.notes) == MAX_CHECKOUT_NOTES
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(CHECKOUT_MAKE, CheckoutMakeParams(vault="v", notes=names))
    # Bytes: three notes of exactly the bound together are taken; one byte more is refused.
    big = MAX_CHECKOUT_BYTES // 2 - 100
    (vault / "Big1.md").write_text("a" * (big - 1) + "\n")
    (vault / "Big2.md").write_text("b" * (big - 1) + "\n")
    (vault / "Small.md").write_text("c" * 199 + "\n")
    (vault / "Small2.md").write_text("d" * 200 + "\n")
    at_bound = typed.call(CHECKOUT_MAKE, CheckoutMakeParams(vault="v", notes=["Big1.md", "Big2.md", "Small.md"]))
    assert len(at_bound.notes) == 3
    with refused(ErrorCode.LIMIT):
        typed.call(CHECKOUT_MAKE, CheckoutMakeParams(vault="v", notes=["Big1.md", "Big2.md", "Small2.md"]))


async def test_a_search_takes_linked_neighbours_and_never_a_private_note(vault: Path, home: Home) -> None:
    async with agent(home) as client:
        made = ok(await client.call_tool("checkout_make", {"query": "spare idea", "limit": 5}))
        paths = [n["path"] for n in made["notes"]]
        assert paths[0] == "Ideas.md" and "Plan.md" in paths, paths
        assert not any(p.startswith("Private/") for p in paths)
        hidden = await client.call_tool("checkout_make", {"notes": ["Private/Secret.md"]})
        assert hidden.is_error


def test_a_copy_that_leads_out_of_its_folder_is_refused(vault: Path, home: Home, typed_clients: TypedClients) -> None:
    client = typed_clients.open(home, Channel.MCP, session="s1")
    made = client.call(CHECKOUT_MAKE, CheckoutMakeParams(vault="v", notes=["Plan"]))
    copy = Path(made.notes[0].copy)
    outside = home.root / "elsewhere.md"
    outside.write_text("# stolen\n")
    copy.unlink()
    os.symlink(outside, copy)
    before = _notes(vault)
    with refused(ErrorCode.POLICY):
        client.call(CHECKOUT_RETURN, CheckoutReturnParams(vault="v", id=made.id))
    assert _notes(vault) == before
    copy.unlink()
    copy.write_text(PLAN + "fine\n")
    returned = client.call(CHECKOUT_RETURN, CheckoutReturnParams(vault="v", id=made.id))
    assert returned.proposal is not None, "a refused return leaves the checkout open"


# -- the scratch folder is the agent's to edit, never a way through: no link below its root is followed


def _checkout_folder(made: Any) -> tuple[Path, Path]:
    """The checkout's own folder and the vault's folder of checkouts above it."""
    folder = Path(made.folder)
    return folder, folder.parent


def _swap_for_link(folder: Path, target: Path) -> None:
    """What an agent's shell can do in the scratch folder: move a folder aside, leave a link."""
    folder.rename(folder.with_name(folder.name + "-moved"))
    os.symlink(target, folder)


def test_a_checkout_folder_swapped_for_a_link_returns_nothing_read_through_it(vault: Path, home: Home, typed_clients: TypedClients) -> None:
    (vault / "Private/Ideas.md").write_text("# Ideas\n\nthe private diary line\n")
    client = typed_clients.open(home, Channel.MCP, session="s1")
    made = client.call(CHECKOUT_MAKE, CheckoutMakeParams(vault="v", notes=["Ideas.md"]))
    folder, _ = _checkout_folder(made)
    _swap_for_link(folder, vault / "Private")  # the copy's path now resolves to the private note
    before = _notes(vault)
    with refused(ErrorCode.POLICY) as refusal:
        client.call(CHECKOUT_RETURN, CheckoutReturnParams(vault="v", id=made.id))
    assert "diary" not in refusal.data.message
    assert client.call(CHECKOUT_LIST, CheckoutListParams(vault="v")).checkouts[0].proposal is None
    assert _notes(vault) == before
    assert os.path.islink(folder) and (vault / "Private/Ideas.md").exists(), "the link and what it points at are left alone"
    # Cancelling drops nothing through the link either.
    client.call(CHECKOUT_CANCEL, CheckoutRef(vault="v", id=made.id))
    assert _notes(vault) == before


def test_a_vaults_checkouts_folder_swapped_for_a_link_gets_no_copy_and_loses_nothing(
    vault: Path, home: Home, typed_clients: TypedClients
) -> None:
    client = typed_clients.open(home, Channel.MCP, session="s1")
    first = client.call(CHECKOUT_MAKE, CheckoutMakeParams(vault="v", notes=["Plan"]))
    folder, per_vault = _checkout_folder(first)
    # The vault's checkouts folder becomes a link into the vault's private folder, where a
    # person's folder happens to carry the checkout's name.
    _swap_for_link(per_vault, vault / "Private")
    (vault / "Private" / folder.name).mkdir()
    (vault / "Private" / folder.name / "Plan.md").write_text("# a person's file\n")
    before = _notes(vault)
    with refused(ErrorCode.POLICY):
        client.call(CHECKOUT_MAKE, CheckoutMakeParams(vault="v", notes=["Ideas"]))
    assert _notes(vault) == before, "no copy is written through the link"
    listed = client.call(CHECKOUT_LIST, CheckoutListParams(vault="v"))
    assert [c.id for c in listed.checkouts] == [first.id], "a refused make keeps no record"
    client.call(CHECKOUT_CANCEL, CheckoutRef(vault="v", id=first.id))
    assert _notes(vault) == before, "dropping the copies deletes nothing through the link"
    # The scratch root itself swapped for a link: refused the same way.
    os.unlink(per_vault)
    root = per_vault.parent
    _swap_for_link(root, vault / "Private")
    with refused(ErrorCode.POLICY):
        client.call(CHECKOUT_MAKE, CheckoutMakeParams(vault="v", notes=["Ideas"]))
    assert _notes(vault) == before


def test_a_returned_checkout_whose_proposal_waits_outlives_the_record_bound(
    vault: Path, home: Home, typed: TypedClient, typed_clients: TypedClients, cli: Any
) -> None:
    """Past MAX_KEPT_CHECKOUTS records the oldest closed ones go, but never the record a pending
    proposal applies from: however many checkouts are made and dropped since (by an agent, say),
    the person can still apply what was returned."""
    client = typed_clients.open(home, Channel.MCP, session="s1")
    made = client.call(CHECKOUT_MAKE, CheckoutMakeParams(vault="v", notes=["Plan"]))
    Path(made.notes[0].copy).write_text(PLAN + "An edit to keep.\n")
    returned = client.call(CHECKOUT_RETURN, CheckoutReturnParams(vault="v", id=made.id))
    assert returned.proposal is not None
    dropped = client.call(CHECKOUT_MAKE, CheckoutMakeParams(vault="v", notes=["Other"]))
    client.call(CHECKOUT_CANCEL, CheckoutRef(vault="v", id=dropped.id))
    for _ in range(MAX_KEPT_CHECKOUTS):
        other = client.call(CHECKOUT_MAKE, CheckoutMakeParams(vault="v", notes=["Other"]))
        client.call(CHECKOUT_CANCEL, CheckoutRef(vault="v", id=other.id))
    kept = typed.call(CHECKOUT_LIST, CheckoutListParams(vault="v", all=True)).checkouts
    assert len(kept) == MAX_KEPT_CHECKOUTS and made.id in {c.id for c in kept}, "the bound holds, and the waiting record stays"
    assert dropped.id not in {c.id for c in kept}, "an older closed record went instead"
    applied = _json(cli, "proposals", "apply", returned.proposal)
    assert applied["outcome"] == "applied"
    assert (vault / "Plan.md").read_text() == PLAN + "An edit to keep.\n"


def test_an_agent_returns_or_cancels_only_its_own_sessions_checkouts(
    vault: Path, home: Home, typed: TypedClient, typed_clients: TypedClients
) -> None:
    """A person's checkout (edited in their editor) and another agent session's are not an agent's
    to cancel, which would drop their edited copies, nor to return as its own proposal."""
    mine = typed.call(CHECKOUT_MAKE, CheckoutMakeParams(vault="v", notes=["Plan"]))
    copy = Path(mine.notes[0].copy)
    copy.write_text(PLAN + "The person's edit.\n")
    one = typed_clients.open(home, Channel.MCP, session="s-one")
    other = typed_clients.open(home, Channel.MCP, session="s-other")
    theirs = one.call(CHECKOUT_MAKE, CheckoutMakeParams(vault="v", notes=["Ideas"]))
    for agent_client, made in ((one, mine), (other, mine), (other, theirs)):
        with refused(ErrorCode.POLICY):
            agent_client.call(CHECKOUT_CANCEL, CheckoutRef(vault="v", id=made.id))
        with refused(ErrorCode.POLICY):
            agent_client.call(CHECKOUT_RETURN, CheckoutReturnParams(vault="v", id=made.id))
    assert copy.read_text() == PLAN + "The person's edit.\n", "the person's edited copy is kept"
    assert one.call(CHECKOUT_CANCEL, CheckoutRef(vault="v", id=theirs.id)).state == "cancelled", "its own session's, an agent may"
    returned = typed.call(CHECKOUT_RETURN, CheckoutReturnParams(vault="v", id=mine.id))
    assert returned.proposal is not None
