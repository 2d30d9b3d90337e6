"""Subscriptions against a real daemon: an editor's writes, renames and deletes and the CLI's
operations arrive once each, in clock order; a reconnect with ``since`` replays the gap; filters,
bounds and the refusals say what they should."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.events import Subscriber, has, of_kind, sequence
from tests.support.harness import Daemon, Home, registered_vault

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

NOTES = {
    "Alpha.md": "# Alpha\n\nFirst note.\n",
    "Beta.md": "# Beta\n\nSee [[Alpha]].\n",
    "projects/Plan.md": "# Plan\n\nThe plan.\n",
}


@pytest.fixture
def vault(daemon: Daemon, home: Home) -> Path:
    return registered_vault(home, NOTES)


@pytest.fixture
def sub(home: Home, vault: Path) -> Iterator[Subscriber]:
    s = Subscriber(home.socket)
    yield s
    s.close()


def _json(cli: Any, *args: str) -> Any:
    result = cli(*args, "--json")
    assert result.code == 0, (args, result.err)
    return result.json()


def _assert_once_in_order(events: list[dict[str, Any]], first: int) -> None:
    """Unfiltered, a vault's events are every sequence after the subscription's clock, once, in order."""
    instances = {sequence(e)[0] for e in events}
    assert len(instances) == 1, instances
    assert [sequence(e)[1] for e in events] == list(range(first + 1, first + 1 + len(events)))


def test_an_editors_changes_and_the_clis_operations_arrive_once_in_clock_order(sub: Subscriber, vault: Path, cli: Any) -> None:
    started = sub.subscribe(vaults=["v"])
    (clock,) = started["vaults"]
    assert clock["vault"] == "v" and not clock["fresh_instance"] and clock["replay"] == 0
    first = int(clock["clock"].rsplit(":", 1)[1])

    # An external editor: create, edit, rename, delete, each seen before the next.
    (vault / "Draft.md").write_text("# Draft\n")
    sub.read_until(has("note.created", path="Draft.md"), 10, "the created note")
    with open(vault / "Draft.md", "a") as f:
        f.write("\nMore.\n")
    sub.read_until(has("note.changed", path="Draft.md"), 10, "the changed note")
    os.rename(vault / "Draft.md", vault / "projects" / "Final.md")
    sub.read_until(has("note.renamed", path="projects/Final.md", old_path="Draft.md"), 10, "the rename")
    os.unlink(vault / "projects" / "Final.md")
    sub.read_until(has("note.removed", path="projects/Final.md"), 10, "the removal")

    # The CLI: an operation, then its undo.
    created = _json(cli, "new", "inbox/idea", "--title", "Idea")
    op_id = created["op_id"]
    sub.read_until(has("operation.applied", op_id=op_id), 10, "operation.applied")
    undone = _json(cli, "undo", op_id)
    sub.read_until(has("operation.undone", undoes=op_id, op_id=undone["op_id"]), 10, "operation.undone")
    sub.read_for(0.5)  # the log's own change comes a moment later; nothing else may

    events = sub.events
    _assert_once_in_order(events, first)
    applied = of_kind(events, "operation.applied")
    assert [(e["op"], e["channel"], e["paths"]) for e in applied] == [("note.create", "cli", ["inbox/idea.md"])]
    kinds_paths = [(e["kind"], e.get("path")) for e in events if e.get("path") != "log.md"]
    at = kinds_paths.index(("note.created", "inbox/idea.md"))
    assert kinds_paths[at + 1] == ("operation.applied", None), "an operation follows the note events of its files"
    assert kinds_paths.count(("note.created", "inbox/idea.md")) == 1
    assert ("note.removed", "inbox/idea.md") in kinds_paths[at + 2 :], "undoing the create removes the note"
    for e in events:
        assert e["vault"] == "v" and e["at"] > 0


def test_a_reconnect_with_since_replays_the_gap_then_goes_on_live(home: Home, vault: Path) -> None:
    first = Subscriber(home.socket)
    first.subscribe(vaults=["v"])
    (vault / "One.md").write_text("# One\n")
    first.read_until(has("note.created", path="One.md"), 10, "One")
    resume_at = first.events[-1]["clock"]
    first.close()

    # While nobody listens: a second observer tells when the daemon has recorded the changes.
    observer = Subscriber(home.socket)
    observer.subscribe(vaults=["v"], kinds=["note.created"])
    for name in ("Two", "Three", "Four"):
        (vault / f"{name}.md").write_text(f"# {name}\n")
    observer.read_until(lambda ev: {e["path"] for e in ev} >= {"Two.md", "Three.md", "Four.md"}, 10, "the gap")

    again = Subscriber(home.socket)
    answer = again.subscribe(vaults=["v"], since={"v": resume_at})
    (clock,) = answer["vaults"]
    assert not clock["fresh_instance"] and clock["replay"] == 3
    again.read_until(lambda ev: len(ev) >= 3, 10, "the replay")
    assert sorted(e["path"] for e in again.events[:3]) == ["Four.md", "Three.md", "Two.md"]
    assert again.events[2]["clock"] == clock["clock"], "the replay ends at the clock the reply named"
    (vault / "Five.md").write_text("# Five\n")
    again.read_until(has("note.created", path="Five.md"), 10, "a live event after the replay")
    _assert_once_in_order(again.events, int(resume_at.rsplit(":", 1)[1]))


def test_a_clock_of_another_instance_gets_fresh_instance_and_no_replay(sub: Subscriber, vault: Path) -> None:
    answer = sub.subscribe(vaults=["v"], since={"v": "0badc0de:3"})
    (clock,) = answer["vaults"]
    assert clock["fresh_instance"] and clock["replay"] == 0
    assert sub.read_for(0.3) == [], "nothing is replayed for a clock that cannot be resumed"


def test_a_daemon_restart_is_a_new_instance(home: Home, vault: Path, cli: Any) -> None:
    before = Subscriber(home.socket)
    old_clock = before.subscribe(vaults=["v"])["vaults"][0]["clock"]
    before.close()
    assert cli("daemon", "stop").code == 0
    restarted = Daemon(home)
    try:
        after = Subscriber(home.socket)
        (clock,) = after.subscribe(vaults=["v"], since={"v": old_clock})["vaults"]
        assert clock["fresh_instance"] and clock["clock"].split(":")[0] != old_clock.split(":")[0]
        after.close()
    finally:
        restarted.stop()


def test_filters_by_kind_and_path_glob(sub: Subscriber, vault: Path, cli: Any) -> None:
    sub.subscribe(vaults=["v"], kinds=["note.created", "note.removed"], paths=["projects"])
    (vault / "Outside.md").write_text("# Outside\n")
    (vault / "projects" / "Inside.md").write_text("# Inside\n")
    sub.read_until(has("note.created", path="projects/Inside.md"), 10, "the note under projects/")
    (vault / "projects" / "Plan.md").write_text("# Plan\n\nChanged.\n")
    os.unlink(vault / "projects" / "Inside.md")
    sub.read_until(has("note.removed", path="projects/Inside.md"), 10, "the removal under projects/")
    sub.read_for(0.3)
    assert [(e["kind"], e["path"]) for e in sub.events] == [
        ("note.created", "projects/Inside.md"),
        ("note.removed", "projects/Inside.md"),
    ]


def test_every_vault_includes_one_added_later_from_its_first_event(home: Home, sub: Subscriber, cli: Any) -> None:
    sub.subscribe(kinds=["vault.health", "index.ready"])
    other = home.root / "other"
    other.mkdir()
    (other / "Note.md").write_text("# Note\n")
    assert cli("vault", "add", "w", str(other)).code == 0
    sub.read_until(has("index.ready", vault="w"), 10, "the new vault's index.ready")
    states = [e["state"] for e in sub.events if e["kind"] == "vault.health" and e["vault"] == "w"]
    assert states[:1] == ["indexing"] and "ready" in states


def test_removing_the_vault_ends_its_stream(home: Home, sub: Subscriber, vault: Path, cli: Any) -> None:
    sub.subscribe(vaults=["v"])
    preview = _json(cli, "vault", "remove", "v")
    assert cli("vault", "remove", "v", "--confirm", "--fingerprint", preview["fingerprint"]).code == 0
    sub.read_until(lambda _: sub.dropped is not None, 10, "subscription.dropped")
    assert sub.events[-1]["kind"] == "vault.removed"
    assert sub.dropped is not None and sub.dropped["reason"] == "vaults_removed"
    assert sub.dropped["clocks"] == {}


def test_unsubscribe_ends_the_stream_and_unknown_ids_and_vaults_are_refused(sub: Subscriber, vault: Path) -> None:
    sid = sub.subscribe(vaults=["v"])["subscription"]
    assert sub.call("unsubscribe", {"subscription": sid}) == {"subscription": sid, "ended": True}
    (vault / "After.md").write_text("# After\n")
    assert sub.read_for(0.5) == []
    missing = sub.request("unsubscribe", {"subscription": sid})
    assert missing["error"]["data"]["code"] == "NOT_FOUND"
    unknown = sub.request("subscribe", {"vaults": ["nope"]})
    assert unknown["error"]["data"]["code"] == "NOT_FOUND"
    stray = sub.request("subscribe", {"vaults": ["v"], "since": {"w": "0badc0de:1"}})
    assert stray["error"]["data"]["code"] == "INVALID_PARAMS" and "since" in stray["error"]["message"]
    bad = sub.request("subscribe", {"since": {"v": "yesterday"}})
    assert bad["error"]["data"]["code"] == "INVALID_PARAMS" and "$.params.since" in bad["error"]["message"]
    none = sub.request("subscribe", {"vaults": []})
    assert none["error"]["data"]["code"] == "INVALID_PARAMS" and "$.params.vaults" in none["error"]["message"]
    assert "result" in sub.request("subscribe", {"vaults": ["v"], "settle_ms": 10_000})
    over = sub.request("subscribe", {"vaults": ["v"], "settle_ms": 10_001})
    assert over["error"]["data"]["code"] == "INVALID_PARAMS" and "settle_ms" in over["error"]["message"]


def test_a_connection_holds_at_most_sixteen_subscriptions(sub: Subscriber, vault: Path) -> None:
    for _ in range(16):
        sub.subscribe(vaults=["v"], kinds=["note.created"])
    over = sub.request("subscribe", {"vaults": ["v"]})
    assert over["error"]["data"]["code"] == "LIMIT"
    (vault / "Many.md").write_text("# Many\n")
    sub.read_until(lambda ev: len(ev) == 16, 10, "one event per subscription")
    sub.read_for(0.3)
    assert len(sub.events) == 16 and sub.frames == 16


def test_the_mcp_channel_subscribes_but_never_hears_of_a_private_path(home: Home, daemon: Daemon, cli: Any) -> None:
    """Agents may follow the stream (the MCP shim relays note events as resource updates), but an
    event naming a path private to agents never reaches them; the rest of a person's methods
    stay refused on the channel."""
    root = home.root / "guarded"
    (root / "diary").mkdir(parents=True)
    assert cli("vault", "add", "g", str(root), "--private", "diary/**").code == 0
    agent = Subscriber(home.socket, channel="mcp")
    agent.subscribe(vaults=["g"], kinds=["note.created", "note.changed", "note.renamed"])
    (root / "diary" / "Secret.md").write_text("# Secret\n")
    (root / "Open.md").write_text("# Open\n")
    agent.read_until(has("note.created", path="Open.md"), 10, "the visible note")
    os.rename(root / "Open.md", root / "diary" / "Moved in.md")  # out of sight: its path now is private
    (root / "After.md").write_text("# After\n")
    agent.read_until(has("note.created", path="After.md"), 10, "the last visible note")
    agent.read_for(0.3)
    assert [(e["kind"], e["path"]) for e in agent.events] == [("note.created", "Open.md"), ("note.created", "After.md")]
    refused = agent.request("vault.remove", {"id": "g"})
    assert refused["error"]["data"]["code"] == "POLICY"
    agent.close()


def test_a_person_applying_an_agents_proposal_is_announced(home: Home, daemon: Daemon, cli: Any) -> None:
    root = home.root / "team"
    root.mkdir()
    (root / "Home.md").write_text("# Home\n")
    person = Subscriber(home.socket)
    person.call("vault.add", {"id": "team", "path": str(root), "agents": {"create": "propose"}})
    person.subscribe(vaults=["team"], kinds=["proposal.created", "proposal.decided", "operation.applied"])
    agent = Subscriber(home.socket, channel="mcp")
    receipt = agent.call("note.create", {"vault": "team", "path": "from-agent", "title": "From agent", "reason": "a test"})
    assert receipt["outcome"] == "proposed"
    pid = receipt["proposal"]
    person.read_until(has("proposal.created", id=pid), 10, "proposal.created")
    assert cli("proposals", "apply", pid, "--vault", "team").code == 0
    person.read_until(has("proposal.decided", id=pid, state="applied"), 10, "proposal.decided")
    created, applied, decided = person.events
    assert created["proposer"].startswith("mcp:") and created["targets"] == ["from-agent.md"]
    assert applied["proposal"] == pid and applied["op_id"] == decided["applied_op"]
    assert decided["decided_by"] == "cli:vaultctl"
    agent.close()
    person.close()


def test_a_vault_folder_lost_and_taken_back_restarts_its_clock(home: Home, sub: Subscriber, vault: Path, cli: Any) -> None:
    (old,) = sub.subscribe(vaults=["v"])["vaults"]
    away = home.root / "away"
    os.rename(vault, away)
    assert cli("status").code == 0  # every request checks the folder: it is gone
    sub.read_until(has("vault.health", state="missing"), 10, "the missing state")
    os.rename(away, vault)
    assert cli("status").code == 0  # and back: taken again, re-indexed
    sub.read_until(has("index.ready"), 20, "the new index")
    kinds = [e["kind"] for e in sub.events]
    fresh = kinds.index("fresh_instance")
    assert kinds[fresh + 1 :].count("vault.health") >= 1 and kinds[-1] in ("index.ready", "vault.health")
    before, after = sub.events[fresh - 1], sub.events[fresh]
    assert sequence(before)[0] == old["clock"].split(":")[0]
    assert sequence(after) == (sequence(after)[0], 1) and sequence(after)[0] != sequence(before)[0]
    again = Subscriber(home.socket)
    (clock,) = again.subscribe(vaults=["v"], since={"v": old["clock"]})["vaults"]
    assert clock["fresh_instance"], "a clock from before the folder was lost cannot be resumed"
    again.close()
