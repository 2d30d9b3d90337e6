"""The graph methods through a real daemon, the real CLI and the official MCP SDK client: neighbours,
communities, paths, hubs, maps, the navigator, canvases, and the topic map's cycle rule."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from tests.support import jsoncanvas
from tests.support.agent import agent, ok
from tests.support.harness import Daemon, RawClient, snapshot

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Home

MAP = {
    "Home MOC.md": "---\ntype: moc\n---\n# Home\n\n- [[Topic A]]\n- [[Topic B]]\n",
    "Topic A.md": "---\nup: '[[Home MOC]]'\n---\n# Topic A\n\n## Relevant Notes\n\n- [[Note 1]] — supports\n",
    "Topic B.md": "---\nup: '[[Home MOC]]'\n---\n# Topic B\n\nAbout B.\n",
    "Note 1.md": "---\nup: '[[Topic A]]'\n---\n# Note 1\n\nGoes on in [[Note 2]].\n",
    "Note 2.md": "---\nup: '[[Topic A]]'\n---\n# Note 2\n\nThe second.\n",
    "Note 3.md": "---\nup: ['[[Topic A]]', '[[Topic B]]']\n---\n# Note 3\n\nTwo parents.\n",
    "Far.md": "# Far\n\nFar away, see [[Note 2]].\n",
    "Island.md": "# Island\n\nNo links at all.\n",
    "private/Secret.md": "---\nup: '[[Topic A]]'\n---\n# Secret\n\nPoints at [[Note 1]]. #secretword\n",
}
SECRET = "private/Secret.md"


@pytest.fixture
def topic_vault(daemon: Daemon, raw: RawClient, home: Home) -> Path:
    root = home.root / "map"
    for rel, text in MAP.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    raw.call("vault.add", {"id": "map", "path": str(root), "private_paths": ["private/**"]})
    return root


def test_neighbors_by_hops_relation_and_direction(topic_vault: Path, raw: RawClient) -> None:
    one = raw.call("graph.neighbors", {"target": "Note 1"})
    assert [(n["path"], n["hops"], n["direction"]) for n in one["neighbors"]] == [
        ("Note 2.md", 1, "out"),
        ("Topic A.md", 1, "out"),
        (SECRET, 1, "in"),
    ]
    assert one["total"] == 3 and not one["truncated"]
    assert {(e["source"], e["target"]) for e in one["edges"]} >= {("Note 1.md", "Topic A.md"), ("Topic A.md", "Note 1.md")}
    two = raw.call("graph.neighbors", {"target": "Note 1", "hops": 2})
    assert {n["path"] for n in two["neighbors"] if n["hops"] == 2} == {"Far.md", "Home MOC.md", "Note 3.md"}
    up = raw.call("graph.neighbors", {"target": "Note 1", "relation": "up", "hops": 3, "direction": "out"})
    assert [(n["path"], n["relation"]) for n in up["neighbors"]] == [("Topic A.md", "up"), ("Home MOC.md", "up")]
    typed = raw.call("graph.neighbors", {"target": "Topic A", "relation": "supports"})
    assert [(n["path"], n["direction"], n["relation"]) for n in typed["neighbors"]] == [("Note 1.md", "out", "supports")]
    cut = raw.call("graph.neighbors", {"target": "Note 1", "hops": 3, "limit": 2})
    assert len(cut["neighbors"]) == 2 and cut["truncated"] and cut["total"] > 2
    for bad in ({"hops": 0}, {"hops": 4}, {"relation": "no spaces"}, {"limit": 1001}):
        assert raw.request("graph.neighbors", {"target": "Note 1", **bad})["error"]["data"]["code"] == "INVALID_PARAMS"


def test_communities_path_hubs_mocs(topic_vault: Path, raw: RawClient) -> None:
    found = raw.call("graph.communities", {"min_size": 1, "members": 100, "limit": 500})
    members = [m for c in found["communities"] for m in c["members"]]
    assert sorted(members) == sorted(MAP) and found["total"] == len(found["communities"])
    assert found["singletons"] == 1 and ["Island.md"] in [c["members"] for c in found["communities"]]
    assert found == raw.call("graph.communities", {"min_size": 1, "members": 100, "limit": 500})
    for c in found["communities"]:
        h1 = next(line[2:] for line in MAP[c["central"]].splitlines() if line.startswith("# "))
        assert c["central"] == c["members"][0] and c["name"] == h1
    route = raw.call("graph.path", {"source": "Far", "target": "Home MOC"})
    assert route["found"] and route["hops"] == 3
    assert [s["path"] for s in route["steps"]][0] == "Far.md" and route["steps"][-1]["path"] == "Home MOC.md"
    assert raw.call("graph.path", {"source": "Far", "target": "Island"}) == {"found": False, "hops": None, "steps": []}
    out_only = raw.call("graph.path", {"source": "Home MOC", "target": "Far", "direction": "out"})
    assert not out_only["found"]
    hubs = raw.call("graph.hubs", {"limit": 3})["hubs"]
    assert hubs[0]["path"] == "Topic A.md" and hubs[0]["incoming"] == 5
    mocs = raw.call("graph.mocs", {})
    assert [(m["path"], m["why"], m["incoming"]) for m in mocs["mocs"]] == [("Home MOC.md", "type: moc", 2)]


def test_nav_groups(topic_vault: Path, raw: RawClient, cli: Any) -> None:
    nav = raw.call("graph.nav", {"target": "Note 1"})
    names = {g: [e["path"] for e in nav[g]] for g in ("up", "below", "sources", "cited_by", "beside")}
    assert names == {"up": ["Topic A.md"], "below": [], "sources": ["Note 2.md"], "cited_by": [SECRET], "beside": ["Note 3.md"]}
    assert nav["parent_keys"] == ["up", "parent"] and nav["warnings"] == []
    topic = raw.call("graph.nav", {"target": "Topic A"})
    assert [e["path"] for e in topic["below"]] == ["Note 1.md", "Note 2.md", "Note 3.md", SECRET]
    assert [e["path"] for e in topic["up"]] == ["Home MOC.md"] and [e["path"] for e in topic["beside"]] == ["Topic B.md"]
    text = cli("nav", "Note 3", "--vault", "map")
    assert text.code == 0 and "Up:\n  Topic A (Topic A.md)\n  Topic B (Topic B.md)" in text.out


def test_a_write_that_closes_a_cycle_is_refused(topic_vault: Path, raw: RawClient, cli: Any) -> None:
    before = snapshot(topic_vault)
    refused = raw.request("note.set_frontmatter", {"vault": "map", "target": "Home MOC", "set": {"up": "[[Note 1]]"}})
    data = refused["error"]["data"]
    assert data["code"] == "VALIDATION" and data["issues"][0]["code"] == "V11"
    assert "Home MOC.md → Note 1.md → Topic A.md → Home MOC.md" in data["issues"][0]["message"]
    assert snapshot(topic_vault) == before
    fine = raw.call("note.set_frontmatter", {"vault": "map", "target": "Far", "set": {"up": "[[Note 1]]"}})
    assert fine["outcome"] == "applied"


def test_an_old_cycle_only_warns(daemon: Daemon, raw: RawClient, home: Home) -> None:
    root = home.root / "cyc"
    root.mkdir()
    (root / "X.md").write_text("---\nup: '[[Y]]'\n---\n# X\n")
    (root / "Y.md").write_text("---\nup: '[[X]]'\n---\n# Y\n")
    raw.call("vault.add", {"id": "cyc", "path": str(root)})
    done = raw.call("note.append", {"vault": "cyc", "target": "X", "section": "More", "markdown": "text"})
    assert done["outcome"] == "applied"
    assert [w["code"] for w in done["warnings"]] == ["V11"] and "already in a topic-map cycle" in done["warnings"][0]["message"]
    lint = raw.call("vault.lint", {"vault": "cyc", "code": "L16"})
    assert {f["note"] for f in lint["findings"]} == {"X.md", "Y.md"}
    assert "X" in raw.call("graph.nav", {"vault": "cyc", "target": "X"})["warnings"][0]


def test_parent_keys_are_configurable(daemon: Daemon, raw: RawClient, home: Home, cli: Any) -> None:
    root = home.root / "crumbs"
    root.mkdir()
    (root / "Child.md").write_text("---\nparent: '[[Top]]'\nup: '[[Other]]'\n---\n# Child\n")
    (root / "Top.md").write_text("# Top\n")
    (root / "Other.md").write_text("# Other\n")
    added = cli("vault", "add", "crumbs", str(root), "--parent-key", "parent", "--json")
    assert added.code == 0, added.err
    assert added.json()["entry"]["parent_keys"] == ["parent"]
    nav = raw.call("graph.nav", {"vault": "crumbs", "target": "Child"})
    assert [e["path"] for e in nav["up"]] == ["Top.md"] and [e["path"] for e in nav["sources"]] == ["Other.md"]


def test_canvas_inside_the_vault_is_an_operation(topic_vault: Path, raw: RawClient, cli: Any) -> None:
    out = topic_vault / "maps" / "note-1.canvas"
    made = cli("neighbors", "Note 1", "--hops", "2", "--canvas", str(out), "--json")
    assert made.code == 0, made.err
    receipt = made.json()
    assert receipt["outcome"] == "applied" and receipt["changes"][0]["path"] == "maps/note-1.canvas"
    document = json.loads(out.read_text())
    jsoncanvas.validate(document)
    assert jsoncanvas.overlapping(document) == []
    assert {n["file"] for n in document["nodes"]} == {"Note 1.md", "Note 2.md", "Topic A.md", SECRET, "Far.md", "Home MOC.md", "Note 3.md"}
    assert [n["color"] for n in document["nodes"] if n["file"] == "Note 1.md"] == ["6"]
    again = cli("neighbors", "Note 1", "--canvas", str(out))
    assert again.code == 1 and "already exists" in again.err
    lint = raw.call("vault.lint", {"vault": "map", "code": "L14"})
    assert lint["findings"] == []
    assert cli("undo", receipt["op_id"]).code == 0 and not out.exists()


def test_canvas_outside_every_vault_is_a_plain_file(topic_vault: Path, home: Home, cli: Any) -> None:
    out = home.root / "elsewhere" / "n.canvas"
    out.parent.mkdir()
    made = cli("neighbors", "Topic A", "--vault", "map", "--canvas", str(out))
    assert made.code == 0, made.err
    assert "plain file" in made.out
    document = json.loads(out.read_text())
    jsoncanvas.validate(document)
    assert jsoncanvas.overlapping(document) == []
    labels = {e.get("label") for e in document["edges"]}
    assert "up" in labels
    assert cli("neighbors", "Topic A", "--vault", "map", "--canvas", str(out)).code == 1
    assert cli("neighbors", "Topic A", "--vault", "map", "--canvas", str(home.root / "x.json")).code == 2


def test_a_canvas_takes_dry_run_and_log(topic_vault: Path, home: Home, cli: Any) -> None:
    inside = topic_vault / "maps" / "dry.canvas"
    dry = cli("neighbors", "Note 1", "--canvas", str(inside), "--dry-run", "--json")
    assert dry.code == 0, dry.err
    assert dry.json()["outcome"] == "dry_run" and not inside.exists()
    own = {"type": "GRAPH", "source": "cli-test", "note": "a map for the review"}
    made = cli("neighbors", "Note 1", "--canvas", str(inside), "--log", json.dumps(own))
    assert made.code == 0, made.err
    assert inside.exists() and "a map for the review" in (topic_vault / "log.md").read_text().splitlines()[-1]

    outside = home.root / "elsewhere" / "dry.canvas"
    outside.parent.mkdir()
    plain = cli("neighbors", "Topic A", "--vault", "map", "--canvas", str(outside), "--dry-run", "--json")
    assert plain.code == 0, plain.err
    assert plain.json() == {"path": str(outside), "nodes": plain.json()["nodes"], "edges": plain.json()["edges"], "dry_run": True}
    assert plain.json()["nodes"] > 0 and not outside.exists()
    assert "nothing was written" in cli("neighbors", "Topic A", "--vault", "map", "--canvas", str(outside), "--dry-run").out
    logged = cli("neighbors", "Topic A", "--vault", "map", "--canvas", str(outside), "--log", json.dumps(own))
    assert logged.code == 2 and "outside every vault" in logged.err and not outside.exists()
    assert cli("neighbors", "Note 1", "--dry-run").code == 2  # goes with --canvas


def test_cli_commands_print_their_tables(topic_vault: Path, cli: Any) -> None:
    for args, expect in (
        (("neighbors", "Note 1"), "HOPS"),
        (("communities", "--min-size", "1"), "modularity"),
        (("path", "Far", "Topic A"), "hop(s)"),
        (("hubs",), "PAGERANK"),
        (("mocs",), "Home MOC.md"),
    ):
        got = cli(*args, "--vault", "map")
        assert got.code == 0 and expect in got.out, (args, got.out, got.err)
    assert cli("path", "Far", "Island", "--vault", "map").code == 1


async def test_agents_see_no_private_note(topic_vault: Path, home: Home) -> None:
    async with agent(home) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in ("vault_lint", "graph"):  # graph: the neighbors, communities, path, nav, hubs and mocs views
            hints = tools[name].annotations
            assert hints is not None and hints.read_only_hint, name
        assert "graph_canvas" not in tools
        seen = json.dumps(
            [
                ok(await client.call_tool("graph_neighbors", {"vault": "map", "target": "Note 1", "hops": 3})),
                ok(await client.call_tool("graph_nav", {"vault": "map", "target": "Topic A"})),
                ok(await client.call_tool("graph_nav", {"vault": "map", "target": "Note 1"})),
                ok(await client.call_tool("graph_communities", {"vault": "map", "min_size": 1, "members": 100})),
                ok(await client.call_tool("graph_hubs", {"vault": "map", "limit": 100})),
                ok(await client.call_tool("graph_mocs", {"vault": "map"})),
                ok(await client.call_tool("vault_lint", {"vault": "map", "limit": 2000})),
            ]
        )
        assert "Secret" not in seen and "secretword" not in seen and "private/" not in seen
        hidden = await client.call_tool("graph_path", {"vault": "map", "source": "Note 1", "target": SECRET})
        assert hidden.is_error and "Secret" not in str(hidden.content).replace(SECRET, "")
        members = ok(await client.call_tool("graph_communities", {"vault": "map", "min_size": 1, "members": 100}))
        assert sorted(m for c in members["communities"] for m in c["members"]) == sorted(p for p in MAP if p != SECRET)


def test_sample_vault_golden(daemon: Daemon, raw: RawClient, sample_vault: Path) -> None:
    raw.call("vault.add", {"id": "sample", "path": str(sample_vault)})
    near = raw.call("graph.neighbors", {"target": "Alpha Plan"})
    assert [(n["path"], n["direction"], n["relation"]) for n in near["neighbors"]] == [
        ("README.md", "out", "up"),
        ("concepts/Link Syntax.md", "in", "link"),
        ("concepts/Zettelkasten.md", "in", "link"),
        ("daily/2024-05-01.md", "in", "link"),
        ("people/Ada Lovelace.md", "out", "link"),
        ("people/Grace Hopper.md", "out", "link"),
        ("projects/alpha/Meeting Notes.md", "in", "link"),
        ("projects/beta/Beta Overview.md", "out", "link"),
        ("projects/해외사업단 킥오프.md", "out", "link"),
    ]
    nav = raw.call("graph.nav", {"target": "Alpha Plan"})
    assert [e["path"] for e in nav["up"]] == ["README.md"]
    assert [e["title"] for e in nav["sources"]] == ["Ada Lovelace", "Beta Overview", "Grace Hopper", "해외사업단 킥오프"]
    assert [e["title"] for e in nav["cited_by"]] == ["2024-05-01", "Link Syntax", "Meeting Notes (Alpha)", "Zettelkasten"]
    assert raw.call("graph.mocs", {})["mocs"] == [
        {"path": "README.md", "title": "Sample vault", "incoming": 1, "outgoing": 14, "why": "type: moc"}
    ]
    embed = raw.call("graph.neighbors", {"target": "2024-05-01", "relation": "embed"})
    assert embed["neighbors"] == []  # diagram.png is an attachment, not a note of the graph
    route = raw.call("graph.path", {"source": "Grace Hopper", "target": "2024-05-02"})
    assert [(s["path"], s["direction"]) for s in route["steps"]] == [
        ("people/Grace Hopper.md", None),
        ("README.md", "in"),
        ("daily/2024-05-02.md", "out"),
    ]
