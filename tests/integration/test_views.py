"""Generated views: kept current by vaultd through the write path, marked, and never written over a
person's edit; driven by an agent through the official MCP SDK client and a person on vaultctl."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.agent import agent, ok
from tests.support.harness import register
from tests.support.wait import wait_until
from vaultd.views.render import is_ours

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home

NOTES = {
    "Alpha.md": "# Alpha\n\nFirst note.\n",
    "Gamma.md": "# Gamma\n\nA note nothing links to.\n",
    "Topics/Travel.md": "# Travel\n",
    "Topics/Rome.md": '---\nup: "[[Travel]]"\n---\n# Rome\n',
    "Topics/Forum.md": '---\nup: "[[Rome]]"\n---\n# Forum\n',
    "Secret/Plan.md": '---\nup: "[[Travel]]"\n---\n# Plan\n',
}
WAITING = "Waiting for you.md"


@pytest.fixture
def vault(daemon: Daemon, home: Home, cli: Any) -> Path:
    root = home.root / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    register(home, root, private_paths=["Secret/**"])
    preview = cli("vault", "set", "v", "--views", "home,waiting,topics", "--json")
    assert preview.code == 0, preview.err
    done = cli("vault", "set", "v", "--views", "home,waiting,topics", "--confirm", "--fingerprint", preview.json()["fingerprint"], "--json")
    assert done.code == 0, done.err
    return root


def _text(root: Path, rel: str) -> str:
    path = root / rel
    return path.read_text() if path.exists() else ""


async def test_views_follow_proposals_and_work_and_leave_a_persons_edit_alone(vault: Path, home: Home, cli: Any) -> None:
    wait_until(
        lambda: "nothing waits for you" in _text(vault, WAITING) and "# Home" in _text(vault, "Home.md") and _text(vault, "Topics.md"),
        60,
        "the views are generated",
    )
    # Home links the waiting view in the vault's link format once both exist (the next refresh).
    wait_until(lambda: "[[Waiting for you]]" in _text(vault, "Home.md"), 60, "Home links the waiting view")
    home_text = _text(vault, "Home.md")
    assert "`Topics/`: 3 notes" in home_text and "Secret" not in home_text and "[[Topics]]" in home_text
    assert is_ours((vault / WAITING).read_bytes())
    topics = _text(vault, "Topics.md")
    assert "- [[Travel]]\n  - [[Rome]]\n    - [[Forum]]\n" in topics, topics
    assert "Plan" not in topics, "a note private to agents is not in the navigator"

    async with agent(home, {"VAULTD_SESSION": "s-views"}) as client:
        preview = ok(await client.call_tool("note_delete", {"target": "Gamma"}))
        proposed = ok(await client.call_tool("note_delete", {"target": "Gamma", "confirm": True, "fingerprint": preview["fingerprint"]}))
        work = ok(await client.call_tool("work_start", {"what": "plan the trip", "notes": ["Topics/Travel.md", "Secret/Plan.md"]}))
        other = ok(await client.call_tool("work_finish", {"id": work["id"]}))
        assert other["state"] == "finished"
        work = ok(await client.call_tool("work_start", {"what": "file the notes", "notes": ["Alpha.md"]}))
    pid = proposed["proposal"]
    wait_until(lambda: pid in _text(vault, WAITING) and work["id"] in _text(vault, WAITING), 60, "the proposal and the work are listed")
    waiting = _text(vault, WAITING)
    assert "[[Gamma]]" in waiting and "[[Alpha]]" in waiting, waiting
    assert "plan the trip" not in waiting, "finished work is not waiting; and work naming a private note is never listed"
    assert is_ours((vault / WAITING).read_bytes())
    ops = cli("ops", "--vault", "v", "--json").json()["ops"]
    assert any(o["op"] == "view.refresh" for o in ops), "written through the write path, as an operation"

    # The person edits the view: vaultd leaves it alone from then on, and says so.
    edited = _text(vault, WAITING) + "\nmy own notes\n"
    (vault / WAITING).write_text(edited)
    rejected = cli("proposals", "reject", pid, "--vault", "v", "--note", "keep it")
    assert rejected.code == 0, rejected.err
    refreshed = cli("views", "--vault", "v", "--json")
    assert refreshed.code == 0, refreshed.err
    assert refreshed.json()["detail"]["edited"] == [WAITING]
    assert _text(vault, WAITING) == edited
    status = cli("status")
    assert f"view {WAITING} in v was edited by hand" in status.out, status.out

    # Deleting the edited view hands it back to vaultd.
    (vault / WAITING).unlink()
    wait_until(lambda: is_ours((vault / WAITING).read_bytes()) if (vault / WAITING).exists() else False, 60, "the view is generated again")
    assert pid not in _text(vault, WAITING), "the rejected proposal no longer waits"
    assert json.loads(json.dumps(refreshed.json()))["op"] == "view.refresh"


def _l21(cli: Any) -> list[str]:
    linted = cli("lint", "--vault", "v", "--code", "L21", "--json")
    assert linted.out, linted.err
    return [f["note"] for f in linted.json()["findings"] if f["code"] == "L21"]


def test_lint_reports_an_edited_view_until_it_is_handed_back(vault: Path, cli: Any) -> None:
    wait_until(lambda: "# Home" in _text(vault, "Home.md") and "# Topics" in _text(vault, "Topics.md"), 60, "the views are generated")
    assert _l21(cli) == [], "vaultd's own views are no finding"

    (vault / "Home.md").write_text(_text(vault, "Home.md") + "\nmy own line\n")
    assert _l21(cli) == ["Home.md"]
    lines = cli("lint", "--vault", "v", "--code", "L21").out
    assert "L21" in lines and "Home.md" in lines and "no longer refreshes it" in lines, lines

    # Handing it back: delete it, and vaultd writes its own again, which is no finding.
    (vault / "Home.md").unlink()
    wait_until(
        lambda: is_ours((vault / "Home.md").read_bytes()) if (vault / "Home.md").exists() else False, 60, "the view is generated again"
    )
    assert _l21(cli) == []


def test_a_persons_note_at_a_views_name_in_other_letter_case_is_left_alone_and_the_other_views_written(
    daemon: Daemon, home: Home, cli: Any
) -> None:
    """A view's name taken by a person's note in another letter case (the same file on a
    case-insensitive disk) is that person's: left alone and reported, never a twin, and it does
    not keep the other views from being written."""
    root = home.root / "vault"
    root.mkdir()
    (root / "home.md").write_text("# my own home\n")
    assert cli("vault", "add", "v", str(root), "--json").code == 0
    preview = cli("vault", "set", "v", "--views", "home,waiting", "--json")
    assert preview.code == 0, preview.err
    done = cli("vault", "set", "v", "--views", "home,waiting", "--confirm", "--fingerprint", preview.json()["fingerprint"], "--json")
    assert done.code == 0, done.err
    refreshed = cli("views", "--vault", "v", "--json")
    assert refreshed.code == 0, (refreshed.out, refreshed.err)
    assert refreshed.json()["detail"]["edited"] == ["Home.md"]
    assert is_ours((root / WAITING).read_bytes())
    assert sorted(p.name for p in root.iterdir() if p.name not in (".vaultd", "log.md")) == [WAITING, "home.md"]
    assert (root / "home.md").read_text() == "# my own home\n"
