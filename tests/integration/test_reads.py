"""Every read through a real daemon over the socket and through the real CLI, on the sample vault."""

from __future__ import annotations

import hashlib
import json
import os
from typing import TYPE_CHECKING, Any

import pytest

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.methods.reads import (
    ISSUES,
    LINKS,
    LIST,
    READ,
    SEARCH,
    STATS,
    TAGS,
    IssuesParams,
    LinkKind,
    LinksParams,
    LinkStatus,
    ListParams,
    ReadParams,
    SearchParams,
    SearchResult,
    StatsParams,
    TagsParams,
)
from protocol.methods.vaults import VAULT_ADD, VaultAddParams
from tests.support.harness import REPO, Daemon, Home, RawClient, snapshot
from tests.support.typed import TypedClient, TypedClients, refused
from tests.support.wait import wait_until
from vaultctl.client import CallError

if TYPE_CHECKING:
    from pathlib import Path

EXPECTED = json.loads((REPO / "examples" / "sample-vault.expected.json").read_text(encoding="utf-8"))


@pytest.fixture
def vault(typed: TypedClient, sample_vault: Path) -> Path:
    typed.call(VAULT_ADD, VaultAddParams(id="sample", path=str(sample_vault)))
    return sample_vault


def _status(link: dict) -> str:  # type: ignore[type-arg]
    if link["status"] == "resolved" and link.get("anchor_ok") is False:
        return "bad-anchor"
    return str(link["status"])


def test_links_resolve_as_the_hand_written_expectations(vault: Path, typed: TypedClient) -> None:
    checked = 0
    for path, note in EXPECTED["notes"].items():
        got = typed.call(LINKS, LinksParams(target=path, limit=500))
        body_links = [o for o in got.out if o.kind is not LinkKind.FRONTMATTER]
        want = note["links"]
        assert [(o.target, o.anchor) for o in body_links] == [(w["target"], w["anchor"]) for w in want], path
        for o, w in zip(body_links, want, strict=True):
            assert o.status == _status(w), (path, w["raw"], o)
            if w["status"] == "resolved":
                assert o.resolved == w["path"]
            if w["status"] == "ambiguous":
                assert o.candidates == sorted(w["candidates"])
            checked += 1
    assert checked >= 40


def test_backlinks_are_the_inverse_of_resolved_links(vault: Path, typed: TypedClient) -> None:
    expected: dict[str, set[str]] = {}
    for path, note in EXPECTED["notes"].items():
        for w in note["links"] + note["frontmatter_links"]:
            if w["status"] == "resolved" and w["path"] != path and w["path"].endswith(".md"):
                expected.setdefault(w["path"], set()).add(path)
    for target, sources in expected.items():
        got = typed.call(LINKS, LinksParams(target=target, limit=500))
        assert {i.path for i in got.incoming} - {target} == sources, target


def test_dead_link_gets_one_suggestion(vault: Path, typed: TypedClient) -> None:
    got = typed.call(LINKS, LinksParams(target="people/Grace Hopper.md"))
    dead = [o for o in got.dead if o.status is LinkStatus.MISSING]
    assert dead
    assert all(isinstance(o.suggestion, (str, type(None))) for o in dead)


def test_search_ranks_title_and_finds_cjk_inside_words(vault: Path, typed: TypedClient) -> None:
    hits = typed.call(SEARCH, SearchParams(query="alpha plan")).hits
    assert hits[0].path == "projects/alpha/Alpha Plan.md"
    assert "**" in hits[0].snippet
    assert len(hits[0].snippet) <= 320
    korean = typed.call(SEARCH, SearchParams(query="사업단")).hits
    assert any("해외사업단" in h.path for h in korean)
    for hostile in ['"', "a* OR b", "NEAR(a b)", "title:alpha", "-alpha", "(((", "^x", "AND"]:
        try:
            typed.call(SEARCH, SearchParams(query=hostile))
        except CallError as exc:
            pytest.fail(f"the search {hostile!r} was refused: {exc.data}")


def test_search_filters_and_limits(vault: Path, typed: TypedClient) -> None:
    by_folder = typed.call(SEARCH, SearchParams(query="meeting", folder="projects/beta")).hits
    assert by_folder
    assert all(h.path.startswith("projects/beta/") for h in by_folder)
    assert len(typed.call(SEARCH, SearchParams(query="the", limit=1)).hits) <= 1
    for bad in [
        SearchParams(query="x", limit=0),
        SearchParams(query="x", limit=501),
        SearchParams(query="x" * 1025),
        SearchParams(query="가" * 400),
    ]:
        with refused(ErrorCode.INVALID_PARAMS):
            typed.call(SEARCH, bad)
    # An empty query is no error: with a filter it lists the filter's notes, without one nothing.
    assert typed.call(SEARCH, SearchParams(query="")) == SearchResult(hits=[], did_you_mean=None)
    assert typed.call_with(SEARCH, {}) == SearchResult(hits=[], did_you_mean=None)  # no query at all, not even ""
    listed = typed.call(SEARCH, SearchParams(folder="projects/beta")).hits
    assert listed
    assert all(h.path.startswith("projects/beta/") for h in listed)
    assert all(h.score == 0.0 for h in listed)


def test_read_by_path_name_and_alias_with_sections_and_paging(vault: Path, typed: TypedClient, raw: RawClient) -> None:
    by_path = typed.call(READ, ReadParams(target="projects/alpha/Alpha Plan.md"))
    by_name = typed.call(READ, ReadParams(target="alpha plan"))
    assert by_path.sha256 == by_name.sha256
    assert by_path.path == by_name.path
    aliases: list[tuple[str, str]] = []  # aliases come from the notes' frontmatter below
    for p in EXPECTED["files"]:
        if p.endswith(".md"):
            fm = typed.call(READ, ReadParams(target=p)).frontmatter or {}
            al = fm.get("aliases")
            aliases += [(a, p) for a in ([al] if isinstance(al, str) else al or [])]
    assert aliases
    alias, owner = aliases[0]
    assert typed.call(READ, ReadParams(target=alias)).path == owner
    raw_bytes = (vault / by_path.path).read_bytes()
    assert by_path.sha256 == hashlib.sha256(raw_bytes).hexdigest()
    section = typed.call(READ, ReadParams(target="Alpha Plan", section="Goals"))
    assert section.body.startswith("## Goals")
    pages: list[str] = []
    offset = 0
    while True:
        page = typed.call(READ, ReadParams(target="Alpha Plan", offset=offset, max_bytes=37))
        pages.append(page.body)
        assert len(page.body.encode()) <= 37
        if page.next_offset is None:
            break
        offset = page.next_offset
    assert "".join(pages) == typed.call(READ, ReadParams(target="Alpha Plan", max_bytes=65536)).body
    body = typed.call(READ, ReadParams(target="해외사업단 킥오프")).body
    if body and len(body[0].encode()) > 1:
        with refused(ErrorCode.INVALID_PARAMS):  # offset 1 falls inside the first character
            typed.call(READ, ReadParams(target="해외사업단 킥오프", offset=1, max_bytes=100))
    with refused(ErrorCode.NOT_FOUND):
        typed.call(READ, ReadParams(target="no such note"))
    with refused(ErrorCode.AMBIGUOUS) as amb:
        typed.call(READ, ReadParams(target="Meeting Notes"))
    assert len(amb.data.candidates) == 2
    with refused(ErrorCode.NOT_FOUND):
        typed.call(READ, ReadParams(target="Alpha Plan", section="Nope"))
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(READ, ReadParams(target="x", max_bytes=65537))
    # the frame's own JSON-RPC code, which a client reads only from the raw frame
    assert raw.request(READ.name, {"target": "x", "max_bytes": 65537})["error"]["code"] == -32602


def test_list_pages_stay_stable_when_notes_come_and_go(vault: Path, typed: TypedClient) -> None:
    first = typed.call(LIST, ListParams(limit=5))
    assert first.total == len([f for f in EXPECTED["files"] if f.endswith(".md")])
    (vault / "000 first.md").write_text("# new\n")
    os.unlink(vault / first.notes[0].path)
    typed.call(STATS, StatsParams(fresh=True))
    second = typed.call(LIST, ListParams(limit=5, cursor=first.next_cursor))
    assert second.notes[0].path > first.notes[-1].path
    everything: list[str] = []
    cursor = None
    while True:
        page = typed.call(LIST, ListParams(limit=4, cursor=cursor))
        everything += [n.path for n in page.notes]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert everything == sorted(everything)
    assert len(everything) == page.total
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(LIST, ListParams(cursor="!!!"))


def test_tags_stats_issues(vault: Path, typed: TypedClient) -> None:
    (vault / "latin1.md").write_bytes(b"caf\xe9\n")
    (vault / "big.md").write_bytes(b"a" * (2 * 1024 * 1024 + 10))
    os.mkfifo(vault / "pipe.md")
    os.symlink(vault / "README.md", vault / "link.md")
    (vault / "broken.md").write_text("---\ntitle: [unclosed\n---\nbody\n")
    stats = typed.call(STATS, StatsParams(fresh=True))
    assert stats.notes >= 15
    assert stats.attachments == 1
    assert stats.dead_links >= 2
    assert stats.ambiguous_links >= 1
    issues = {i.path: i.code for i in typed.call(ISSUES, IssuesParams()).issues}
    assert issues["latin1.md"] == IssueCode.S02
    assert issues["big.md"] == IssueCode.S01
    assert issues["pipe.md"] == IssueCode.S06
    assert issues["link.md"] == IssueCode.S04
    assert issues["broken.md"] == IssueCode.N01
    tags = {t.tag: t.notes for t in typed.call(TAGS, TagsParams()).tags}
    assert tags
    assert all(n >= 1 for n in tags.values())
    nested = [t for t in tags if "/" in t]
    assert nested, "the sample vault has nested tags"
    parent = nested[0].split("/")[0]
    hits = typed.call(SEARCH, SearchParams(query="the", tag=parent, limit=50)).hits
    assert all(h.path for h in hits)


def test_external_edits_become_searchable(vault: Path, typed: TypedClient) -> None:
    (vault / "inbox" / "fresh.md").write_text("# Fresh\nzygomorphic petals\n")
    assert typed.call(SEARCH, SearchParams(query="zygomorphic", fresh=True)).hits[0].path == "inbox/fresh.md"
    # temp file + rename, as editors save
    tmp = vault / "inbox" / ".fresh.md.swp"
    tmp.write_text("# Fresh\nquixotic lanterns\n")
    os.replace(tmp, vault / "inbox" / "fresh.md")
    hits = wait_until(lambda: typed.call(SEARCH, SearchParams(query="quixotic")).hits, 10, "the note saved by rename to be searchable")
    assert hits
    assert hits[0].path == "inbox/fresh.md"
    assert typed.call(SEARCH, SearchParams(query="zygomorphic", fresh=True)).hits == []
    # a whole folder moved out and back in
    os.rename(vault / "projects" / "beta", vault.parent / "beta-out")
    assert not typed.call(SEARCH, SearchParams(query="Beta Overview", folder="projects/beta", fresh=True)).hits
    os.rename(vault.parent / "beta-out", vault / "projects" / "gamma")
    hits = typed.call(SEARCH, SearchParams(query="Beta Overview", fresh=True)).hits
    assert any(h.path.startswith("projects/gamma/") for h in hits)


def test_reading_and_indexing_never_change_a_byte(daemon: Daemon, typed: TypedClient, sample_vault: Path, cli: Any) -> None:
    before = snapshot(sample_vault)
    typed.call(VAULT_ADD, VaultAddParams(id="sample", path=str(sample_vault)))
    for p in EXPECTED["files"]:
        if p.endswith(".md"):
            typed.call(READ, ReadParams(target=p))
            typed.call(LINKS, LinksParams(target=p))
    typed.call(STATS, StatsParams())
    typed.call(TAGS, TagsParams())
    typed.call(ISSUES, IssuesParams())
    typed.call(LIST, ListParams())
    typed.call(SEARCH, SearchParams(query="alpha", fresh=True))
    for args in (["search", "alpha"], ["show", "Alpha Plan"], ["links", "Alpha Plan"], ["list"], ["tags"], ["stats"], ["issues"]):
        assert cli(*args).code == 0, args
    assert snapshot(sample_vault) == before
    cache_files = list((daemon.home.home / "indexes").iterdir())
    assert cache_files
    assert all((f.stat().st_mode & 0o077) == 0 for f in cache_files if f.suffix == ".sqlite")


def test_cli_reads_text_and_json(vault: Path, cli) -> None:  # type: ignore[no-untyped-def]
    out = cli("search", "alpha", "--json")
    assert out.code == 0
    assert out.json()["hits"]
    text = cli("search", "alpha")
    first = out.json()["hits"][0]
    assert text.out.splitlines()[0].startswith(first["path"])
    assert "**" not in text.out
    show = cli("show", "Alpha Plan", "--max-bytes", "20")
    assert "next page: vaultctl show" in show.err
    assert "next page" not in show.out
    assert cli("show", "Meeting Notes").code == 1
    assert "candidates:" in cli("show", "Meeting Notes").err
    assert cli("links", "Alpha Plan").out.splitlines()[0] == "projects/alpha/Alpha Plan.md"
    assert cli("list", "--json").json()["total"] >= 15
    assert cli("stats", "--json").json()["vault"] == "sample"
    in_vault = cli("list", "--json", cwd=vault / "projects")
    assert in_vault.code == 0
    assert in_vault.json()["total"] >= 15


def test_warm_restart_reuses_the_cache(home: Home, typed_clients: TypedClients, sample_vault: Path) -> None:
    d = Daemon(home)
    typed_clients.open(home).call(VAULT_ADD, VaultAddParams(id="s", path=str(sample_vault)))
    d.stop()
    (sample_vault / "inbox" / "Ideas.md").write_text("# Ideas\nchanged while stopped: xylophone\n")
    d2 = Daemon(home)
    try:
        again = typed_clients.open(home)
        assert again.call(SEARCH, SearchParams(query="xylophone")).hits[0].path == "inbox/Ideas.md"
        log = (home.home / "logs" / "vaultd.log").read_text()
        ready = [json.loads(line) for line in log.splitlines() if '"index ready"' in line]
        assert "1 parsed" in ready[-1]["detail"]
        assert "reused" in ready[-1]["detail"]
    finally:
        d2.stop()
