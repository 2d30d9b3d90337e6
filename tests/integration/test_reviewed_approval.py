"""A person's approval applies exactly what they reviewed: the agent proposes through the official
MCP SDK client and ``vaultctl mcp``, the person applies with ``vaultctl``, and whatever changed in
between (even in a note the proposal does not write) makes the proposal stale, with nothing
written. An approved agent write stays the agent's in the operation log."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.agent import agent, ok
from tests.support.harness import Daemon, Home, register, snapshot

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

LINKING = 11  #: notes linking by the alias: one more than the default wide_files, so a fix is proposed


def _json(cli: Any, *args: str) -> Any:
    result = cli(*args, "--json")
    assert result.code == 0, (args, result.err)
    return result.json()


def _notes(root: Path) -> dict[str, bytes]:
    return {k: v for k, v in snapshot(root).items() if k != "log.md"}


@pytest.fixture
def vault(daemon: Daemon, home: Home) -> Path:
    root = home.root / "vault"
    root.mkdir()
    (root / "Target.md").write_text("---\naliases: [nick]\n---\n# Target\n")
    for i in range(LINKING):
        (root / f"N{i:02}.md").write_text(f"# N{i:02}\n\nSee [[nick]].\n")
    register(home, root)
    return root


async def test_an_approval_writes_only_what_the_person_reviewed(vault: Path, home: Home, cli: Any) -> None:
    async with agent(home) as client:
        preview = ok(await client.call_tool("lint_fix", {}))
        assert preview["outcome"] == "preview" and preview["detail"]["fixed"] == LINKING
        proposed = ok(await client.call_tool("lint_fix", {"confirm": True, "fingerprint": preview["fingerprint"]}))
        assert proposed["outcome"] == "proposed"
        pid = proposed["proposal"]
        shown = ok(await client.call_tool("proposal_show", {"id": pid}))
        assert len(shown["diffs"]) == LINKING and all("+See [[Target|nick]]." in d["diff"] for d in shown["diffs"])
        # What the person reviews: [[nick]] -> [[Target|nick]]. Then the agent moves the alias.
        ok(await client.call_tool("note_set_frontmatter", {"target": "Target", "unset": ["aliases"]}))
        ok(await client.call_tool("note_create", {"path": "Evil", "frontmatter": {"aliases": ["nick"]}, "body": "# Evil\n"}))
    before = _notes(vault)
    result = cli("proposals", "apply", pid)
    assert result.code != 0 and "stale" in result.err and "G03" in result.err, (result.out, result.err)
    assert _notes(vault) == before, "nothing was written"
    assert not any(b"Evil" in data for rel, data in before.items() if rel.startswith("N"))
    assert _json(cli, "proposals", "show", pid)["state"] == "stale"


async def test_a_proposal_applied_as_shown_keeps_the_agents_mark_and_id(vault: Path, home: Home, cli: Any) -> None:
    async with agent(home) as client:  # an agent's tools take no log override (the CLI's): the default line
        preview = ok(await client.call_tool("lint_fix", {}))
        proposed = ok(await client.call_tool("lint_fix", {"confirm": True, "fingerprint": preview["fingerprint"]}))
        pid = proposed["proposal"]
    applied = _json(cli, "proposals", "apply", pid)
    assert applied["outcome"] == "applied"
    assert all((vault / f"N{i:02}.md").read_text().endswith("See [[Target|nick]].\n") for i in range(LINKING))
    line = applied["log"]["line"]
    assert " LINT " in line and line.endswith(f"(vaultd:agent, proposal {pid})"), line
    assert (vault / "log.md").read_text().splitlines()[-1] == line


@pytest.fixture
def west(home: Home) -> Iterator[Home]:
    """The daemon's clock twelve hours behind UTC; the test restarts it fourteen hours ahead, so
    the day a proposal is applied is never the day it was made."""
    home.env["TZ"] = "WEST+12"
    yield home


async def test_a_proposal_applied_another_day_stamps_the_day_it_showed(west: Home, cli: Any) -> None:
    home = west
    daemon = Daemon(home)
    try:
        root = home.root / "vault"
        root.mkdir()
        (root / "Alpha.md").write_text("---\nupdated: 2001-01-01\n---\n# Alpha\n")
        assert cli("vault", "add", "v", str(root), "--kind", "org").code == 0
        async with agent(home) as client:
            held = ok(await client.call_tool("note_append", {"target": "Alpha", "section": "Log", "markdown": "Agent line.\n"}))
            assert held["outcome"] == "proposed"
        shown = _json(cli, "proposals", "show", held["proposal"])
        stamped = re.search(r"^\+updated: (\d{4}-\d{2}-\d{2})$", shown["diffs"][0]["diff"], re.MULTILINE)
        assert stamped is not None, shown["diffs"][0]["diff"]
        day = stamped.group(1)
    finally:
        daemon.stop()
    home.env["TZ"] = "EAST-14"
    daemon = Daemon(home)
    try:
        applied = _json(cli, "proposals", "apply", held["proposal"])
        assert applied["outcome"] == "applied"
        text = (root / "Alpha.md").read_text()
        assert f"updated: {day}\n" in text and "Agent line." in text, text
        assert applied["changes"][0]["after_sha"] == shown["diffs"][0]["after_sha"], "the bytes reviewed"
        assert shown["day"] == day, "the proposal says which day its stamps record"
    finally:
        daemon.stop()
