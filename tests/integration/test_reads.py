"""Every read through a real daemon over the socket and through the real CLI, on the sample vault."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.harness import REPO, Daemon, RawClient, snapshot
from tests.support.wait import wait_until

if TYPE_CHECKING:
    from pathlib import Path

EXPECTED = json.loads((REPO / "examples" / "sample-vault.expected.json").read_text(encoding="utf-8"))


@pytest.fixture
def vault(daemon: Daemon, raw: RawClient, sample_vault: Path) -> Path:
    raw.call("vault.add", {"id": "sample", "path": str(sample_vault)})
    return sample_vault


def _status(link: dict) -> str:  # type: ignore[type-arg]
    if link["status"] == "resolved" and link.get("anchor_ok") is False:
        return "bad-anchor"
    return str(link["status"])


def test_links_resolve_as_the_hand_written_expectations(vault: Path, raw: RawClient) -> None:
    checked = 0
    for path, note in EXPECTED["notes"].items():
        got = raw.call("note.links", {"target": path, "limit": 500})
        body_links = [o for o in got["out"] if o["kind"] != "frontmatter"]
        want = note["links"]
        assert [(o["target"], o.get("anchor")) for o in body_links] == [(w["target"], w["anchor"]) for w in want], path
        for o, w in zip(body_links, want, strict=True):
            assert o["status"] == _status(w), (path, w["raw"], o)
            if w["status"] == "resolved":
                assert o["resolved"] == w["path"]
            if w["status"] == "ambiguous":
                assert o["candidates"] == sorted(w["candidates"])
            checked += 1
    assert checked >= 40


def test_backlinks_are_the_inverse_of_resolved_links(vault: Path, raw: RawClient) -> None:
    expected: dict[str, set[str]] = {}
    for path, note in EXPECTED["notes"].items():
        for w in note["links"] + note["frontmatter_links"]:
            if w["status"] == "resolved" and w["path"] != path and w["path"].endswith(".md"):
                expected.setdefault(w["path"], set()).add(path)
    for target, sources in expected.items():
        got = raw.call("note.links", {"target": target, "limit": 500})
        assert {i["path"] for i in got["incoming"]} - {target} == sources, target


def test_dead_link_gets_one_suggestion(vault: Path, raw: RawClient) -> None:
    got = raw.call("note.links", {"target": "people/Grace Hopper.md"})
    dead = [o for o in got["dead"] if o["status"] == "missing"]
    assert dead and all(isinstance(o.get("suggestion"), (str, type(None))) for o in dead)


def test_search_ranks_title_and_finds_cjk_inside_words(vault: Path, raw: RawClient) -> None:
    hits = raw.call("note.search", {"query": "alpha plan"})["hits"]
    assert hits[0]["path"] == "projects/alpha/Alpha Plan.md"
    assert "**" in hits[0]["snippet"] and len(hits[0]["snippet"]) <= 320
    korean = raw.call("note.search", {"query": "사업단"})["hits"]
    assert any("해외사업단" in h["path"] for h in korean)
    for hostile in ['"', "a* OR b", "NEAR(a b)", "title:alpha", "-alpha", "(((", "^x", "AND"]:
        reply = raw.request("note.search", {"query": hostile})
        assert "result" in reply, (hostile, reply)


def test_search_filters_and_limits(vault: Path, raw: RawClient) -> None:
    by_folder = raw.call("note.search", {"query": "meeting", "folder": "projects/beta"})["hits"]
    assert by_folder and all(h["path"].startswith("projects/beta/") for h in by_folder)
    assert len(raw.call("note.search", {"query": "the", "limit": 1})["hits"]) <= 1
    for bad in [{"query": "x", "limit": 0}, {"query": "x", "limit": 501}, {"query": "x" * 1025}, {"query": "가" * 400}]:
        reply = raw.request("note.search", bad)
        assert reply["error"]["data"]["code"] == "INVALID_PARAMS", bad
    # An empty query is no error: with a filter it lists the filter's notes, without one nothing.
    assert raw.call("note.search", {"query": ""}) == {"hits": [], "did_you_mean": None}
    assert raw.call("note.search", {}) == {"hits": [], "did_you_mean": None}
    listed = raw.call("note.search", {"folder": "projects/beta"})["hits"]
    assert listed and all(h["path"].startswith("projects/beta/") and h["score"] == 0.0 for h in listed)


def test_read_by_path_name_and_alias_with_sections_and_paging(vault: Path, raw: RawClient) -> None:
    by_path = raw.call("note.read", {"target": "projects/alpha/Alpha Plan.md"})
    by_name = raw.call("note.read", {"target": "alpha plan"})
    assert by_path["sha256"] == by_name["sha256"] and by_path["path"] == by_name["path"]
    aliases: list[tuple[str, str]] = []  # aliases come from the notes' frontmatter below
    for p in EXPECTED["files"]:
        if p.endswith(".md"):
            fm = raw.call("note.read", {"target": p})["frontmatter"] or {}
            al = fm.get("aliases")
            aliases += [(a, p) for a in ([al] if isinstance(al, str) else al or [])]
    assert aliases
    alias, owner = aliases[0]
    assert raw.call("note.read", {"target": alias})["path"] == owner
    raw_bytes = (vault / by_path["path"]).read_bytes()
    import hashlib

    assert by_path["sha256"] == hashlib.sha256(raw_bytes).hexdigest()
    section = raw.call("note.read", {"target": "Alpha Plan", "section": "Goals"})
    assert section["body"].startswith("## Goals")
    pages, offset = [], 0
    while True:
        page = raw.call("note.read", {"target": "Alpha Plan", "offset": offset, "max_bytes": 37})
        pages.append(page["body"])
        assert len(page["body"].encode()) <= 37
        if page["next_offset"] is None:
            break
        offset = page["next_offset"]
    assert "".join(pages) == raw.call("note.read", {"target": "Alpha Plan", "max_bytes": 65536})["body"]
    inside = raw.request("note.read", {"target": "해외사업단 킥오프", "offset": 1, "max_bytes": 100})
    body = raw.call("note.read", {"target": "해외사업단 킥오프"})["body"]
    if body and len(body[0].encode()) > 1:
        assert inside["error"]["data"]["code"] == "INVALID_PARAMS"
    assert raw.request("note.read", {"target": "no such note"})["error"]["data"]["code"] == "NOT_FOUND"
    amb = raw.request("note.read", {"target": "Meeting Notes"})["error"]["data"]
    assert amb["code"] == "AMBIGUOUS" and len(amb["candidates"]) == 2
    assert raw.request("note.read", {"target": "Alpha Plan", "section": "Nope"})["error"]["data"]["code"] == "NOT_FOUND"
    assert raw.request("note.read", {"target": "x", "max_bytes": 65537})["error"]["code"] == -32602


def test_list_pages_stay_stable_when_notes_come_and_go(vault: Path, raw: RawClient) -> None:
    first = raw.call("note.list", {"limit": 5})
    assert first["total"] == len([f for f in EXPECTED["files"] if f.endswith(".md")])
    (vault / "000 first.md").write_text("# new\n")
    os.unlink(vault / first["notes"][0]["path"])
    raw.call("vault.stats", {"fresh": True})
    second = raw.call("note.list", {"limit": 5, "cursor": first["next_cursor"]})
    assert second["notes"][0]["path"] > first["notes"][-1]["path"]
    everything, cursor = [], None
    while True:
        page = raw.call("note.list", {"limit": 4, **({"cursor": cursor} if cursor else {})})
        everything += [n["path"] for n in page["notes"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert everything == sorted(everything) and len(everything) == page["total"]
    assert raw.request("note.list", {"cursor": "!!!"})["error"]["data"]["code"] == "INVALID_PARAMS"


def test_tags_stats_issues(vault: Path, raw: RawClient) -> None:
    (vault / "latin1.md").write_bytes(b"caf\xe9\n")
    (vault / "big.md").write_bytes(b"a" * (2 * 1024 * 1024 + 10))
    os.mkfifo(vault / "pipe.md")
    os.symlink(vault / "README.md", vault / "link.md")
    (vault / "broken.md").write_text("---\ntitle: [unclosed\n---\nbody\n")
    stats = raw.call("vault.stats", {"fresh": True})
    assert stats["notes"] >= 15 and stats["attachments"] == 1 and stats["dead_links"] >= 2
    assert stats["ambiguous_links"] >= 1
    issues = {i["path"]: i["code"] for i in raw.call("vault.issues")["issues"]}
    assert issues["latin1.md"] == "S02" and issues["big.md"] == "S01"
    assert issues["pipe.md"] == "S06" and issues["link.md"] == "S04" and issues["broken.md"] == "N01"
    tags = {t["tag"]: t["notes"] for t in raw.call("vault.tags")["tags"]}
    assert tags and all(n >= 1 for n in tags.values())
    nested = [t for t in tags if "/" in t]
    assert nested, "the sample vault has nested tags"
    parent = nested[0].split("/")[0]
    hits = raw.call("note.search", {"query": "the", "tag": parent, "limit": 50})["hits"]
    assert all(h["path"] for h in hits)


def test_external_edits_become_searchable(vault: Path, raw: RawClient) -> None:
    (vault / "inbox" / "fresh.md").write_text("# Fresh\nzygomorphic petals\n")
    assert raw.call("note.search", {"query": "zygomorphic", "fresh": True})["hits"][0]["path"] == "inbox/fresh.md"
    # temp file + rename, as editors save
    tmp = vault / "inbox" / ".fresh.md.swp"
    tmp.write_text("# Fresh\nquixotic lanterns\n")
    os.replace(tmp, vault / "inbox" / "fresh.md")
    hits = wait_until(lambda: raw.call("note.search", {"query": "quixotic"})["hits"], 10, "the note saved by rename to be searchable")
    assert hits and hits[0]["path"] == "inbox/fresh.md"
    assert raw.call("note.search", {"query": "zygomorphic", "fresh": True})["hits"] == []
    # a whole folder moved out and back in
    os.rename(vault / "projects" / "beta", vault.parent / "beta-out")
    assert not raw.call("note.search", {"query": "Beta Overview", "folder": "projects/beta", "fresh": True})["hits"]
    os.rename(vault.parent / "beta-out", vault / "projects" / "gamma")
    hits = raw.call("note.search", {"query": "Beta Overview", "fresh": True})["hits"]
    assert any(h["path"].startswith("projects/gamma/") for h in hits)


def test_reading_and_indexing_never_change_a_byte(daemon: Daemon, raw: RawClient, sample_vault: Path, cli: Any) -> None:
    before = snapshot(sample_vault)
    raw.call("vault.add", {"id": "sample", "path": str(sample_vault)})
    for p in EXPECTED["files"]:
        if p.endswith(".md"):
            raw.call("note.read", {"target": p})
            raw.call("note.links", {"target": p})
    for method in ("vault.stats", "vault.tags", "vault.issues", "note.list"):
        raw.call(method, {})
    raw.call("note.search", {"query": "alpha", "fresh": True})
    for args in (["search", "alpha"], ["show", "Alpha Plan"], ["links", "Alpha Plan"], ["list"], ["tags"], ["stats"], ["issues"]):
        assert cli(*args).code == 0, args
    assert snapshot(sample_vault) == before
    cache_files = list((daemon.home.home / "indexes").iterdir())
    assert cache_files and all((f.stat().st_mode & 0o077) == 0 for f in cache_files if f.suffix == ".sqlite")


def test_cli_reads_text_and_json(vault: Path, cli) -> None:  # type: ignore[no-untyped-def]
    out = cli("search", "alpha", "--json")
    assert out.code == 0 and out.json()["hits"]
    text = cli("search", "alpha")
    first = out.json()["hits"][0]
    assert text.out.splitlines()[0].startswith(first["path"]) and "**" not in text.out
    show = cli("show", "Alpha Plan", "--max-bytes", "20")
    assert "next page: vaultctl show" in show.err and "next page" not in show.out
    assert cli("show", "Meeting Notes").code == 1
    assert "candidates:" in cli("show", "Meeting Notes").err
    assert cli("links", "Alpha Plan").out.splitlines()[0] == "projects/alpha/Alpha Plan.md"
    assert cli("list", "--json").json()["total"] >= 15
    assert cli("stats", "--json").json()["vault"] == "sample"
    in_vault = cli("list", "--json", cwd=vault / "projects")
    assert in_vault.code == 0 and in_vault.json()["total"] >= 15


def test_warm_restart_reuses_the_cache(home, tmp_path: Path, sample_vault: Path) -> None:  # type: ignore[no-untyped-def]
    d = Daemon(home)
    c = RawClient(home.socket)
    c.hello()
    c.call("vault.add", {"id": "s", "path": str(sample_vault)})
    d.stop()
    (sample_vault / "inbox" / "Ideas.md").write_text("# Ideas\nchanged while stopped: xylophone\n")
    d2 = Daemon(home)
    try:
        c2 = RawClient(home.socket)
        c2.hello()
        assert c2.call("note.search", {"query": "xylophone"})["hits"][0]["path"] == "inbox/Ideas.md"
        log = (home.home / "logs" / "vaultd.log").read_text()
        ready = [json.loads(line) for line in log.splitlines() if '"index ready"' in line]
        assert "1 parsed" in ready[-1]["detail"] and "reused" in ready[-1]["detail"]
    finally:
        d2.stop()
