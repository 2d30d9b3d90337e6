"""The duplicate-name guard: a create or a move to a name another note has, when links name that
note bare, warns with the count (open profile) or is refused (typed profile, V12); through the
real vaultctl and, for agents, the official MCP SDK client."""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING, Any

from tests.support.agent import agent, ok
from tests.support.harness import snapshot

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home

NOTES = {
    "people/Ada.md": "# Ada\n\n## Notes\n\nThe first programmer.\n",
    "Home.md": "# Home\n\n[[Ada]] and [[Ada#Notes|notes]] and [[people/Ada]]\n",
    "Other.md": "# Other\n\nSee [[Ada]].\n",
    "Beta.md": "# Beta\n\nNothing links here.\n",
    "diary/Secret.md": "# Secret\n\nPrivate.\n",
    "Pointer.md": "# Pointer\n\n[[Secret]]\n",
}


def _vault(home: Home, cli: Any, *options: str) -> Path:
    root = home.root / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    added = cli("vault", "add", "v", str(root), "--private", "diary/**", *options, "--json")
    assert added.code == 0, added.err
    return root


def test_a_create_that_shares_a_linked_name_warns_with_the_count(daemon: Daemon, home: Home, cli: Any) -> None:
    root = _vault(home, cli)
    done = cli("new", "team/Ada", "--json")
    assert done.code == 0, done.err
    [warning] = [w for w in done.json()["warnings"] if w["code"] == "V12"]
    assert warning["severity"] == "warning" and warning["path"] == "team/Ada.md"
    assert "3 links [[Ada]] in 2 notes" in warning["message"] and "people/Ada.md" in warning["message"]
    assert "turn ambiguous" in warning["message"]
    # What it warned of: the bare links are ambiguous now; the path-qualified one is not.
    statuses = [(o["target"], o["status"]) for o in cli("links", "Home", "--json").json()["out"]]
    assert statuses == [("Ada", "ambiguous"), ("Ada", "ambiguous"), ("people/Ada", "resolved")]
    text = cli("new", "x/Secret")  # a person sees every note, the private ones too
    shown = text.out + text.err
    assert text.code == 0 and "V12" in shown and "1 link [[Secret]] in 1 note" in shown and "diary/Secret.md" in shown
    assert (root / "x" / "Secret.md").exists()
    # No warning where no link is concerned.
    quiet = cli("new", "x/Beta", "--json")
    assert quiet.code == 0 and not [w for w in quiet.json()["warnings"] if w["code"] == "V12"]


def test_a_move_to_a_shared_name_warns_and_rewrites_the_links(daemon: Daemon, home: Home, cli: Any) -> None:
    root = _vault(home, cli)
    preview = cli("move", "Beta", "team/Ada")
    assert preview.code == 0, preview.err
    assert "V12" in preview.out + preview.err and "are rewritten with its folder path" in preview.out + preview.err
    confirm = next(line.strip() for line in preview.out.splitlines() if "--confirm" in line)
    done = cli(*shlex.split(confirm)[1:], "--json")
    assert done.code == 0, done.err
    assert [w["code"] for w in done.json()["warnings"]] == ["V12"]
    assert (root / "Home.md").read_text() == "# Home\n\n[[people/Ada]] and [[people/Ada#Notes|notes]] and [[people/Ada]]\n"
    assert (root / "Other.md").read_text() == "# Other\n\nSee [[people/Ada]].\n"


def test_the_typed_profile_refuses_the_name(daemon: Daemon, home: Home, cli: Any) -> None:
    root = _vault(home, cli, "--schema", "typed")
    before = snapshot(root)
    created = cli("new", "team/Ada", "--json")
    assert created.code == 1
    assert "error V12 (team/Ada.md): the name 'Ada' would make 3 links [[Ada]] in 2 notes ambiguous" in created.err
    moved = cli("move", "Beta", "team/Ada")
    assert moved.code == 1 and "V12" in moved.err
    assert snapshot(root) == before


async def test_an_agent_is_warned_without_being_told_a_private_name(daemon: Daemon, home: Home, cli: Any) -> None:
    root = _vault(home, cli)
    async with agent(home) as client:
        receipt = ok(await client.call_tool("note_create", {"path": "notes/Secret"}))
        visible = ok(await client.call_tool("note_create", {"path": "notes/Ada"}))
    [warning] = [w for w in receipt["warnings"] if w["code"] == "V12"]
    assert "another note" in warning["message"] and "diary" not in json.dumps(receipt)
    assert "1 link [[Secret]] in 1 note" in warning["message"]
    assert any(w["code"] == "V12" and "people/Ada.md" in w["message"] for w in visible["warnings"])
    assert (root / "notes" / "Secret.md").exists()
