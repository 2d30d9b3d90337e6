"""Agent memory brought into a vault: Claude Code's memory folders (``MEMORY.md`` and the project
memory files beside it) and any Markdown list a person names, listed as entries with stable ids
and each imported as a reviewed note with its provenance. A rerun never makes a second note; a
note of the same name or title is offered instead; an agent's import is a proposal; the memory
files are never changed and are read within their bounds. Through the real vaultctl, vaultctl's
socket client and the official MCP SDK client."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import pytest
from mcp.shared.exceptions import MCPError

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.methods.common import Channel
from protocol.methods.memory import (
    MAX_CANDIDATES,
    MAX_MEMORY_ENTRIES,
    MAX_MEMORY_FILE_BYTES,
    MEMORY_CANDIDATES,
    MEMORY_IMPORT,
    MemoryCandidatesParams,
    MemoryImportParams,
)
from protocol.methods.writes import UNDO, UndoParams
from tests.support.agent import agent, ok
from tests.support.harness import snapshot
from tests.support.typed import refused, two_step

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home
    from tests.support.typed import TypedClient, TypedClients

INDEX = (
    "# Memory\n\n"
    "- [Run the tests first](feedback_tests.md) — before any commit\n"
    "- The staging server is rebuilt every Monday: deploys wait until Tuesday.\n"
    "  Ask in #ops when in doubt.\n"
    "- api token is ghp_abcdefghijklmnopqrstuvwxyz0123456789\n"
)
FEEDBACK = (
    "---\nname: Run the tests first\ndescription: before any commit\ntype: feedback\n---\n\nAlways run `make test` before committing.\n"
)


def _memory(home: Home) -> Path:
    folder = home.root / "user" / ".claude" / "projects" / "-work-app" / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text(INDEX)
    (folder / "feedback_tests.md").write_text(FEEDBACK)
    return folder


def _vault(home: Home, cli: Any, notes: dict[str, str] | None = None) -> Path:
    root = home.root / "vault"
    root.mkdir()
    for rel, text in (notes or {"Home.md": "# Home\n"}).items():
        (root / rel).write_text(text)
    assert cli("vault", "add", "v", str(root)).code == 0
    return root


def test_claude_memory_is_imported_once_as_notes_with_provenance(home: Home, daemon: Daemon, cli: Any, typed: TypedClient) -> None:
    memory = _memory(home)
    root = _vault(home, cli)
    before = snapshot(memory)
    listed = cli("memory", "--json")
    assert listed.code == 0, listed.err
    found = listed.json()
    assert [(e["title"], e["kind"], e["origin"]) for e in found["entries"]] == [
        ("The staging server is rebuilt every Monday", "claude-index", "~/.claude/projects/-work-app/memory/MEMORY.md"),
        ("Run the tests first", "claude-memory", "~/.claude/projects/-work-app/memory/feedback_tests.md"),
    ]
    assert found["skipped"] == ["1 entries look like they hold a secret; left out"] and "ghp_" not in listed.out
    staging, tests = (e["id"] for e in found["entries"])
    assert cli("memory", "--json").json()["entries"][0]["id"] == staging  # the id is the entry's, every run

    preview = cli("memory", "import", tests, "--folder", "Learned")
    assert preview.code == 0, preview.err
    assert f"vaultctl memory import {tests} --folder Learned --confirm --fingerprint" in preview.out
    assert not (root / "Learned").exists()
    fingerprint = cli("memory", "import", tests, "--folder", "Learned", "--json").json()["fingerprint"]
    done = cli("memory", "import", tests, "--folder", "Learned", "--confirm", "--fingerprint", fingerprint, "--json")
    assert done.code == 0, done.err
    today = dt.date.today().isoformat()
    assert (root / "Learned/Run the tests first.md").read_text() == (
        f"---\ntitle: Run the tests first\ncreated: {today}\nimported_from: {tests}\nimported_at: {today}\nupdated: {today}\n---\n"
        "# Run the tests first\n\nAlways run `make test` before committing.\n"
    )
    again = cli("memory", "--json").json()
    assert [e["id"] for e in again["entries"]] == [staging] and again["imported"] == 1

    with refused(ErrorCode.VALIDATION, IssueCode.V08) as refusal:  # a rerun names the note, never makes a second
        typed.call(MEMORY_IMPORT, MemoryImportParams(vault="v", entry=tests, folder="Elsewhere"))
    assert refusal.data.issues[0].path == "Learned/Run the tests first.md"
    _, staged = two_step(typed, MEMORY_IMPORT, MemoryImportParams(vault="v", entry=staging))
    note = (root / "The staging server is rebuilt every Monday.md").read_text()
    assert note.endswith("The staging server is rebuilt every Monday: deploys wait until Tuesday.\nAsk in #ops when in doubt.\n")
    assert typed.call(MEMORY_CANDIDATES, MemoryCandidatesParams(vault="v")).entries == []
    assert staged.op_id is not None
    typed.call(UNDO, UndoParams(vault="v", op_id=staged.op_id))
    assert [e.id for e in typed.call(MEMORY_CANDIDATES, MemoryCandidatesParams(vault="v")).entries] == [staging]
    assert snapshot(memory) == before


def test_a_note_with_the_entrys_title_is_offered_to_link_to(home: Home, daemon: Daemon, cli: Any, typed: TypedClient) -> None:
    _memory(home)
    root = _vault(home, cli, {"Testing.md": "---\ntitle: Run the tests first\n---\n# Testing\n"})
    entry = next(e for e in typed.call(MEMORY_CANDIDATES, MemoryCandidatesParams(vault="v")).entries if e.kind == "claude-memory")
    with refused(ErrorCode.VALIDATION, IssueCode.V08) as refusal:
        typed.call(MEMORY_IMPORT, MemoryImportParams(vault="v", entry=entry.id))
    assert [i.path for i in refusal.data.issues] == ["Testing.md"] and "link_to" in refusal.data.message
    two_step(typed, MEMORY_IMPORT, MemoryImportParams(vault="v", entry=entry.id, link_to="Testing.md"))
    text = (root / "Testing.md").read_text()
    assert f"imported_from:\n  - {entry.id}\n" in text and text.endswith("# Testing\n")
    assert entry.id not in [e.id for e in typed.call(MEMORY_CANDIDATES, MemoryCandidatesParams(vault="v")).entries]


def test_a_named_list_is_read_within_its_bounds(home: Home, daemon: Daemon, cli: Any) -> None:
    _vault(home, cli)
    notes = home.root / "notes"
    notes.mkdir()
    (notes / "list.md").write_text("Intro paragraph.\n\n1. First lesson learned\n2. Second one\n   with more\n\n- Third\n")
    filler = "- " + "y" * (MAX_MEMORY_FILE_BYTES - 3) + "\n"
    (notes / "at-bound.md").write_text(filler)
    (notes / "past-bound.md").write_text(filler + "z")
    one = cli("memory", "candidates", "--from", str(notes / "list.md"), "--json").json()
    assert [e["title"] for e in one["entries"]] == ["First lesson learned", "Second one", "Third"]
    assert one["entries"][1]["excerpt"] == "Second one with more"
    folder = cli("memory", "candidates", "--from", str(notes), "--json").json()
    assert len(folder["entries"]) == 4 and folder["skipped"] == [f"{notes / 'past-bound.md'}: over 256 KiB"]
    many = home.root / "many"
    many.mkdir()
    (many / "at.md").write_text("".join(f"- lesson {n}\n" for n in range(MAX_MEMORY_ENTRIES)))
    at = cli("memory", "candidates", "--from", str(many / "at.md"), "--limit", str(MAX_CANDIDATES), "--json").json()
    assert (at["total"], len(at["entries"]), at["truncated"]) == (MAX_MEMORY_ENTRIES, MAX_CANDIDATES, False)
    (many / "past.md").write_text("".join(f"- lesson {n}\n" for n in range(MAX_MEMORY_ENTRIES + 1)))
    past = cli("memory", "candidates", "--from", str(many / "past.md"), "--json").json()
    assert (past["total"], past["truncated"]) == (MAX_MEMORY_ENTRIES, True)
    assert cli("memory", "candidates", "--from", str(notes), "--limit", str(MAX_CANDIDATES + 1)).code == 2
    assert cli("memory", "candidates", "--from", "relative/path").code == 2
    assert cli("memory", "candidates", "--from", str(notes / "none.md")).code == 1


async def test_an_agents_import_is_a_proposal_from_its_own_memory(home: Home, daemon: Daemon, cli: Any) -> None:
    _memory(home)
    root = _vault(home, cli)
    before = snapshot(root)
    async with agent(home) as client:
        found = ok(await client.call_tool("memory_candidates", {"vault": "v"}))
        entry = found["entries"][0]["id"]
        preview = ok(await client.call_tool("memory_import", {"vault": "v", "entry": entry}))
        assert preview["outcome"] == "preview", preview
        held = ok(
            await client.call_tool("memory_import", {"vault": "v", "entry": entry, "confirm": True, "fingerprint": preview["fingerprint"]})
        )
        assert held["outcome"] == "proposed", held
    assert snapshot(root) == before
    pending = cli("proposals", "--json")
    assert pending.code == 0 and "memory.import" in pending.out
    approved = cli("proposals", "apply", held["proposal"])
    assert approved.code == 0, approved.err
    assert f"imported_from: {entry}\n" in (root / f"{found['entries'][0]['title']}.md").read_text()


async def test_an_agent_is_offered_no_memory_path_and_one_it_sends_is_an_unknown_argument(
    home: Home, daemon: Daemon, cli: Any, typed_clients: TypedClients
) -> None:
    """A memory path is a person's argument: the tools do not offer it, the shim refuses it as any
    argument it does not offer, and the daemon refuses it on the agents' channel all the same."""
    _memory(home)
    _vault(home, cli)
    elsewhere = str(home.root / "user" / ".ssh")
    async with agent(home) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        for name in ("memory_candidates", "memory_import"):
            assert "path" not in listed[name].input_schema["properties"], listed[name].input_schema
        for name, arguments in (
            ("memory_candidates", {"vault": "v", "path": elsewhere}),
            ("memory_import", {"vault": "v", "entry": "mem-0123456789abcdef", "path": elsewhere}),
        ):
            with pytest.raises(MCPError) as caught:
                await client.call_tool(name, arguments)
            assert caught.value.error.code == -32602, caught.value.error
            assert "unknown field `path`" in caught.value.error.message, caught.value.error.message
        assert ok(await client.call_tool("memory_candidates", {"vault": "v"}))["entries"], "its own memory is still read"
    direct = typed_clients.open(home, Channel.MCP)
    with refused(ErrorCode.POLICY):
        direct.call(MEMORY_CANDIDATES, MemoryCandidatesParams(vault="v", path=elsewhere))
    assert cli("memory", "--from", str(home.root / "user" / ".claude" / "projects" / "-work-app" / "memory"), "--json").code == 0
