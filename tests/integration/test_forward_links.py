"""Forward links: a link to a note not written yet is written and reported in the open profile,
and refused in the typed profile or where the vault's ``dead_links`` setting says so; through the
real vaultctl and, for agents, the official MCP SDK client."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.support.agent import agent, ok

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home

NOTES = {"Home.md": "# Home\n\nThe start.\n", "Beta.md": "# Beta\n\nSee [[Home]].\n"}


def _vault(home: Home, cli: Any, *options: str) -> Path:
    root = home.root / "vault"
    root.mkdir()
    for rel, text in NOTES.items():
        (root / rel).write_text(text)
    added = cli("vault", "add", "v", str(root), *options, "--json")
    assert added.code == 0, added.err
    return root


def test_the_open_profile_writes_a_forward_link_and_reports_it(daemon: Daemon, home: Home, cli: Any) -> None:
    root = _vault(home, cli)
    done = cli("append", "Home", "--section", "Next", "--markdown", "[[Nonexistent note]]", "--json")
    assert done.code == 0, done.err
    receipt = done.json()
    assert receipt["outcome"] == "applied"
    [warning] = [w for w in receipt["warnings"] if w["code"] == "V03"]
    assert warning["severity"] == "warning" and "Nonexistent note" in warning["message"] and "forward link" in warning["message"]
    assert (root / "Home.md").read_text().endswith("## Next\n\n[[Nonexistent note]]\n")
    # The text output says it too, and the link is listed as dead until the note exists.
    shown = cli("append", "Home", "--section", "Next", "--markdown", "and [[Later]]")
    assert shown.code == 0 and "V03" in shown.out + shown.err and "Later" in shown.out + shown.err
    links = cli("links", "Home", "--json").json()
    assert sorted(d["target"] for d in links["dead"]) == ["Later", "Nonexistent note"]
    created = cli("new", "Nonexistent note", "--json")
    assert created.code == 0, created.err
    assert [d["target"] for d in cli("links", "Home", "--json").json()["dead"]] == ["Later"]


@pytest.mark.parametrize("options", [("--schema", "typed"), ("--dead-links", "refuse")])
def test_the_typed_profile_or_the_vault_setting_refuses_it(daemon: Daemon, home: Home, cli: Any, options: tuple[str, ...]) -> None:
    root = _vault(home, cli, *options)
    assert cli("vault", "list", "--json").json()["vaults"][0]["entry"]["schema"] == ("typed" if "typed" in options else "open")
    before = (root / "Home.md").read_bytes()
    refused = cli("append", "Home", "--section", "Next", "--markdown", "[[Nonexistent note]]")
    assert refused.code == 1, refused.out + refused.err
    assert "error V03 (Home.md:7): link [[Nonexistent note]] would be missing" in refused.err
    assert (root / "Home.md").read_bytes() == before


def test_dead_links_warn_overrides_the_typed_default(daemon: Daemon, home: Home, cli: Any) -> None:
    root = _vault(home, cli, "--schema", "typed", "--dead-links", "warn")
    assert cli("vault", "list", "--json").json()["vaults"][0]["entry"]["dead_links"] == "warn"
    done = cli("append", "Home", "--section", "Next", "--markdown", "[[Not Yet]]", "--json")
    assert done.code == 0, done.out + done.err
    assert any(w["code"] == "V03" and w["severity"] == "warning" for w in done.json()["warnings"])
    assert "[[Not Yet]]" in (root / "Home.md").read_text()


async def test_an_agent_gets_the_forward_link_as_a_warning(daemon: Daemon, home: Home, cli: Any) -> None:
    root = _vault(home, cli)
    async with agent(home) as client:
        receipt = ok(await client.call_tool("note_append", {"target": "Beta", "section": "Later", "markdown": "- [[Gamma to come]]"}))
    assert receipt["outcome"] == "applied"
    assert [w["code"] for w in receipt["warnings"]] == ["V03"]
    assert "[[Gamma to come]]" in (root / "Beta.md").read_text()
