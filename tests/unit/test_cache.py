"""The derived SQLite cache: file handling, records, search, ranking, filters, CJK, snippets."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import apsw
import pytest

from vaultd.errors import Unavailable
from vaultd.vault import fts_query
from vaultd.vault.cache import (
    SCHEMA_VERSION,
    CacheStats,
    IndexCache,
    OpenOutcome,
    SearchDoc,
    cache_file_name,
    sqlite_file,
)
from vaultd.vault.model import Heading, Link, LinkKind, NoteRecord, Tag
from vaultd.vault.note_table import NoteTable

if TYPE_CHECKING:
    from collections.abc import Iterator

FILLER = "plain words about nothing in particular, written to give the ranking a corpus"


def record(path: str, **changes: object) -> NoteRecord:
    fields: dict[str, object] = {
        "path": path,
        "size": 100,
        "mtime_ns": 1_700_000_000_000_000_000,
        "ino": 12345,
        "sha256": "ab" * 32,
        "title": Path(path).stem,
        "frontmatter": {"type": "insight"},
        "aliases": [],
        "tags": [],
        "headings": [Heading(level=1, text="H", line=3)],
        "blocks": [],
        "links": [Link(kind=LinkKind.WIKI, target="x", anchor=None, label=None, line=4, start=1, end=6)],
        "issues": [],
        "words": 10,
        "body_offset": 0,
    }
    fields.update(changes)
    return NoteRecord(**fields)  # type: ignore[arg-type]


def note(path: str, body: str = FILLER, **doc: object) -> tuple[NoteRecord, SearchDoc]:
    title = str(doc.pop("title", Path(path).stem))
    return record(path, title=title), SearchDoc(title=title, body=body, **doc)  # type: ignore[arg-type]


def fillers(n: int = 12) -> list[tuple[NoteRecord, SearchDoc]]:
    """Notes without the search terms, so bm25's IDF is positive for rare terms."""
    return [note(f"filler/{i:02}.md", f"{FILLER} number {i}") for i in range(n)]


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[IndexCache]:
    c = IndexCache.open(tmp_path / "c.sqlite")
    yield c
    c.close()


def paths(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.path for h in hits]


# -- the file ------------------------------------------------------------------------------------


def test_create_schema_mode_and_wal(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    c = IndexCache.open(path)
    assert c.outcome is OpenOutcome.CREATED and not c.rebuilt
    c.apply([note("a.md")])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for sidecar in ("-wal", "-shm"):
        assert stat.S_IMODE(Path(f"{path}{sidecar}").stat().st_mode) == 0o600
    c.close()
    con = apsw.Connection(str(path))
    assert con.execute("PRAGMA journal_mode").get == "wal"
    assert con.execute("PRAGMA user_version").get // 1000 == SCHEMA_VERSION
    names = {r[0] for r in con.execute("SELECT name FROM sqlite_schema")}
    assert {"note", "record", "tag", "fts", "cjk"} <= names
    con.close()
    again = IndexCache.open(path)
    assert again.outcome is OpenOutcome.REUSED
    assert list(again.load_encoded()) == ["a.md"]
    again.close()


def test_loose_mode_is_tightened(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    IndexCache.open(path).close()
    path.chmod(0o644)
    IndexCache.open(path).close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_symlink_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_bytes(b"precious")
    link = tmp_path / "c.sqlite"
    link.symlink_to(target)
    with pytest.raises(Unavailable, match="symlink|cannot open"):
        IndexCache.open(link)
    assert target.read_bytes() == b"precious"
    dangling = tmp_path / "d.sqlite"
    dangling.symlink_to(tmp_path / "missing")
    with pytest.raises(Unavailable):
        IndexCache.open(dangling)
    assert not (tmp_path / "missing").exists()


def test_symlinked_sidecar_refused(tmp_path: Path) -> None:
    Path(f"{tmp_path / 'c.sqlite'}-wal").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(Unavailable, match="symlink"):
        IndexCache.open(tmp_path / "c.sqlite")


def test_directory_refused(tmp_path: Path) -> None:
    (tmp_path / "c.sqlite").mkdir()
    with pytest.raises(Unavailable):
        IndexCache.open(tmp_path / "c.sqlite")


def test_file_locked_by_another_process_is_not_deleted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_file, "_BUSY_TIMEOUT_MS", 50)
    path = tmp_path / "c.sqlite"
    IndexCache.open(path).close()
    other = apsw.Connection(str(path))
    other.execute("PRAGMA locking_mode = EXCLUSIVE")  # not even WAL readers get in
    other.execute("BEGIN EXCLUSIVE")
    other.execute("DELETE FROM note")
    try:
        with pytest.raises(Unavailable, match="in use"):
            IndexCache.open(path)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert IndexCache.open(path).outcome is OpenOutcome.REUSED


def test_garbage_file_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    path.write_bytes(os.urandom(8192))
    c = IndexCache.open(path)
    assert c.outcome is OpenOutcome.REBUILT_CORRUPT and c.rebuilt and c.detail
    assert c.load_encoded() == {}
    c.apply([note("a.md", "findable words")])
    assert paths(c.search("findable")) == ["a.md"]
    c.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_version_mismatch_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    c = IndexCache.open(path)
    c.apply([note("a.md")])
    c.close()
    con = apsw.Connection(str(path))
    con.execute("PRAGMA user_version = 999")
    con.close()
    c = IndexCache.open(path)
    assert c.outcome is OpenOutcome.REBUILT_VERSION and c.rebuilt
    assert c.load_encoded() == {}
    c.close()


def test_foreign_database_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    con = apsw.Connection(str(path))
    con.execute("CREATE TABLE other(x)")
    con.close()
    c = IndexCache.open(path)
    assert c.outcome is OpenOutcome.REBUILT_VERSION
    c.close()


def _corrupt_table(path: Path, table: str) -> None:
    con = apsw.Connection(str(path))
    page_size = con.execute("PRAGMA page_size").get
    root = con.execute("SELECT rootpage FROM sqlite_schema WHERE name = ?", (table,)).get
    con.close()
    with open(path, "r+b") as f:
        f.seek((root - 1) * page_size)
        f.write(b"\xff" * page_size)


def test_damaged_pages_found_by_verify(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    c = IndexCache.open(path)
    c.apply(fillers())
    c.close()
    _corrupt_table(path, "record")
    c = IndexCache.open(path, verify=True)
    assert c.outcome is OpenOutcome.REBUILT_CORRUPT
    assert c.stats().rows == 0
    c.close()


def test_damage_found_later_resets(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    c = IndexCache.open(path)
    c.apply(fillers())
    c.close()
    _corrupt_table(path, "record")
    c = IndexCache.open(path)  # no quick_check: the damage is met by load_encoded
    assert c.outcome is OpenOutcome.REUSED
    assert c.load_encoded() == {}
    assert c.outcome is OpenOutcome.REBUILT_CORRUPT and c.generation == 1  # type: ignore[comparison-overlap]
    c.apply([note("a.md", "back again")])
    assert paths(c.search("again")) == ["a.md"]
    c.close()


def test_damage_found_by_search_resets_and_raises(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    c = IndexCache.open(path)
    c.apply(fillers())
    c.close()
    _corrupt_table(path, "note")
    c = IndexCache.open(path)
    with pytest.raises(Unavailable, match="damaged"):
        c.search("plain")
    assert c.generation == 1 and c.stats().rows == 0
    c.close()


def test_cache_file_name() -> None:
    name = cache_file_name("/home/me/vault")
    assert name == cache_file_name("/home/me/vault") != cache_file_name("/home/me/vault2")
    stem, suffix = name.split("-v")
    assert len(stem) == 16 and int(stem, 16) >= 0
    assert suffix == f"{SCHEMA_VERSION}.sqlite"


def test_closed_cache_refuses(tmp_path: Path) -> None:
    c = IndexCache.open(tmp_path / "c.sqlite")
    c.close()
    c.close()
    with pytest.raises(Unavailable):
        c.search("x")
    with pytest.raises(Unavailable):
        c.apply([note("a.md")])


# -- records -------------------------------------------------------------------------------------


def test_records_round_trip_update_delete(cache: IndexCache) -> None:
    big_inode = record("a.md", ino=2**64 - 1, tags=[Tag(name="x/y", line=0)])
    cache.apply([(big_inode, SearchDoc(title="a")), note("b.md"), note("c.md")])
    assert NoteTable(cache.load_encoded()) == {
        "a.md": big_inode,
        "b.md": record("b.md", title="b"),
        "c.md": record("c.md", title="c"),
    }
    changed = record("b.md", title="B2", size=7)
    cache.apply([(changed, SearchDoc(title="B2"))], deletes=["c.md", "never-there.md"])
    assert NoteTable(cache.load_encoded()) == {"a.md": big_inode, "b.md": changed}
    assert cache.stats().rows == 2


def test_apply_is_one_transaction(cache: IndexCache) -> None:
    cache.apply([note("keep.md", "kept words")])

    def failing() -> Iterator[tuple[NoteRecord, SearchDoc]]:
        for i in range(1500):  # more than one internal chunk before the failure
            yield note(f"n{i}.md")
        raise RuntimeError("parser failed")

    with pytest.raises(RuntimeError):
        cache.apply(failing(), deletes=["keep.md"])
    assert list(cache.load_encoded()) == ["keep.md"]
    assert paths(cache.search("kept")) == ["keep.md"]


def test_a_failure_while_preparing_a_large_apply_rolls_it_back(cache: IndexCache) -> None:
    cache.apply([note("keep.md", "kept words")])
    broken = SearchDoc(title=None)  # type: ignore[arg-type]  # Structs do not check types on init
    batch = [note(f"n{i}.md") for i in range(1200)] + [(record("broken.md"), broken)]
    with pytest.raises(AttributeError):
        cache.apply(batch, deletes=["keep.md"])
    assert list(cache.load_encoded()) == ["keep.md"]


def test_same_path_twice_and_delete_then_upsert(cache: IndexCache) -> None:
    cache.apply([note("a.md", "first version"), note("a.md", "second version")])
    assert paths(cache.search("second")) == ["a.md"] and cache.search("first") == []
    cache.apply([note("a.md", "third version")], deletes=["a.md"])
    assert paths(cache.search("third")) == ["a.md"] and cache.stats().rows == 1


def test_undecodable_record_left_out(cache: IndexCache, tmp_path: Path) -> None:
    cache.apply([note("a.md"), note("b.md")])
    con = apsw.Connection(str(tmp_path / "c.sqlite"))
    con.execute("UPDATE record SET data = x'c1' WHERE id = (SELECT id FROM note WHERE path = 'a.md')")
    con.close()
    # The cache hands the bytes over as stored; the index parses again what no longer decodes
    # (tests/unit/test_note_table.py, the warm start).
    stored = cache.load_encoded()
    assert sorted(stored) == ["a.md", "b.md"] and stored["a.md"] == b"\xc1"


def test_text_sqlite_cannot_hold_never_fails_the_apply(cache: IndexCache) -> None:
    odd = record("odd.md", frontmatter={"description": "lone \udc80 surrogate"})
    doc = SearchDoc(title="odd \ud800", description="lone \udc80 okapi", tags=["t\udc80"], type="x\udc80")
    cache.apply([(odd, doc), note("bad\udcff-name.md", "okapi"), note("fine.md", "okapi")])
    assert sorted(paths(cache.search("okapi"))) == ["fine.md", "odd.md"]
    assert list(cache.load_encoded()) == ["fine.md"]  # odd.md's record is re-parsed at each start
    assert paths(cache.search("okapi", type="x\udc80")) == ["odd.md"]
    assert cache.search("okapi", tag="t\udc80") == cache.search("okapi", tag="t\ufffd")
    cache.apply([], deletes=["bad\udcff-name.md"])


def test_search_doc_from_note() -> None:
    text = "---\ntitle: T\n---\n# T\nbody here"
    rec = record(
        "f/n.md",
        title="T",
        aliases=["Alias"],
        frontmatter={"type": "decision", "domain": ["not", "scalar"], "description": "d"},
        tags=[Tag(name="A/b", line=0)],
        body_offset=text.index("# T"),
    )
    doc = SearchDoc.from_note(rec, text)
    assert doc == SearchDoc(
        title="T",
        aliases=["Alias"],
        description="d",
        body="# T\nbody here",
        type="decision",
        tags=["A/b"],
        body_line=text.count("\n", 0, text.index("# T")) + 1,
    )
    assert text.split("\n")[doc.body_line - 1] == "# T", "body_line is the file line the body starts on"


# -- search --------------------------------------------------------------------------------------


def test_upsert_delete_search(cache: IndexCache) -> None:
    cache.apply([*fillers(), note("a.md", "the zebra grazes"), note("b.md", "a zebra and a lion")])
    assert sorted(paths(cache.search("zebra"))) == ["a.md", "b.md"]
    assert paths(cache.search("zebra lion")) == ["b.md"]
    assert paths(cache.search("ZEBRA  Lion")) == ["b.md"]
    cache.apply([], deletes=["b.md"])
    assert paths(cache.search("zebra")) == ["a.md"]
    assert cache.search("lion") == []


def test_diacritics_and_case_folded(cache: IndexCache) -> None:
    cache.apply([*fillers(), note("a.md", "Un café à Zürich"), note("b.md", "Cafe\u0301 decomposed")])
    assert set(paths(cache.search("cafe"))) == {"a.md", "b.md"}
    assert paths(cache.search("ZURICH")) == ["a.md"]
    assert paths(cache.search("zürich")) == ["a.md"]


def test_title_outranks_meta_outranks_body(cache: IndexCache) -> None:
    same = f"{FILLER} some more text so lengths match"
    cache.apply(
        [
            *fillers(),
            note("1-body.md", f"{same} quokka", title="Animals one"),
            note("2-meta.md", same, title="Animals two", description="quokka"),
            note("3-title.md", same, title="Animals quokka"),
        ]
    )
    hits = cache.search("quokka")
    assert paths(hits) == ["3-title.md", "2-meta.md", "1-body.md"]
    assert hits[0].score > hits[1].score > hits[2].score > 0


def test_aliases_are_searched_as_meta(cache: IndexCache) -> None:
    cache.apply([*fillers(), note("a.md", title="Plain", aliases=["Wombat Burrow"])])
    assert paths(cache.search("wombat")) == ["a.md"]


def test_ties_broken_by_path(cache: IndexCache) -> None:
    cache.apply([*fillers(), *(note(f"{name}.md", "identical ocelot text") for name in "dbca")])
    hits = cache.search("ocelot")
    assert paths(hits) == ["a.md", "b.md", "c.md", "d.md"]
    assert len({h.score for h in hits}) == 1


def test_filters(cache: IndexCache) -> None:
    cache.apply(
        [
            *fillers(),
            note("proj/a.md", "heron", type="insight", domain="research", tags=["#Birds/Water", "x"]),
            note("proj/sub/b.md", "heron", type="decision", domain="research", tags=["birds"]),
            note("project/c.md", "heron", type="insight", domain="teaching", tags=["birdsong"]),
            note("d.md", "heron", tags=["water"]),
        ]
    )
    assert paths(cache.search("heron", type="insight")) == ["proj/a.md", "project/c.md"]
    assert paths(cache.search("heron", domain="research")) == ["proj/a.md", "proj/sub/b.md"]
    assert paths(cache.search("heron", folder="proj")) == ["proj/a.md", "proj/sub/b.md"]
    assert paths(cache.search("heron", folder="/proj/sub/")) == ["proj/sub/b.md"]
    assert len(cache.search("heron", folder="/")) == 4
    assert paths(cache.search("heron", tag="birds")) == ["proj/a.md", "proj/sub/b.md"]
    assert paths(cache.search("heron", tag="#BIRDS/water")) == ["proj/a.md"]
    assert paths(cache.search("heron", tag="water")) == ["d.md"]
    assert cache.search("heron", tag="#") == []
    assert paths(cache.search("heron", type="insight", tag="birds", folder="proj")) == ["proj/a.md"]


def test_limit_is_exact_after_filters(cache: IndexCache) -> None:
    # The filtered notes rank last, so a filter applied after the limit would return none.
    many = [note(f"top/{i:03}.md", "kestrel " * 5, title="kestrel") for i in range(60)]
    few = [note(f"z/{i}.md", f"kestrel {FILLER}", type="moc") for i in range(3)]
    cache.apply([*fillers(), *many, *few])
    assert paths(cache.search("kestrel", type="moc", limit=2)) == ["z/0.md", "z/1.md"]
    assert len(cache.search("kestrel", limit=25)) == 25
    assert cache.search("kestrel", limit=0) == []


@pytest.mark.parametrize("query", ["", "   ", '"', '""', "-", "*", "()", "^", ":", "- * ( ) ^ :", "\x00", "\u200b", "\u0301"])
def test_nothing_searchable_gives_no_hits(cache: IndexCache, query: str) -> None:
    cache.apply([note("a.md", "near or and not")])
    assert cache.search(query) == []
    assert paths(cache.search(f"{query} NEAR(")) == ["a.md"]  # the operators are words here


def test_operators_are_ours_and_fts5_syntax_stays_literal(cache: IndexCache) -> None:
    # OR, NOT, -word and quotes are the query language (see vaultd.vault.search_syntax); FTS5's
    # own syntax (column filters, prefix *, NEAR, lower-case operators) is text, matched literally.
    cache.apply([*fillers(), note("a.md", "alpha beta"), note("b.md", "alpha or beta"), note("c.md", "x-ray body")])
    assert sorted(paths(cache.search("alpha OR beta"))) == ["a.md", "b.md"]
    assert paths(cache.search("alpha or beta")) == ["b.md"]  # an operator only in capitals
    assert paths(cache.search("alpha NOT beta")) == []
    assert sorted(paths(cache.search("alpha OR x-ray NOT body"))) == ["a.md", "b.md"]
    assert sorted(paths(cache.search('"alpha" beta*'))) == ["a.md", "b.md"]
    assert paths(cache.search('"alpha or"')) == ["b.md"]  # a phrase: in order, next to each other
    assert paths(cache.search('"beta alpha"')) == []
    assert paths(cache.search("body:x-ray")) == []
    assert paths(cache.search("x-ray")) == ["c.md"]
    without = paths(cache.search("-alpha", limit=100))
    assert "c.md" in without and "a.md" not in without and "b.md" not in without
    assert all(h.score == 0.0 for h in cache.search("-alpha", limit=100))  # nothing to rank by: by path
    assert paths(cache.search("title:alpha")) == []
    assert cache.search("NEAR(alpha beta)") == []


# -- CJK -----------------------------------------------------------------------------------------


def test_korean_substring(cache: IndexCache) -> None:
    cache.apply(
        [
            *fillers(),
            note("a.md", "우리 해외사업단은 내일 출발한다"),
            note("b.md", "사업단장 회의"),
            note("c.md", "사업 단위 계획"),  # 사업 and 단 in separate words: not 사업단
        ]
    )
    assert sorted(paths(cache.search("사업단"))) == ["a.md", "b.md"]
    assert paths(cache.search("해외사업단은")) == ["a.md"]
    assert set(paths(cache.search("사업"))) == {"a.md", "b.md", "c.md"}


def test_japanese_two_characters_inside_a_word(cache: IndexCache) -> None:
    cache.apply([*fillers(), note("ja.md", "全文検索エンジンを使う"), note("zh.md", "中文检索")])
    assert paths(cache.search("検索")) == ["ja.md"]
    assert paths(cache.search("エンジン")) == ["ja.md"]
    assert paths(cache.search("検索エ")) == ["ja.md"]
    assert paths(cache.search("检索")) == ["zh.md"]


def test_single_cjk_character_anywhere_in_a_run(cache: IndexCache) -> None:
    cache.apply([*fillers(), note("a.md", "사업단"), note("b.md", "단"), note("c.md", "업무")])
    assert sorted(paths(cache.search("단"))) == ["a.md", "b.md"]  # a run's last character; a lone one
    assert sorted(paths(cache.search("업"))) == ["a.md", "c.md"]


def test_cjk_title_ranks_first_and_nfd_query_matches(cache: IndexCache) -> None:
    cache.apply([*fillers(), note("body.md", "연구 사업단 소식"), note("title.md", title="사업단 소식")])
    assert paths(cache.search("사업단")) == ["title.md", "body.md"]
    import unicodedata

    assert paths(cache.search(unicodedata.normalize("NFD", "사업단"))) == ["title.md", "body.md"]


def test_mixed_cjk_and_latin(cache: IndexCache) -> None:
    cache.apply(
        [
            *fillers(),
            note("both.md", "새 API를 해외사업단이 쓴다"),
            note("latin.md", "the API only"),
            note("cjk.md", "해외사업단 only"),
        ]
    )
    assert paths(cache.search("API 사업단")) == ["both.md"]
    assert paths(cache.search("사업단 api")) == ["both.md"]
    assert set(paths(cache.search("API"))) == {"both.md", "latin.md"}
    assert paths(cache.search("API를")) == ["both.md"]  # api AND 를
    hit = cache.search("api 사업단")[0]
    assert "**API**" in hit.snippet and "**사업단**" in hit.snippet


# -- snippets ------------------------------------------------------------------------------------


def test_snippet_bounded_and_marked(cache: IndexCache) -> None:
    long_body = " ".join(["lorem ipsum dolor"] * 200 + ["the pangolin sleeps"] + ["sit amet"] * 200)
    huge_token = "x" * 5000 + " pangolin " + "y" * 5000
    cache.apply([*fillers(), note("a.md", long_body), note("b.md", huge_token)])
    for hit in cache.search("pangolin"):
        assert len(hit.snippet) <= fts_query.SNIPPET_MAX_CHARS
        assert "**pangolin**" in hit.snippet or hit.snippet.endswith("…")
        assert fts_query.MARK_OPEN not in hit.snippet and fts_query.ZWSP not in hit.snippet
        assert hit.snippet.count("**") % 2 == 0
    a = next(h for h in cache.search("pangolin") if h.path == "a.md")
    assert "**pangolin**" in a.snippet and a.snippet.startswith("…") and "\n" not in a.snippet


def test_cjk_snippet_is_a_window_around_the_term(cache: IndexCache) -> None:
    body = "서론 " * 300 + "해외사업단이 왔다 " + "결론 " * 300
    cache.apply([*fillers(), note("a.md", body)])
    (hit,) = cache.search("사업단")
    assert "해외**사업단**이" in hit.snippet
    assert len(hit.snippet) <= fts_query.SNIPPET_MAX_CHARS
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")


def test_sentinels_in_text_are_not_markers(cache: IndexCache) -> None:
    body = f"odd {fts_query.MARK_OPEN}text{fts_query.MARK_CLOSE} with narwhal"
    cache.apply([*fillers(), note("a.md", body)])
    (hit,) = cache.search("narwhal")
    assert hit.snippet == "odd text with **narwhal**"


# -- threads -------------------------------------------------------------------------------------


def test_reads_run_beside_a_write(cache: IndexCache) -> None:
    cache.apply([note("seed.md", "steady marmot")])
    stop = threading.Event()
    seen: list[int] = []
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            while not stop.is_set():
                n = len(cache.search("marmot", limit=1000))
                assert n in (1, 801)  # the old state or the new one, never part of a write
                seen.append(n)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for _ in range(3):
        cache.apply([note(f"w/{i}.md", f"busy marmot {i}") for i in range(800)])
    stop.set()
    for t in threads:
        t.join()
    assert not errors
    assert seen and seen[-1] == 801


def test_stats(cache: IndexCache) -> None:
    cache.apply([note("a.md", "latin"), note("b.md", "한국어")])
    stats = cache.stats()
    assert isinstance(stats, CacheStats)
    assert (stats.rows, stats.cjk_rows) == (2, 1)
    assert stats.bytes > 0 and stats.wal_bytes >= 0
