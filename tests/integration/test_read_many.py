"""note.read_many: several notes in one call, each bounded, each failing alone; through the daemon's
own client and through the official MCP SDK client (the ``note_read_many`` tool)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from protocol.errors import ErrorCode
from protocol.methods.reads import MAX_READ_MANY, READ, READ_MANY, ReadManyParams, ReadParams
from tests.support.agent import agent, ok
from tests.support.harness import register
from tests.support.typed import TypedClient, refused

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home


@pytest.fixture
def vault(daemon: Daemon, home: Home) -> Path:
    root = home.root / "vault"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    (root / "Long.md").write_text("# Long\n\n" + "word " * 4000 + "\n")
    (root / "Short.md").write_text("---\ntype: note\n---\n# Short\n\nA short note.\n")
    (root / "a" / "Twin.md").write_text("# Twin a\n")
    (root / "b" / "Twin.md").write_text("# Twin b\n")
    (root / "diary").mkdir()
    (root / "diary" / "Secret.md").write_text("# Secret\n")
    register(home, root, private_paths=["diary/**"])
    return root


def test_each_note_is_read_as_note_read_reads_it_and_fails_alone(vault: Path, typed: TypedClient) -> None:
    many = typed.call(READ_MANY, ReadManyParams(targets=["Short", "Long", "Twin", "Nowhere"], max_bytes=100))
    short, long_, twin, nowhere = many.notes
    assert [i.target for i in many.notes] == ["Short", "Long", "Twin", "Nowhere"]
    assert short.note == typed.call(READ, ReadParams(target="Short", max_bytes=100)) and short.error is None
    assert long_.note is not None and len(long_.note.body.encode()) <= 100 and long_.note.truncated
    assert long_.note.next_offset is not None, "the rest is a note.read away"
    assert twin.note is None and twin.error is not None and twin.error.code == ErrorCode.AMBIGUOUS
    assert sorted(twin.error.candidates) == ["a/Twin.md", "b/Twin.md"]
    assert nowhere.note is None and nowhere.error is not None and nowhere.error.code == ErrorCode.NOT_FOUND


def test_the_number_of_notes_is_bounded_at_the_edge(vault: Path, typed: TypedClient) -> None:
    at_bound = typed.call(READ_MANY, ReadManyParams(targets=["Short"] * MAX_READ_MANY, max_bytes=10))
    assert len(at_bound.notes) == MAX_READ_MANY and all(i.note for i in at_bound.notes)
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call_with(READ_MANY, {"targets": ["Short"] * (MAX_READ_MANY + 1)})
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call_with(READ_MANY, {"targets": []})


def test_an_unknown_vault_fails_the_whole_call(vault: Path, typed: TypedClient) -> None:
    with refused(ErrorCode.NOT_FOUND):
        typed.call(READ_MANY, ReadManyParams(targets=["Short"], vault="nope"))


async def test_the_tool_reads_many_and_keeps_private_notes_unnamed(vault: Path, home: Home) -> None:
    async with agent(home) as client:
        result = ok(await client.call_tool("note_read_many", {"targets": ["Short", "diary/Secret.md", "Twin"], "max_bytes": 64}))
    short, secret, twin = result["notes"]
    assert short["note"]["path"] == "Short.md" and short["note"]["frontmatter"] == {"type": "note"}
    assert secret == {"target": "diary/Secret.md", "error": secret["error"]} and secret["error"]["code"] == "NOT_FOUND"
    assert twin["error"]["code"] == "AMBIGUOUS"
    assert "Secret" not in json.dumps([short, twin])
