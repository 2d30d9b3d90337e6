"""Session notes: a vault that opts in (``vault set --session-notes FOLDER``) gets each ended agent
session's record as a note, written by vaultd through the write path, screened and bounded like the
record, never over a person's edit, and closed to agents; driven by an agent through the official
MCP SDK client and a person on vaultctl."""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING, Any

import pytest

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.methods.common import Channel
from protocol.methods.reads import READ, ReadParams
from protocol.methods.writes import CREATE, CreateParams
from tests.support.agent import agent, ok
from tests.support.harness import register, snapshot
from tests.support.mcp_results import tool_error
from tests.support.typed import refused
from tests.support.wait import wait_until
from vaultd.views.render import is_ours
from vaultd.views.session_note import MAX_NOTE_ITEMS

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home
    from tests.support.typed import TypedClients

NOTES = {
    "Alpha.md": "# Alpha\n\nFirst note.\n",
    "Beta.md": "# Beta\n\nSecond note.\n",
    "Secret/Plan.md": "# Plan\n\nNot for agents.\n",
}
NOTE = "Sessions/Session s-notes.md"


def _set(cli: Any, *args: str) -> None:
    preview = cli("vault", "set", "v", *args, "--json")
    assert preview.code == 0, preview.err
    done = cli("vault", "set", "v", *args, "--confirm", "--fingerprint", preview.json()["fingerprint"], "--json")
    assert done.code == 0, done.err


@pytest.fixture
def vault(daemon: Daemon, home: Home) -> Path:
    root = home.root / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    register(home, root, private_paths=["Secret/**"])
    return root


def _named(root: Path, part: str) -> list[Path]:
    return [p for p in root.rglob("*.md") if part in p.name]


def _ended(cli: Any, session: str) -> None:
    wait_until(lambda: cli("sessions", session, "--json").json()["ended"] is not None, 60, f"session {session} ends")


async def test_off_by_default_no_session_note_is_written(vault: Path, home: Home, cli: Any) -> None:
    async with agent(home, {"VAULTD_SESSION": "s-off"}) as client:
        ok(await client.call_tool("note_read", {"target": "Alpha"}))
    _ended(cli, "s-off")
    assert cli("vault", "list", "--json").json()["vaults"][0]["entry"].get("session_notes") is None
    ops = cli("ops", "--vault", "v", "--json").json()["ops"]
    assert not any(o["op"] == "session.note" for o in ops)
    assert not _named(vault, "s-off"), "no note of the session in the vault"


async def test_an_ended_session_gets_its_note_which_agents_may_not_edit_and_a_persons_edit_is_kept(
    vault: Path, home: Home, cli: Any
) -> None:
    shown = cli("vault", "set", "v", "--session-notes", "Sessions")
    assert "session_notes" in shown.out and "LOOSENS" in shown.out, shown.out
    _set(cli, "--session-notes", "Sessions")

    async with agent(home, {"VAULTD_SESSION": "s-notes"}) as client:
        ok(await client.call_tool("note_read", {"target": "Alpha"}))
        appended = ok(await client.call_tool("note_append", {"target": "Beta", "section": "Log", "markdown": "a line"}))
        assert not (vault / NOTE).exists(), "written when the session ends, not before"
    _ended(cli, "s-notes")
    wait_until(lambda: (vault / NOTE).exists(), 60, "the session's note is written")
    data = (vault / NOTE).read_bytes()
    text = data.decode()
    assert is_ours(data), "marked as generated"
    assert "# Session s-notes" in text and "[[Alpha]]" in text and "[[Beta]]" in text, text
    assert f"`{appended['op_id']}` note.append" in text, text
    assert "Plan" not in text and "Secret" not in text
    ops = cli("ops", "--vault", "v", "--json").json()["ops"]
    written = [o for o in ops if o["op"] == "session.note"]
    assert written, "written through the write path, as an operation"

    # Agents may not edit it, nor write anything else into the folder.
    async with agent(home, {"VAULTD_SESSION": "s-other"}) as client:
        read = ok(await client.call_tool("note_read", {"target": "Sessions/Session s-notes"}))
        assert "s-notes" in str(read)
        refused = tool_error(
            await client.call_tool("note_append", {"target": "Sessions/Session s-notes", "section": "Mine", "markdown": "mine now"})
        )
        assert refused["issues"] and refused["issues"][0]["code"] == "P06", refused
    assert (vault / NOTE).read_bytes() == data

    # Undoable like any operation: the person undoes it, and the note is gone.
    undone = cli("undo", written[-1]["op_id"], "--vault", "v", "--json")
    assert undone.code == 0, undone.err
    assert not (vault / NOTE).exists()

    # The session resumes and ends again: its note is written anew, then a person edits it, and
    # the next end leaves the edit alone (lint reports it).
    async with agent(home, {"VAULTD_SESSION": "s-notes"}) as client:
        ok(await client.call_tool("note_read", {"target": "Beta"}))
    _ended(cli, "s-notes")
    wait_until(lambda: (vault / NOTE).exists(), 60, "the session's note is written again")
    assert is_ours((vault / NOTE).read_bytes())
    assert _l21(cli) == []
    edited = (vault / NOTE).read_text() + "\nmy own words\n"
    (vault / NOTE).write_text(edited)
    assert _l21(cli) == [NOTE]
    async with agent(home, {"VAULTD_SESSION": "s-notes"}) as client:
        ok(await client.call_tool("note_read", {"target": "Alpha"}))
    _ended(cli, "s-notes")
    # A later session's note is written after this end was handled (one writer, in turn).
    async with agent(home, {"VAULTD_SESSION": "s-later"}) as client:
        ok(await client.call_tool("note_read", {"target": "Alpha"}))
    _ended(cli, "s-later")
    wait_until(lambda: (vault / "Sessions/Session s-later.md").exists(), 60, "the later session's note is written")
    assert (vault / NOTE).read_text() == edited, "a person's edit is never overwritten"


def _l21(cli: Any) -> list[str]:
    linted = cli("lint", "--vault", "v", "--code", "L21", "--json")
    assert linted.out, linted.err
    return [f["note"] for f in linted.json()["findings"] if f["code"] == "L21"]


async def test_a_session_note_is_bounded(vault: Path, home: Home, cli: Any) -> None:
    _set(cli, "--session-notes", "Sessions")
    for n in range(MAX_NOTE_ITEMS + 1):
        (vault / f"N{n:03d}.md").write_text(f"# N{n}\n")
    async with agent(home, {"VAULTD_SESSION": "s-many"}) as client:
        for n in range(MAX_NOTE_ITEMS + 1):
            ok(await client.call_tool("note_read", {"target": f"N{n:03d}"}))
    _ended(cli, "s-many")
    path = vault / "Sessions/Session s-many.md"
    wait_until(path.exists, 60, "the session's note is written")
    text = path.read_text()
    assert "- and 1 earlier" in text and "[[N000]]" not in text and "[[N001]]" in text and f"[[N{MAX_NOTE_ITEMS:03d}]]" in text, text


def test_folders_closed_to_agents_are_closed_whatever_the_letter_case(
    vault: Path, home: Home, cli: Any, typed_clients: TypedClients
) -> None:
    """The session notes folder and the user-only and journal folders refuse an agent's path
    spelled with other letter case or Unicode form (the same folder on a case-insensitive disk
    or in a sync tool), as deny and private globs do, even before the folder exists."""
    _set(cli, "--session-notes", "Sessions", "--role", "user-only=Mine", "--role", "journal=Días")
    before = snapshot(vault)
    mcp = typed_clients.open(home, Channel.MCP, session="s-case")
    nfd = unicodedata.normalize("NFD", "días")
    for path in ("sessions/Session forged.md", "SESSIONS/x.md", "mine/x.md", "MINE/deep/x.md", f"{nfd}/x.md", "DÍAS/x.md"):
        with refused(ErrorCode.POLICY, IssueCode.P06):
            mcp.call(CREATE, CreateParams(vault="v", path=path, body="agent text\n"))
    assert snapshot(vault) == before


def test_a_client_name_with_line_breaks_stays_on_its_line(vault: Path, home: Home, cli: Any, typed_clients: TypedClients) -> None:
    """What a client calls itself in hello goes into notes vaultd writes on the person's channel
    (a session's note, the waiting view's proposer): it stays one line there, and writes nothing
    of its own into them."""
    _set(cli, "--session-notes", "Sessions", "--views", "waiting")
    preview = cli("vault", "policy", "v", "create=propose", "--json")
    assert preview.code == 0, preview.err
    assert cli("vault", "policy", "v", "create=propose", "--confirm", "--fingerprint", preview.json()["fingerprint"]).code == 0
    hostile = "x\n\n# Injected\n- [[Injected link]]\r\n---"
    client = typed_clients.open(home, Channel.MCP, client_name=hostile, session="s-inj")
    client.call(READ, ReadParams(vault="v", target="Alpha"))
    client.call(CREATE, CreateParams(vault="v", path="Proposed.md", body="from the agent\n"))
    client.close()
    _ended(cli, "s-inj")
    note = vault / "Sessions/Session s-inj.md"
    waiting = vault / "Waiting for you.md"
    wait_until(lambda: note.exists(), 60, "the session's note is written")
    wait_until(lambda: waiting.exists() and "note.create" in waiting.read_text(), 60, "the waiting view lists the proposal")
    for text in (note.read_text(), waiting.read_text()):
        lines = text.splitlines()
        assert "# Injected" not in lines and "- [[Injected link]]" not in lines and "\r" not in text, text
        assert sum(1 for ln in lines if ln.strip() == "---") == 2, "only the view's own frontmatter fences"


async def test_a_session_note_goes_into_the_folder_as_the_disk_spells_it(home: Home, daemon: Daemon, cli: Any) -> None:
    """The session notes folder named Sessions when the disk holds sessions/: the note goes into
    the folder that is there, never a twin of it (refused, it wrote no note at all)."""
    root = home.root / "vault"
    (root / "sessions").mkdir(parents=True)
    (root / "sessions/Mine.md").write_text("# Mine\n")
    (root / "Alpha.md").write_text("# Alpha\n")
    assert cli("vault", "add", "v", str(root), "--json").code == 0
    _set(cli, "--session-notes", "Sessions")
    async with agent(home, {"VAULTD_SESSION": "s-spelled"}) as client:
        ok(await client.call_tool("note_read", {"target": "Alpha"}))
    _ended(cli, "s-spelled")
    note = root / "sessions/Session s-spelled.md"
    wait_until(note.exists, 60, "the session's note is written")
    assert is_ours(note.read_bytes())
    assert sorted(p.name for p in root.iterdir() if p.name not in (".vaultd", "log.md")) == ["Alpha.md", "sessions"]
