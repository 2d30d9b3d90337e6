"""The search language end to end: phrases, OR, NOT, groups, tag: and path: filters, tag-only
searches, "did you mean", exit 1 when nothing matches, and highlights that neither mimic the
note's own ``**`` nor split a link; through the real vaultctl and the official MCP SDK client."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.agent import agent, ok
from tests.support.harness import registered_vault

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home

NOTES = {
    "projects/alpha/Plan.md": "---\ntags: [project]\n---\n# Plan\n\nThe **bold** heron plan links [[Heron Notes]]; the quick brown fox.\n",
    "projects/beta/Beta.md": "# Beta\n\nA kestrel and a heron. #project/beta\n",
    "notes/Heron Notes.md": "# Heron Notes\n\nHerons wade; a brown quick fox, the other way round.\n",
    "notes/Draft.md": "---\ntags: [draft]\n---\n# Draft\n\nheron draft\n",
    "daily/2024-05-01.md": "# Day\n\nNothing of note. #journal\n",
    "diary/Secret.md": "# Secret\n\nzebrafish secrets\n",
}
MATCH_ON, MATCH_OFF = "\x1b[1;31m", "\x1b[0m"


@pytest.fixture
def vault(daemon: Daemon, home: Home) -> Path:
    return registered_vault(home, NOTES, private_paths=["diary/**"])


def _paths(cli: Any, *args: str) -> list[str]:
    done = cli("search", *args, "--json")
    assert done.code == 0, (args, done.err)
    return sorted(h["path"] for h in done.json()["hits"])


def test_phrases_or_not_groups_and_filters(vault: Path, cli: Any) -> None:
    assert _paths(cli, '"quick brown fox"') == ["projects/alpha/Plan.md"]
    assert _paths(cli, "quick brown fox") == ["notes/Heron Notes.md", "projects/alpha/Plan.md"]
    assert _paths(cli, "kestrel OR wade") == ["notes/Heron Notes.md", "projects/beta/Beta.md"]
    assert _paths(cli, "heron -draft") == ["notes/Heron Notes.md", "projects/alpha/Plan.md", "projects/beta/Beta.md"]
    assert _paths(cli, "heron NOT tag:#draft -(kestrel OR wade)") == ["projects/alpha/Plan.md"]
    assert _paths(cli, "(kestrel OR plan) heron") == ["projects/alpha/Plan.md", "projects/beta/Beta.md"]
    # a tag, or a folder, alone; a nested tag counts for its parent
    assert _paths(cli, "tag:#project") == ["projects/alpha/Plan.md", "projects/beta/Beta.md"]
    assert _paths(cli, "--tag", "project") == ["projects/alpha/Plan.md", "projects/beta/Beta.md"]
    assert _paths(cli, "path:projects/") == ["projects/alpha/Plan.md", "projects/beta/Beta.md"]
    assert _paths(cli, "path:projects/alpha") == ["projects/alpha/Plan.md"]
    assert _paths(cli, "heron path:notes/", "--tag", "draft") == ["notes/Draft.md"]
    found = cli("search", "--tag", "project", "--json").json()["hits"]
    assert all(h["score"] == 0.0 for h in found)  # nothing to rank by: by path


def test_nothing_found_exits_1_and_says_what_might_have_been_meant(vault: Path, cli: Any) -> None:
    missed = cli("search", "herno")
    assert missed.code == 1 and missed.out == ""
    assert missed.err == "no notes match; did you mean: vaultctl search heron\n"
    as_json = cli("search", "herno plan", "--json")
    assert as_json.code == 1 and as_json.json() == {"hits": [], "did_you_mean": "heron plan", "left_out": 0, "cursor": None}
    tag_typo = cli("search", "tag:#projcet", "--json")
    assert tag_typo.code == 1 and tag_typo.json()["did_you_mean"] == "tag:#project"
    nothing_near = cli("search", "qqqqqq", "--json")
    assert nothing_near.code == 1 and nothing_near.json() == {"hits": [], "did_you_mean": None, "left_out": 0, "cursor": None}
    assert cli("search", "--tag", "nope").code == 1
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    secret = cli("search", f"{token} herno", "--json")  # a correction would echo the query: never a secret
    assert secret.code == 1 and secret.json()["did_you_mean"] is None and token not in secret.out + secret.err
    usage = cli("search")
    assert usage.code == 2 and "give words to search for, or a filter" in usage.err


def test_highlights_are_colour_not_stars_and_cover_whole_links(vault: Path, cli: Any) -> None:
    coloured = cli("search", "heron", "--tag", "project", "--color", "always")
    assert coloured.code == 0, coloured.err
    block = coloured.out.split("\n\n")
    line = next(b for b in block if "Plan.md" in b.splitlines()[0])  # a hit: its path, then its snippet
    assert "The **bold** " + MATCH_ON + "heron" + MATCH_OFF in line  # the note's own ** stays, ours is colour
    plain = cli("search", "heron", "--tag", "project")  # not a terminal: no marks of ours at all
    assert "\x1b" not in plain.out and "The **bold** heron plan" in plain.out
    linked = cli("search", "notes", "--tag", "project", "--color", "always")
    assert MATCH_ON + "[[Heron Notes]]" + MATCH_OFF in linked.out
    hit = cli("search", "notes", "--tag", "project", "--json").json()["hits"][0]
    assert "**[[Heron Notes]]**" in hit["snippet"] and "[[**" not in hit["snippet"]
    assert [hit["excerpt"][a:b] for a, b in hit["highlights"]] == ["[[Heron Notes]]"]


async def test_an_agent_uses_the_syntax_and_is_never_pointed_at_private_words(vault: Path, home: Home, cli: Any) -> None:
    async with agent(home) as client:
        found = ok(await client.call_tool("note_search", {"query": "tag:#project -kestrel"}))
        tagged = ok(await client.call_tool("note_search", {"tag": "project"}))
        typo = ok(await client.call_tool("note_search", {"query": "herno"}))
        private = ok(await client.call_tool("note_search", {"query": "zebrafsh"}))
    assert [h["path"] for h in found["hits"]] == ["projects/alpha/Plan.md"]
    assert sorted(h["path"] for h in tagged["hits"]) == ["projects/alpha/Plan.md", "projects/beta/Beta.md"]
    assert typo["hits"] == [] and typo["did_you_mean"] == "heron"
    assert private["hits"] == [] and private.get("did_you_mean") is None and "zebrafish" not in json.dumps(private)
    # a person sees the private note, so the correction is offered to them
    person = cli("search", "zebrafsh", "--json")
    assert person.code == 1 and person.json()["did_you_mean"] == "zebrafish"
