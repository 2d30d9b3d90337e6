"""A move or a merge keeps the rest of Obsidian in step: canvases (file nodes and text-node links),
bases and bookmarks, in the same journaled operation, every other byte of those files kept, the
link text in the style it was written and in the vault's link format; undo restores every byte.
Through the real vaultctl, vaultctl's socket client and the official MCP SDK client."""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING, Any

from protocol.methods.reads import LINKS, STATS, LinksParams, StatsParams
from protocol.methods.writes import MERGE, MOVE, MergeParams, MoveParams
from tests.support.agent import agent, ok
from tests.support.harness import Daemon, Home, snapshot
from tests.support.typed import TypedClients, previewed, two_step
from vaultctl.client import CallError, DaemonUnavailable

if TYPE_CHECKING:
    from pathlib import Path

CANVAS = (
    "{\n"
    '\t"nodes":[\n'
    '\t\t{"id":"a1","type":"file","file":"people/Ada Lovelace.md","subpath":"#Notes","x":0,"y":0,"width":400,"height":400},\n'
    '\t\t{"id":"b2","type":"text","text":"See [[Ada Lovelace]] and [[people/Ada Lovelace|Ada]]\\nand `[[Ada Lovelace]]` \\u00e9t\\u00e9","x":500,"y":0,"width":250,"height":60},\n'
    '\t\t{"id":"c3","type":"file","file":"Home.md","x":0,"y":500,"width":400,"height":400},\n'
    '\t\t{"id":"d4","type":"group","label":"people/Ada Lovelace.md","x":-50,"y":-50,"width":900,"height":1000}\n'
    "\t],\n"
    '\t"edges":[\n'
    '\t\t{"id":"e1","fromNode":"a1","fromSide":"right","toNode":"b2","toSide":"left"}\n'
    "\t]\n"
    "}"
)
BASE = """# people I work with
filters:
  and:
    - file.hasLink("Ada Lovelace")   # by name
    - 'up == "[[people/Ada Lovelace]]"'
formulas:
  lead: 'link("people/Ada Lovelace#Notes", "Ada")'
  page: file("people/Ada Lovelace.md")
views:
  - type: table
    name: People
    filters:
      and:
        - file.inFolder("people")
"""
BOOKMARKS = """{
  "items": [
    {
      "type": "file",
      "ctime": 1700000000000,
      "path": "people/Ada Lovelace.md",
      "subpath": "#Notes"
    },
    {
      "type": "group",
      "ctime": 1700000000001,
      "items": [
        {
          "type": "file",
          "ctime": 1700000000002,
          "path": "people/Ada Lovelace.md",
          "title": "Ada (pinned)"
        },
        {
          "type": "search",
          "ctime": 1700000000003,
          "query": "people/Ada Lovelace.md"
        }
      ],
      "title": "Team"
    },
    {
      "type": "file",
      "ctime": 1700000000004,
      "path": "Home.md"
    }
  ]
}"""
NOTES = {
    "Home.md": "# Home\n\n[[Ada Lovelace]] and [[people/Ada Lovelace]] and [Ada](people/Ada%20Lovelace.md)\n",
    "people/Ada Lovelace.md": "# Ada Lovelace\n\n## Notes\n\nThe first programmer.\n",
    "people/Grace.md": "# Grace\n\nWorks with [[../people/Ada Lovelace|Ada]].\n",
    "boards/Team.canvas": CANVAS,
    "views/People.base": BASE,
    ".obsidian/bookmarks.json": BOOKMARKS,
    ".obsidian/app.json": '{\n  "newLinkFormat": "shortest"\n}',
}


def _vault(home: Home, cli: Any, notes: dict[str, str] = NOTES) -> Path:
    root = home.root / "vault"
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    added = cli("vault", "add", "v", str(root), "--json")
    assert added.code == 0, added.err
    return root


def _without_log(files: dict[str, bytes]) -> dict[str, bytes]:
    return {k: v for k, v in files.items() if k != "log.md"}


def test_a_move_rewrites_canvas_base_and_bookmarks_and_undo_restores_every_byte(daemon: Daemon, home: Home, cli: Any) -> None:
    root = _vault(home, cli)
    before = snapshot(root)
    preview = cli("move", "Ada Lovelace", "team/ada")
    assert preview.code == 0, preview.err
    confirm = next(line.strip() for line in preview.out.splitlines() if "--confirm" in line)
    argv = shlex.split(confirm)
    assert argv[0] == "vaultctl"
    done = cli(*argv[1:], "--json")
    assert done.code == 0, done.err
    receipt = done.json()
    assert receipt["outcome"] == "applied"
    changed = {c["path"]: c["action"] for c in receipt["changes"]}
    assert changed == {
        "team/ada.md": "create",
        "people/Ada Lovelace.md": "delete",
        "Home.md": "modify",
        "people/Grace.md": "modify",
        "boards/Team.canvas": "modify",
        "views/People.base": "modify",
        ".obsidian/bookmarks.json": "modify",
    }
    assert set(receipt["detail"]["rewritten"]) == {
        "Home.md",
        "people/Grace.md",
        "boards/Team.canvas",
        "views/People.base",
        ".obsidian/bookmarks.json",
    }

    # Notes: each link in its own style; the path-qualified one keeps a path.
    assert (root / "Home.md").read_text() == "# Home\n\n[[ada]] and [[team/ada]] and [Ada](team/ada.md)\n"
    assert (root / "people/Grace.md").read_text() == "# Grace\n\nWorks with [[../team/ada|Ada]].\n"
    # The canvas: the file node's path, the text node's links (not the one in code), nothing else.
    assert (root / "boards/Team.canvas").read_text() == CANVAS.replace('"file":"people/Ada Lovelace.md"', '"file":"team/ada.md"').replace(
        "See [[Ada Lovelace]] and [[people/Ada Lovelace|Ada]]", "See [[ada]] and [[team/ada|Ada]]"
    )
    canvas = json.loads((root / "boards/Team.canvas").read_text())
    assert canvas["nodes"][0]["subpath"] == "#Notes" and canvas["nodes"][3]["label"] == "people/Ada Lovelace.md"
    # The base: its comments and quoting kept; the folder filter left alone.
    assert (root / "views/People.base").read_text() == (
        BASE.replace('file.hasLink("Ada Lovelace")', 'file.hasLink("ada")')
        .replace('"[[people/Ada Lovelace]]"', '"[[team/ada]]"')
        .replace('link("people/Ada Lovelace#Notes", "Ada")', 'link("team/ada#Notes", "Ada")')
        .replace('file("people/Ada Lovelace.md")', 'file("team/ada.md")')
    )
    # Bookmarks: both file bookmarks, in the group too; the search query is text, not a link.
    assert (root / ".obsidian/bookmarks.json").read_text() == BOOKMARKS.replace('"path": "people/Ada Lovelace.md"', '"path": "team/ada.md"')
    assert (root / ".obsidian/app.json").read_bytes() == before[".obsidian/app.json"]

    # One operation: one undo restores every byte of every file, the bookmarks too.
    undone = cli("undo", receipt["op_id"], "--json")
    assert undone.code == 0, undone.err
    assert _without_log(snapshot(root)) == _without_log(before)


def test_the_new_link_format_and_markdown_links_shape_what_a_merge_writes(
    daemon: Daemon, home: Home, cli: Any, typed_clients: TypedClients
) -> None:
    notes = {
        "Home.md": "# Home\n\n[[Old Plan]] and [[Old Plan#Risks|risks]]\n",
        "plans/Old Plan.md": "# Old Plan\n\n## Risks\n\nFew.\n",
        "plans/deep/Plan.md": "# Plan\n\nThe plan.\n",
        "Plan.md": "# Plan\n\nAnother note named Plan.\n",
        "boards/Map.canvas": '{"nodes":[{"id":"n","type":"file","file":"plans/Old Plan.md","x":0,"y":0,"width":1,"height":1}],"edges":[]}',
        ".obsidian/app.json": '{"newLinkFormat":"relative","useMarkdownLinks":true}',
    }
    root = _vault(home, cli, notes)
    client = typed_clients.open(home)
    two_step(client, MERGE, MergeParams(keep="plans/deep/Plan.md", absorb="Old Plan"))
    # "Plan" is two notes' name: a bare link cannot stay bare, so it takes the relative path.
    assert (root / "Home.md").read_text() == "# Home\n\n[[./plans/deep/Plan]] and [[./plans/deep/Plan#Risks|risks]]\n"
    merged = (root / "plans/deep/Plan.md").read_text()
    assert "## Merged from [Old Plan](../Old%20Plan.md)\n" in merged  # useMarkdownLinks, relative
    assert json.loads((root / "boards/Map.canvas").read_text())["nodes"][0]["file"] == "plans/deep/Plan.md"
    assert not client.call(LINKS, LinksParams(target="Home")).dead


def test_unreadable_canvases_are_left_alone_with_a_warning_and_a_broken_link_refuses_nothing_else(
    daemon: Daemon, home: Home, cli: Any, typed_clients: TypedClients
) -> None:
    notes = {
        "Ada.md": "# Ada\n",
        "broken.canvas": '{"nodes": [{"type": "file", "file": "Ada.md"',  # cut short
        "other.canvas": '{"nodes": [], "edges": []}',
        "empty.base": "",
    }
    root = _vault(home, cli, notes)
    preview, done = two_step(typed_clients.open(home), MOVE, MoveParams(target="Ada", to="people/Ada King"))
    assert [w.path for w in preview.warnings] == ["broken.canvas"]
    assert "not checked" in preview.warnings[0].message
    assert {c.path for c in done.changes} == {"Ada.md", "people/Ada King.md"}
    assert (root / "broken.canvas").read_text() == notes["broken.canvas"]


async def test_an_agents_move_preview_names_the_canvas_base_and_bookmarks(daemon: Daemon, home: Home, cli: Any) -> None:
    root = _vault(home, cli)
    before = snapshot(root)
    async with agent(home) as client:
        preview = ok(await client.call_tool("note_move", {"target": "Ada Lovelace", "to": "team/ada"}))
    assert preview["outcome"] == "preview"
    paths = {c["path"] for c in preview["changes"]}
    assert {"boards/Team.canvas", "views/People.base", ".obsidian/bookmarks.json"} <= paths
    assert any("canvas-file" in link or "Team.canvas" in link for link in preview["detail"]["links"])
    assert snapshot(root) == before


def test_a_crash_before_the_commit_restores_the_canvas_base_and_bookmarks(home: Home, cli: Any, typed_clients: TypedClients) -> None:
    daemon = Daemon(home)
    try:
        root = _vault(home, cli)
    finally:
        daemon.stop()
    before = snapshot(root)
    home.env["VAULTD_FAULTS"] = "crash=before-commit"
    daemon = Daemon(home)
    try:
        client = typed_clients.open(home)
        preview = previewed(client.call(MOVE, MoveParams(target="Ada Lovelace", to="team/ada")))
        try:
            client.call(MOVE, MoveParams(target="Ada Lovelace", to="team/ada", confirm=True, fingerprint=preview.fingerprint))
        except (CallError, DaemonUnavailable):
            pass
    finally:
        daemon.stop()
    assert snapshot(root)[".obsidian/bookmarks.json"] != before[".obsidian/bookmarks.json"], "the crash came after the writes"
    del home.env["VAULTD_FAULTS"]
    daemon = Daemon(home)
    try:
        assert typed_clients.open(home).call(STATS, StatsParams(fresh=True)).notes == 3
        assert snapshot(root) == before
    finally:
        daemon.stop()
