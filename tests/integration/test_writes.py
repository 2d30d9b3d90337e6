"""Each write operation's happy path and its refusals, through the socket and the real CLI."""

from __future__ import annotations

import hashlib
import json
import threading
from typing import TYPE_CHECKING

import pytest

from tests.support.harness import Daemon, RawClient, snapshot

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def vault(daemon: Daemon, raw: RawClient, sample_vault: Path) -> Path:
    raw.call("vault.add", {"id": "sample", "path": str(sample_vault)})
    return sample_vault


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _err(reply: dict) -> dict:  # type: ignore[type-arg]
    assert "error" in reply, reply
    return reply["error"]["data"]  # type: ignore[no-any-return]


def test_create_then_read_search_and_log(vault: Path, raw: RawClient) -> None:
    r = raw.call(
        "note.create",
        {
            "path": "inbox/New Idea",
            "title": "New Idea",
            "frontmatter": {"type": "insight"},
            "body": "# New Idea\n\nA quokka-shaped thought.\n",
        },
    )
    assert r["applied"] and r["op_id"] and r["changes"][0]["action"] == "create"
    text = (vault / "inbox" / "New Idea.md").read_text()
    assert text.startswith("---\n") and "type: insight" in text and "created:" in text and "quokka" in text
    assert r["changes"][0]["after_sha"] == _sha(vault / "inbox" / "New Idea.md")
    hits = raw.call("note.search", {"query": "quokka"})["hits"]  # searchable as soon as the receipt arrives
    assert hits and hits[0]["path"] == "inbox/New Idea.md"
    assert r["log"]["appended"] and "EXTRACT" in r["log"]["line"]
    assert (vault / "log.md").read_text().endswith(r["log"]["line"] + "\n")
    again = raw.request("note.create", {"path": "inbox/new idea.md"})
    assert _err(again)["code"] in ("CONFLICT", "VALIDATION")


def test_dry_run_writes_nothing(vault: Path, raw: RawClient) -> None:
    before = snapshot(vault)
    r = raw.call("note.create", {"path": "x/dry", "dry_run": True})
    assert r["dry_run"] and not r["applied"] and r["changes"][0]["path"] == "x/dry.md"
    assert snapshot(vault) == before and not (vault / "x").exists()


def test_patch_single_and_edits_all_or_nothing(vault: Path, raw: RawClient) -> None:
    path = vault / "people" / "Ada Lovelace.md"
    text = path.read_text()
    assert "Pairs with" in text
    r = raw.call("note.patch", {"target": "Ada Lovelace", "old": "Pairs with", "new": "Works with"})
    assert r["applied"] and "Works with" in path.read_text()
    before = path.read_bytes()
    bad = raw.request(
        "note.patch", {"target": "Ada Lovelace", "edits": [{"old": "Works with", "new": "x"}, {"old": "no such text anywhere", "new": "y"}]}
    )
    assert _err(bad)["code"] == "VALIDATION" and path.read_bytes() == before
    assert _err(raw.request("note.patch", {"target": "Ada Lovelace", "old": "a", "new": "b"}))["code"] == "VALIDATION"
    both = raw.request("note.patch", {"target": "Ada Lovelace", "old": "x", "new": "y", "edits": [{"old": "a", "new": "b"}]})
    assert _err(both)["code"] == "INVALID_PARAMS"
    fm = raw.request("note.patch", {"target": "Ada Lovelace", "old": "writes the indexer", "new": "x"})
    assert _err(fm)["code"] == "VALIDATION"


def test_expected_sha_and_concurrent_writers(vault: Path, raw: RawClient, daemon: Daemon) -> None:
    read = raw.call("note.read", {"target": "Grace Hopper"})
    stale = raw.request("note.patch", {"target": "Grace Hopper", "old": "Grace", "new": "G.", "expected_sha": "0" * 64})
    assert _err(stale)["code"] == "CONFLICT"
    results: list[dict] = []  # type: ignore[type-arg]

    def writer(word: str) -> None:
        c = RawClient(daemon.home.socket)
        c.hello()
        results.append(
            c.request("note.append", {"target": "Grace Hopper", "section": "Log", "markdown": word, "expected_sha": read["sha256"]})
        )

    threads = [threading.Thread(target=writer, args=(w,)) for w in ("first-writer", "second-writer")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ok = [r for r in results if "result" in r]
    refused = [r for r in results if "error" in r]
    assert len(ok) == 1 and len(refused) == 1 and refused[0]["error"]["data"]["code"] == "CONFLICT"
    text = (vault / "people" / "Grace Hopper.md").read_text()
    assert ("first-writer" in text) != ("second-writer" in text)


def test_append_creates_section_before_topics_and_set_frontmatter_is_lossless(vault: Path, raw: RawClient) -> None:
    raw.call("note.create", {"path": "t/topics", "body": "# T\n\nintro\n\n## Topics\n\n- [[Alpha Plan]]\n"})
    raw.call("note.append", {"target": "t/topics", "section": "Evidence", "markdown": "- one"})
    text = (vault / "t" / "topics.md").read_text()
    assert text.index("## Evidence") < text.index("## Topics") and "- one" in text
    raw.call("note.append", {"target": "t/topics", "section": "Evidence", "markdown": "- two"})
    text = (vault / "t" / "topics.md").read_text()
    assert text.index("- one") < text.index("- two") < text.index("## Topics")
    assert _err(raw.request("note.append", {"target": "t/topics", "section": "Topics", "markdown": "x"}))["code"] == "INVALID_PARAMS"
    path = vault / "concepts" / "Link Syntax.md"
    before_lines = path.read_text().splitlines()
    raw.call("note.set_frontmatter", {"target": "Link Syntax", "set": {"status": "draft"}})
    after_lines = path.read_text().splitlines()
    changed = [ln for ln in after_lines if ln not in before_lines]
    assert changed and all(ln.startswith(("status:", "updated:")) for ln in changed)
    assert [ln for ln in before_lines if ln not in after_lines] == [ln for ln in before_lines if ln.startswith("updated:")]


def test_new_dead_links_warn_in_the_open_profile_and_old_ones_only_warn(vault: Path, raw: RawClient) -> None:
    # A link to a note not written yet (a forward link) is everyday Obsidian: written, and reported.
    forward = raw.call("note.create", {"path": "d/dead", "body": "see [[Nowhere At All]]\n"})
    assert forward["applied"] and (vault / "d" / "dead.md").read_text().endswith("---\nsee [[Nowhere At All]]\n")
    [warning] = [w for w in forward["warnings"] if w["code"] == "V03"]
    assert warning["severity"] == "warning" and "Nowhere At All" in warning["message"] and warning["line"] == 5
    assert [d["target"] for d in raw.call("note.links", {"target": "d/dead"})["dead"]] == ["Nowhere At All"]
    # An ambiguous link is still refused: no later note can make it name one note.
    ambiguous = raw.request("note.create", {"path": "d/amb", "body": "see [[Meeting Notes]]\n"})
    assert _err(ambiguous)["code"] == "VALIDATION" and _err(ambiguous)["issues"][0]["code"] == "V03"
    assert not (vault / "d" / "amb.md").exists()
    ok = raw.call("note.create", {"path": "d/ok", "body": "see [[Alpha Plan]]\n"})
    assert ok["applied"] and not ok["warnings"]
    dead_holder = raw.call("note.links", {"target": "people/Grace Hopper.md"})
    assert dead_holder["dead"], "the sample vault has a dead link here"
    r = raw.call("note.append", {"target": "people/Grace Hopper.md", "section": "More", "markdown": "fine"})
    assert r["applied"] and any(w["code"] == "V03" for w in r["warnings"])


def test_secrets_are_refused_without_echo(vault: Path, raw: RawClient, daemon: Daemon) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    reply = raw.request("note.create", {"path": "s/leak", "body": f"my token {token}\n"})
    data = _err(reply)
    assert data["code"] == "VALIDATION" and any(i["code"] == "V06" for i in data["issues"])
    assert token not in json.dumps(reply)
    assert not (vault / "s").exists()
    logs = (daemon.home.home / "logs" / "vaultd.log").read_text()
    assert token not in logs and (not (vault / "log.md").exists() or token not in (vault / "log.md").read_text())


def test_write_policy_by_channel(daemon: Daemon, tmp_path: Path) -> None:
    (tmp_path / "v").mkdir()
    cli_only = RawClient(daemon.home.socket)
    cli_only.hello("cli")
    cli_only.call("vault.add", {"id": "clionly", "path": str(tmp_path / "v"), "write": "cli"})
    mcp = RawClient(daemon.home.socket)
    mcp.hello("mcp")
    refused = mcp.request("note.create", {"vault": "clionly", "path": "x"})
    assert _err(refused)["code"] == "POLICY"
    assert cli_only.call("note.create", {"vault": "clionly", "path": "x"})["applied"]


def test_undo_round_trip_and_conflict(vault: Path, raw: RawClient) -> None:
    before = snapshot(vault)
    r = raw.call("note.patch", {"target": "Alpha Plan", "old": "ships the search", "new": "ships the find"})
    ops = raw.call("op.list", {})["ops"]
    assert ops[0]["op_id"] == r["op_id"]
    u = raw.call("op.undo", {"op_id": r["op_id"]})
    assert u["applied"]
    after = snapshot(vault)
    after.pop("log.md", None)
    before.pop("log.md", None)
    assert after == before
    r2 = raw.call("note.patch", {"target": "Alpha Plan", "old": "ships the search", "new": "ships the find"})
    path = vault / "projects" / "alpha" / "Alpha Plan.md"
    path.write_text(path.read_text() + "\nedited by hand\n")
    raw.call("vault.stats", {"fresh": True})
    conflict = _err(raw.request("op.undo", {"op_id": r2["op_id"]}))
    assert conflict["code"] == "CONFLICT" and "projects/alpha/Alpha Plan.md" in conflict["message"]


def test_log_append_tail_grep(vault: Path, raw: RawClient) -> None:
    r = raw.call("log.append", {"event": {"type": "TASK", "source": "test:suite", "note": "a plain note"}})
    assert r["appended"] and "  TASK  -  test:suite  —  a plain note" in r["line"]
    assert raw.call("log.tail", {"limit": 1})["lines"] == [r["line"]]
    assert raw.call("log.grep", {"pattern": "plain n.te"})["lines"] == [r["line"]]
    assert _err(raw.request("log.grep", {"pattern": "(a)\\1"}))["code"] == "INVALID_PARAMS"
    bad = raw.request("log.append", {"event": {"type": "TASK", "source": "a  b", "note": "x"}})
    assert _err(bad)["code"] == "VALIDATION"
    before = (vault / "log.md").read_bytes() + b"torn"
    (vault / "log.md").write_bytes(before)
    torn = raw.call("log.append", {"event": {"type": "TASK", "source": "s", "note": "n"}})
    assert torn["appended"]  # the unfinished last line is ended, never joined to the new event
    assert (vault / "log.md").read_bytes() == before + b"\n" + torn["line"].encode() + b"\n"


def test_cli_writes_text_and_json(vault: Path, cli) -> None:  # type: ignore[no-untyped-def]
    out = cli("new", "cli/made", "--title", "Made", "--set", '{"type": "insight"}', "--json")
    assert out.code == 0, out.err
    receipt = out.json()
    assert receipt["applied"] and receipt["changes"][0]["path"] == "cli/made.md"
    text = cli("patch", "Made", "--old", "# Made", "--new", "# Made by CLI")
    assert text.code == 0 and text.out.startswith("applied note.patch (op ")
    stale = cli("patch", "Made", "--old", "CLI", "--new", "x", "--expected-sha", "0" * 64)
    assert stale.code == 75
    assert cli("append", "Made", "--section", "Notes", "--markdown", "hello").code == 0
    assert cli("set", "Made", "--set", '{"status": "draft"}', "--unset", "type").code == 0
    assert "status: draft" in (vault / "cli" / "made.md").read_text()
    assert cli("ops").out.splitlines()[0].split()[:2] == ["OP", "ID"]
    assert cli("new", "cli/made").code == 1
    assert cli("log", "tail", "--limit", "2").code == 0
    assert cli("new", "x", "--set", "{not json").code == 2
