"""Typed properties, property.rename and note.outline through a real daemon: .obsidian/types.json
read live and never written, types inferred as Obsidian infers them, values checked and written in
Obsidian's form, a rename across the vault that undo reverses, and private notes left out."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from protocol.errors import ErrorCode
from protocol.methods.common import Channel
from protocol.methods.properties import (
    NOTE_OUTLINE,
    PROPERTY_RENAME,
    VAULT_PROPERTIES,
    OutlineParams,
    PropertiesParams,
    PropertyRenameParams,
    PropertyType,
)
from protocol.methods.reads import READ, ReadParams
from protocol.methods.receipts import Applied, DryRun
from protocol.methods.vaults import VAULT_ADD, VaultAddParams
from protocol.methods.writes import SET_FRONTMATTER, UNDO, SetFrontmatterParams, UndoParams
from tests.support.typed import refused

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Home
    from tests.support.typed import TypedClient, TypedClients

TYPES = {"types": {"Due": "date", "score": "number", "flag": "checkbox", "people": "multitext", "when": "datetime", "bogus": "colour"}}
NOTES = {
    "a.md": "---\ndue: 2026-01-05\nstatus: active\nscore: 3\ntags: [x, y]\nstarted: 2026-01-01\n---\n# A\n\n## Part\n\nsome words here ^blk\n",
    "b.md": "---\nstatus: done  # a comment\nstarted: 2026-02-01\ncount: 7\n---\n# B\n",
    "c.md": "---\nStatus: waiting\nstarted: someday\n---\n# C\n\n- [ ] one\n- [x] two\n",
    "secret/s.md": "---\nhidden_key: 1\nstatus: secret\n---\n# S\n",
}


def _vault(home: Home, typed: TypedClient, *, types: object = TYPES, **add: object) -> Path:
    root = home.root / "vault"
    (root / "secret").mkdir(parents=True)
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "types.json").write_text(json.dumps(types))
    for rel, text in NOTES.items():
        (root / rel).write_text(text)
    typed.call(VAULT_ADD, VaultAddParams(id="v", path=str(root), **add))  # type: ignore[arg-type]
    return root


def _types(typed: TypedClient) -> dict[str, tuple[PropertyType, bool, int]]:
    result = typed.call(VAULT_PROPERTIES, PropertiesParams(fresh=True))
    return {p.name: (p.type, p.declared, p.notes) for p in result.properties}


def test_types_are_declared_or_inferred_and_counted(home: Home, typed: TypedClient) -> None:
    root = _vault(home, typed)
    found = _types(typed)
    assert found["due"] == (PropertyType.DATE, True, 1)  # declared as "Due": names compare case-insensitively
    assert found["score"] == (PropertyType.NUMBER, True, 1)
    assert found["tags"] == (PropertyType.TAGS, True, 1)  # built in
    assert found["status"] == (PropertyType.TEXT, False, 4)  # Status and status are one property
    assert found["started"] == (PropertyType.DATE, False, 3)  # two dates outvote one word
    assert found["count"] == (PropertyType.NUMBER, False, 1)
    totals = typed.call(VAULT_PROPERTIES, PropertiesParams())
    assert (totals.notes, totals.tasks, totals.open_tasks) == (4, 2, 1)
    # types.json is read live; junk in it is ignored, as Obsidian ignores it
    (root / ".obsidian" / "types.json").write_text('{"types": {"count": "text"')
    assert _types(typed)["count"] == (PropertyType.NUMBER, False, 1)
    (root / ".obsidian" / "types.json").write_text('{"types": {"count": "text"}}')
    assert _types(typed)["count"] == (PropertyType.TEXT, True, 1)


def test_a_read_types_each_property(home: Home, typed: TypedClient) -> None:
    _vault(home, typed)
    read = typed.call(READ, ReadParams(target="c", fresh=True))
    assert read.property_types == {"Status": "text", "started": "date"}
    assert read.frontmatter == {"Status": "waiting", "started": "someday"}


def test_set_checks_the_type_and_writes_obsidians_form(home: Home, typed: TypedClient) -> None:
    root = _vault(home, typed)
    before = (root / "b.md").read_bytes()
    with refused(ErrorCode.INVALID_PARAMS) as refusal:
        typed.call(SET_FRONTMATTER, SetFrontmatterParams(target="b", set={"due": "next week"}))
    assert "'due'" in refusal.data.message and "date" in refusal.data.message and "next week" in refusal.data.message
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(SET_FRONTMATTER, SetFrontmatterParams(target="b", set={"score": "many"}))
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(SET_FRONTMATTER, SetFrontmatterParams(target="b", set={"flag": "maybe"}))
    assert (root / "b.md").read_bytes() == before
    done = typed.call(
        SET_FRONTMATTER,
        SetFrontmatterParams(
            target="b", set={"due": "2026-03-04", "score": "12", "flag": "true", "people": "Ann", "when": "2026-03-04 09:30"}
        ),
    )
    assert isinstance(done, Applied)
    text = (root / "b.md").read_text()
    assert text == (
        "---\nstatus: done  # a comment\nstarted: 2026-02-01\ncount: 7\ndue: 2026-03-04\nscore: 12\nflag: true\npeople:\n  - Ann\n"
        "when: 2026-03-04T09:30\n---\n# B\n"
    )


def test_rename_previews_applies_and_undoes_without_touching_types_json(home: Home, typed: TypedClient) -> None:
    root = _vault(home, typed)
    before = {rel: (root / rel).read_bytes() for rel in NOTES}
    types_before = (root / ".obsidian" / "types.json").read_bytes()
    preview = typed.call(PROPERTY_RENAME, PropertyRenameParams(old="status", new="state", dry_run=True))
    assert isinstance(preview, DryRun)
    assert sorted(c.path for c in preview.changes) == ["a.md", "b.md", "c.md", "secret/s.md"]
    assert {rel: (root / rel).read_bytes() for rel in NOTES} == before
    applied = typed.call(PROPERTY_RENAME, PropertyRenameParams(old="status", new="state"))
    assert isinstance(applied, Applied)
    assert (root / "b.md").read_text() == "---\nstate: done  # a comment\nstarted: 2026-02-01\ncount: 7\n---\n# B\n"
    assert (root / "c.md").read_text().startswith("---\nstate: waiting\n")
    assert (root / ".obsidian" / "types.json").read_bytes() == types_before
    typed.call(UNDO, UndoParams(op_id=applied.op_id))
    assert {rel: (root / rel).read_bytes() for rel in NOTES} == before
    with refused(ErrorCode.INVALID_PARAMS):  # a note with both names would lose one
        typed.call(PROPERTY_RENAME, PropertyRenameParams(old="status", new="started"))
    with refused(ErrorCode.NOT_FOUND):
        typed.call(PROPERTY_RENAME, PropertyRenameParams(old="nothing", new="else"))


def test_agents_do_not_see_private_properties(home: Home, typed: TypedClient, typed_clients: TypedClients) -> None:
    _vault(home, typed, private_paths=["secret/**"])
    agent = typed_clients.open(home, Channel.MCP)
    seen = {p.name: p.notes for p in agent.call(VAULT_PROPERTIES, PropertiesParams(fresh=True)).properties}
    assert "hidden_key" not in seen and seen["status"] == 3
    assert "hidden_key" in _types(typed)
    with refused(ErrorCode.NOT_FOUND):
        agent.call(NOTE_OUTLINE, OutlineParams(target="secret/s.md"))


def test_outline_gives_headings_blocks_and_counts(home: Home, typed: TypedClient) -> None:
    _vault(home, typed)
    outline = typed.call(NOTE_OUTLINE, OutlineParams(target="a", fresh=True))
    assert [(h.level, h.text, h.line) for h in outline.headings] == [(1, "A", 8), (2, "Part", 10)]
    assert [(b.id, b.line) for b in outline.blocks] == [("blk", 12)]
    assert outline.words == 6  # A, Part, some, words, here, ^blk: the heading marks are not words
    assert outline.characters == len("# A\n\n## Part\n\nsome words here ^blk\n") - 5


def test_cli_properties_rename_and_outline(home: Home, typed: TypedClient, cli) -> None:  # type: ignore[no-untyped-def]
    root = _vault(home, typed)
    listed = cli("properties", "--vault", "v", "--fresh")
    assert listed.code == 0, listed.err
    assert "started" in listed.out and "date (inferred)" in listed.out
    dry = cli("property", "rename", "count", "total", "--vault", "v", "--dry-run")
    assert dry.code == 0, dry.err
    assert "count: 7" in (root / "b.md").read_text()
    assert cli("property", "rename", "count", "total", "--vault", "v").code == 0
    assert "total: 7" in (root / "b.md").read_text()
    bad = cli("set", "b", "--set", '{"due": "soon"}', "--vault", "v")
    assert bad.code != 0 and "date" in bad.err
    outline = cli("outline", "a", "--vault", "v")
    assert outline.code == 0 and "## Part  (line 10)" in outline.out and "^blk" in outline.out
