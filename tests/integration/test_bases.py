"""Bases through a real daemon, the real CLI and the official MCP SDK client: a Base made as in
Obsidian (a table view with filters, a formula, a summary and a grouping) returns the rows
Obsidian shows; private notes are never rows; a hostile Base is refused or stopped, never hangs."""

from __future__ import annotations

import csv
import io
import json
import threading
from typing import TYPE_CHECKING

import pytest

from tests.support.agent import agent, ok
from tests.support.harness import RawClient, vaultctl

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home

BOOKS = {
    "Books/Dune.md": "---\ntags: [book]\nauthor: Frank Herbert\nstatus: reading\npages: 412\nprice: 9.5\nstarted: 2024-03-01\n---\n# Dune\n\nSee [[Foundation]].\n",
    "Books/Foundation.md": "---\ntags: [book, classic]\nauthor: Isaac Asimov\nstatus: done\npages: 255\nprice: 7\nstarted: 2023-11-20\n---\n# Foundation\n",
    "Books/Hyperion.md": "---\ntags: [book]\nauthor: Dan Simmons\nstatus: reading\npages: 482\nprice: 12\n---\n# Hyperion\n\nLike [[Dune]].\n",
    "Books/Neuromancer.md": "---\ntags: [book/scifi]\nauthor: William Gibson\nstatus: queued\npages: 271\n---\n# Neuromancer\n",
    "Notes/Reading list.md": '# Reading list\n\n[[Dune]] and [[Hyperion]].\n\n```base\nfilters:\n  and:\n    - file.hasTag("book")\n    - status == "reading"\nviews:\n  - type: table\n    name: Now\n    order: [file.basename, author]\n```\n',
    "private/Diary.md": "---\ntags: [book]\nstatus: reading\npages: 99\n---\n# Diary\n\n[[Dune]]\n",
}
LIBRARY = """filters:
  and:
    - file.hasTag("book")
    - file.ext == "md"
formulas:
  price_per_page: 'if(price, (price / pages * 100).toFixed(2))'
properties:
  author:
    displayName: Author
  formula.price_per_page:
    displayName: Cents per page
views:
  - type: table
    name: By status
    order:
      - file.basename
      - author
      - pages
      - formula.price_per_page
    sort:
      - property: pages
        direction: DESC
    groupBy:
      property: status
      direction: ASC
    summaries:
      pages: Sum
  - type: cards
    name: Long ones
    filters: 'pages > 300'
    order: [file.basename]
    limit: 1
"""


@pytest.fixture
def library(daemon: Daemon, raw: RawClient, home: Home) -> Path:
    root = home.root / "lib"
    for rel, text in {**BOOKS, "Library.base": LIBRARY}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    raw.call("vault.add", {"id": "lib", "path": str(root), "private_paths": ["private/**"]})
    return root


def test_a_base_made_in_obsidian_returns_its_rows(library: Path, raw: RawClient, home: Home) -> None:
    got = raw.call("base.query", {"path": "Library.base", "vault": "lib"})
    assert got["view"] == "By status" and got["type"] == "table"
    assert [(c["id"], c["name"]) for c in got["columns"]] == [
        ("file.basename", "file.basename"),
        ("note.author", "Author"),
        ("note.pages", "pages"),
        ("formula.price_per_page", "Cents per page"),
    ]
    # grouped by status (ascending), then by pages descending inside each group
    assert [(r["group"], r["path"]) for r in got["rows"]] == [
        ("done", "Books/Foundation.md"),
        ("queued", "Books/Neuromancer.md"),
        ("reading", "Books/Hyperion.md"),
        ("reading", "Books/Dune.md"),
        ("reading", "private/Diary.md"),  # private paths are the agents' screen; the cli sees every note
    ]
    assert got["rows"][0]["values"] == {
        "file.basename": "Foundation",
        "note.author": "Isaac Asimov",
        "note.pages": 255,
        "formula.price_per_page": "2.75",
    }
    assert got["rows"][1]["values"]["formula.price_per_page"] is None  # no price: if() gives null
    assert got["rows"][3]["values"]["formula.price_per_page"] == "2.31"
    assert got["summaries"] == {"note.pages": 412 + 255 + 482 + 271 + 99}
    assert [(g["key"], g["rows"], g["summaries"]) for g in got["groups"]] == [
        ("done", 1, {"note.pages": 255}),
        ("queued", 1, {"note.pages": 271}),
        ("reading", 3, {"note.pages": 482 + 412 + 99}),
    ]
    assert got["total"] == 5 and got["returned"] == 5 and got["next_cursor"] is None
    long_ones = raw.call("base.query", {"path": "Library.base", "vault": "lib", "view": "Long ones"})
    assert [r["path"] for r in long_ones["rows"]] == ["Books/Dune.md"] and long_ones["total"] == 2 and long_ones["type"] == "cards"


def test_vaultctl_base_query_and_bases(library: Path, home: Home) -> None:
    table = vaultctl(home, "base", "query", "Library.base", "--vault", "lib")
    assert table.code == 0, table.err
    assert "CENTS PER PAGE" in table.out and "Isaac Asimov" in table.out and "summaries: pages 1519" in table.out
    as_csv = vaultctl(home, "base", "query", str(library / "Library.base"), "--format", "csv")
    assert as_csv.code == 0, as_csv.err
    rows = list(csv.reader(io.StringIO(as_csv.out)))
    assert rows[0] == ["path", "group", "file.basename", "Author", "pages", "Cents per page"]
    assert rows[1] == ["Books/Foundation.md", "done", "Foundation", "Isaac Asimov", "255", "2.75"]
    assert len(rows) == 6
    md = vaultctl(home, "base", "query", "Library.base", "--vault", "lib", "--view", "Long ones", "--format", "md")
    assert md.code == 0 and md.out.splitlines()[0] == "| path | file.basename |" and "| Books/Dune.md | Dune |" in md.out
    page = vaultctl(home, "base", "query", "Library.base", "--vault", "lib", "--limit", "3", "--json").json()
    assert len(page["rows"]) == 3 and page["next_cursor"] == "row:3"
    rest = vaultctl(home, "base", "query", "Library.base", "--vault", "lib", "--cursor", page["next_cursor"], "--json").json()
    assert [r["path"] for r in rest["rows"]] == ["Books/Dune.md", "private/Diary.md"] and rest["next_cursor"] is None
    inline = vaultctl(home, "base", "query", "-", "--vault", "lib", "--json", input="filters: 'author.contains(\"Asimov\")'\n")
    assert [r["path"] for r in inline.json()["rows"]] == ["Books/Foundation.md"]
    block = vaultctl(home, "base", "query", "Notes/Reading list.md", "--vault", "lib", "--json").json()
    assert [(r["values"]["file.basename"], r["values"]["note.author"]) for r in block["rows"]] == [
        ("Dune", "Frank Herbert"),
        ("Hyperion", "Dan Simmons"),
        ("Diary", None),
    ]
    listed = vaultctl(home, "bases", "--vault", "lib", "--json").json()
    assert listed["bases"] == [
        {"path": "Library.base", "views": [{"name": "By status", "type": "table"}, {"name": "Long ones", "type": "cards"}], "error": None}
    ]
    bad = vaultctl(home, "base", "query", "-", "--vault", "lib", input="filters: 'file.nosuch == 1'\n")
    assert bad.code != 0 and "file.nosuch is not a file field at line 1, column 6" in bad.err


def test_bad_bases_are_refused_with_where(library: Path, raw: RawClient) -> None:
    def error(params: dict[str, object]) -> dict[str, str]:
        reply = raw.request("base.query", {"vault": "lib", **params})
        assert "error" in reply, reply
        return reply["error"]["data"]  # type: ignore[no-any-return]

    unsupported = error({"yaml": "formulas:\n  x: 'price.frobnicate(2)'\n"})
    assert (
        unsupported["code"] == "INVALID_PARAMS"
        and "formulas.x: the method frobnicate() is not supported at line 1, column 7" in unsupported["message"]
    )
    syntax = error({"yaml": "filters:\n  and:\n    - 'pages >'\n"})
    assert "filters.and[0]" in syntax["message"] and "ends too early" in syntax["message"]
    bomb = 'a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n'
    assert "aliases" in error({"yaml": bomb})["message"]
    deep = "filters: " + "[" * 200 + "]" * 200 + "\n"
    assert "deeper" in error({"yaml": deep})["message"]
    regex = error({"yaml": "filters: '/(a+)+b/.matches(author)'\n"})
    assert "repeats a group" in regex["message"]
    typed = error({"yaml": "filters: 'author.round() > 1'\n"})
    assert "round() is not a method of a string" in typed["message"] and "Books/" in typed["message"]
    assert error({"path": "Library.base", "view": "Nope"})["code"] == "INVALID_PARAMS"
    assert error({"path": "Missing.base"})["code"] == "NOT_FOUND"
    assert error({"path": "Library.base", "yaml": "views: []"})["code"] == "INVALID_PARAMS"
    assert error({"path": "Notes/Reading list.md", "block": 2})["code"] == "INVALID_PARAMS"
    assert error({"path": "Library.base", "cursor": "nonsense"})["code"] == "INVALID_PARAMS"


def test_a_runaway_base_stops_at_its_budget(library: Path, raw: RawClient, daemon: Daemon) -> None:
    items = ", ".join(["1"] * 600)
    spin = "formula.many.map(formula.many.map(formula.many.map(value + 1)))"  # 600³ steps for each row
    runaway = f"formulas:\n  many: '[{items}]'\n  spin: '{spin}'\nviews:\n  - order: [formula.spin]\n"
    patient = RawClient(daemon.home.socket, timeout=300)
    patient.hello()
    replies: list[dict[str, object]] = []
    running = threading.Thread(target=lambda: replies.append(patient.request("base.query", {"vault": "lib", "yaml": runaway})))
    running.start()
    # meanwhile the vault changes and a fresh read sees it: the evaluation holds no lock on the index
    (library / "Books/Meanwhile.md").write_text("---\ntags: [book]\npages: 1\n---\n# Meanwhile\n")
    fresh = raw.call("base.query", {"vault": "lib", "yaml": "filters: 'pages == 1'\n", "fresh": True})
    assert [r["path"] for r in fresh["rows"]] == ["Books/Meanwhile.md"]
    assert running.is_alive(), "the runaway query ended before the fresh read: the test proves nothing"
    running.join(timeout=300)
    patient.close()
    (reply,) = replies
    assert reply["error"]["data"]["code"] == "LIMIT", reply  # type: ignore[index]
    # the daemon is still serving
    assert raw.call("base.query", {"vault": "lib", "yaml": "filters: 'pages == 255'\n"})["total"] == 1


def test_fresh_reads_see_a_change_made_just_before(library: Path, raw: RawClient) -> None:
    (library / "Books/Solaris.md").write_text("---\ntags: [book]\nstatus: done\npages: 204\n---\n# Solaris\n")
    got = raw.call("base.query", {"vault": "lib", "path": "Library.base", "fresh": True})
    assert "Books/Solaris.md" in [r["path"] for r in got["rows"]]


async def test_agents_run_bases_without_private_notes(library: Path, home: Home) -> None:
    async with agent(home) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["bases"].annotations is not None and tools["bases"].annotations.read_only_hint  # base.list and base.query
        block = ok(await client.call_tool("bases", {"action": "query", "vault": "lib", "path": "Notes/Reading list.md", "block": 1}))
        assert [r["path"] for r in block["rows"]] == ["Books/Dune.md", "Books/Hyperion.md"]
        back = ok(
            await client.call_tool(
                "bases",
                {
                    "action": "query",
                    "vault": "lib",
                    "yaml": "formulas:\n  in: 'file.backlinks.length'\nfilters: 'file.name == \"Dune.md\"'\nviews:\n  - order: [formula.in]\n",
                },
            )
        )
        assert back["rows"][0]["values"] == {"formula.in": 2}  # Hyperion and the reading list; not the diary
        seen = json.dumps(ok(await client.call_tool("base_query", {"vault": "lib", "yaml": "filters: 'file.hasTag(\"book\")'\n"})))
        assert "Diary" not in seen and "private" not in seen
        hidden = await client.call_tool("base_query", {"vault": "lib", "path": "private/Diary.md"})
        assert hidden.is_error
        listed = ok(await client.call_tool("base_list", {"vault": "lib"}))
        assert [b["path"] for b in listed["bases"]] == ["Library.base"]
