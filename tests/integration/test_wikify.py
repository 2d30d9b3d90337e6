"""Wikify: an agent (the official MCP SDK client) asks for the links a note could have and proposes
them; a person (``vaultctl``) accepts some of them by number, and exactly those are written, in
the vault's link format; a note changed since makes the proposal stale, with nothing written."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from protocol.errors import ErrorCode
from protocol.methods.common import Channel
from protocol.methods.wikify import WIKIFY_ACCEPT, WIKIFY_SUGGEST, WikifyAcceptParams, WikifySuggestParams
from tests.support.agent import agent, ok
from tests.support.harness import Daemon, Home, snapshot
from tests.support.typed import refused

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.typed import TypedClient, TypedClients

ESSAY = (
    "---\ntitle: About alpha\n---\n"
    "# Alpha in a heading\n\n"
    "First we meet alpha in prose, then the first letter again, and beta gamma.\n\n"
    "Already linked: [[Beta Gamma]]. In code: `delta`. A URL: https://delta.example/delta\n\n"
    "```\ndelta in a fence\n```\n\n"
    "| delta | in a table |\n|---|---|\n\n"
    "A tag #delta, and at last Delta in prose. Essay names itself.\n"
)


def _json(cli: Any, *args: str) -> Any:
    result = cli(*args, "--json")
    assert result.code == 0, (args, result.out, result.err)
    return result.json()


def _vault(home: Home, cli: Any, markdown_links: bool = False) -> Path:
    root = home.root / "vault"
    root.mkdir()
    (root / "Alpha.md").write_text("---\naliases: [First Letter]\n---\n# Alpha\n")
    (root / "Beta Gamma.md").write_text("# Beta Gamma\n")
    (root / "Topics").mkdir()
    (root / "Topics/Delta.md").write_text("# Delta\n")
    (root / "Essay.md").write_text(ESSAY)
    (root / ".obsidian").mkdir()
    (root / ".obsidian/app.json").write_text(json.dumps({"useMarkdownLinks": markdown_links, "newLinkFormat": "shortest"}))
    assert cli("vault", "add", "v", str(root)).code == 0
    return root


@pytest.fixture
def vault(daemon: Daemon, home: Home, cli: Any) -> Path:
    return _vault(home, cli)


def test_suggestions_follow_obsidians_rules(vault: Path, typed: TypedClient) -> None:
    found = typed.call(WIKIFY_SUGGEST, WikifySuggestParams(vault="v", target="Essay"))
    assert [(s.number, s.text, s.target, s.link) for s in found.suggestions] == [
        (1, "alpha", "Alpha.md", "[[Alpha|alpha]]"),
        (2, "Delta", "Topics/Delta.md", "[[Delta]]"),
    ], "one link per note, its first mention in prose; never the heading, the frontmatter, an existing link, code, a URL, a table or a tag"
    assert found.sha and found.path == "Essay.md"
    assert (vault / "Essay.md").read_text() == ESSAY, "suggesting writes nothing"


async def test_an_agents_links_are_accepted_one_by_one_by_a_person(vault: Path, home: Home, cli: Any) -> None:
    async with agent(home) as client:
        suggested = ok(await client.call_tool("wikify_suggest", {"target": "Essay"}))
        assert len(suggested["suggestions"]) == 2
        proposed = ok(await client.call_tool("wikify_propose", {"target": "Essay", "reason": "link the essay"}))
        pid = proposed["proposal"]
        assert pid and [link["text"] for link in proposed["links"]] == ["alpha", "Delta"]
        shown = ok(await client.call_tool("proposal_show", {"id": pid}))
        assert [w["code"] for w in shown["warnings"]] == ["G06", "G06"]
        tools = {t.name for t in (await client.list_tools()).tools}
        assert "wikify_accept" not in tools and "proposal_apply" not in tools
    assert (vault / "Essay.md").read_text() == ESSAY, "nothing is written until a person accepts"
    accepted = _json(cli, "wikify", "accept", pid, "2")
    assert accepted["accepted"] == [2]
    assert (vault / "Essay.md").read_text() == ESSAY.replace("at last Delta in prose", "at last [[Delta]] in prose")
    assert _json(cli, "proposals", "show", pid)["state"] == "applied"
    assert cli("wikify", "accept", pid, "1").code != 0, "an applied proposal is decided"
    assert _json(cli, "undo", accepted["op_id"])["outcome"] == "applied"
    assert (vault / "Essay.md").read_text() == ESSAY


def test_a_note_changed_since_makes_the_links_stale(vault: Path, cli: Any) -> None:
    proposed = _json(cli, "wikify", "propose", "Essay", "--choose", "1")
    assert [link["text"] for link in proposed["links"]] == ["alpha"]
    (vault / "Essay.md").write_text(ESSAY + "A person's line.\n")
    before = snapshot(vault)
    result = cli("wikify", "accept", proposed["proposal"], "1")
    assert result.code != 0 and "changed" in result.err, (result.out, result.err)
    assert snapshot(vault) == before
    assert _json(cli, "proposals", "show", proposed["proposal"])["state"] == "stale"


def test_a_link_number_past_the_proposal_and_an_agent_accepting_are_refused(
    vault: Path, home: Home, cli: Any, typed_clients: TypedClients
) -> None:
    pid = _json(cli, "wikify", "propose", "Essay")["proposal"]
    person = typed_clients.open(home)
    with refused(ErrorCode.INVALID_PARAMS):
        person.call(WIKIFY_ACCEPT, WikifyAcceptParams(vault="v", id=pid, links=[3]))
    agent_client = typed_clients.open(home, Channel.MCP, session="s1")
    with refused(ErrorCode.POLICY):
        agent_client.call(WIKIFY_ACCEPT, WikifyAcceptParams(vault="v", id=pid, links=[1]))
    assert (vault / "Essay.md").read_text() == ESSAY
    both = person.call(WIKIFY_ACCEPT, WikifyAcceptParams(vault="v", id=pid, links=[1, 2]))
    assert both.accepted == [1, 2]
    assert "[[Alpha|alpha]] in prose" in (vault / "Essay.md").read_text()


def test_links_take_the_vaults_markdown_format(home: Home, daemon: Daemon, cli: Any) -> None:
    _vault(home, cli, markdown_links=True)
    found = _json(cli, "wikify", "suggest", "Essay")
    assert [s["link"] for s in found["suggestions"]] == ["[alpha](Alpha.md)", "[Delta](Delta.md)"], (
        "shortest: the name alone when it is unique"
    )
