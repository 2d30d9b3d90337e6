"""The index keeps its notes encoded: a table answers the records it was given, never a stale
one, keeps only a bounded number decoded, and a warm start decodes one record at a time and
parses again a record it can no longer decode."""

from __future__ import annotations

from typing import TYPE_CHECKING

import apsw
import msgspec
from hypothesis import given
from hypothesis import strategies as st

from protocol.methods.events import NoteChanged, NoteCreated, NoteRemoved
from vaultd.vault import note_table
from vaultd.vault.cache import IndexCache
from vaultd.vault.changes import index_changes
from vaultd.vault.index import VaultIndex
from vaultd.vault.model import Heading, Link, LinkKind, NoteRecord, Tag, Task
from vaultd.vault.note_table import IssuesOf, NoteTable, StatOf, TagsOf, TitleOf, subset

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

_text = st.text(st.characters(exclude_categories=()), max_size=20)  # lone surrogates too, which msgpack cannot hold
_line = st.integers(min_value=0, max_value=10_000)
_links = st.lists(
    st.builds(Link, st.sampled_from(list(LinkKind)), _text, st.none() | _text, st.none() | _text, _line, _line, _line), max_size=5
)
_tasks = st.lists(st.builds(Task, line=_line, status=st.sampled_from([" ", "x", "-"]), text=_text, heading=st.none() | _text), max_size=3)
_frontmatter = st.none() | st.dictionaries(
    _text, st.none() | st.booleans() | st.integers() | _text | st.lists(_text, max_size=3), max_size=4
)


def _record(path: str, **fields: object) -> NoteRecord:
    base: dict[str, object] = {
        "path": path,
        "size": 10,
        "mtime_ns": 1,
        "ino": 2,
        "sha256": "ab" * 32,
        "title": path.removesuffix(".md"),
        "frontmatter": None,
        "aliases": [],
        "tags": [],
        "headings": [],
        "blocks": [],
        "links": [],
        "issues": [],
        "words": 1,
        "body_offset": 0,
    }
    return NoteRecord(**{**base, **fields})  # type: ignore[arg-type]


_records = st.builds(
    lambda path, title, fm, aliases, tags, heads, links, tasks, words: _record(
        path, title=title, frontmatter=fm, aliases=aliases, tags=tags, headings=heads, links=links, tasks=tasks, words=words
    ),
    st.text(min_size=1, max_size=12).map(lambda s: s + ".md"),
    _text,
    _frontmatter,
    st.lists(_text, max_size=3),
    st.lists(st.builds(Tag, _text, _line), max_size=3),
    st.lists(st.builds(Heading, st.integers(1, 6), _text, _line), max_size=3),
    _links,
    _tasks,
    st.integers(0, 10**6),
)


def _encodable(record: NoteRecord) -> bool:
    try:
        msgspec.msgpack.encode(record)
    except (OverflowError, UnicodeEncodeError):
        return False
    return True


@given(st.lists(_records, max_size=20))
def test_a_table_answers_each_record_it_was_given(records: list[NoteRecord]) -> None:
    table = NoteTable()
    expected: dict[str, NoteRecord] = {}
    for record in records:
        table.put(record)
        expected[record.path] = record
    assert table == expected
    copied = table.copy()
    assert copied == expected and all(copied.same(table, p) == _encodable(expected[p]) for p in expected)
    for shape in (TagsOf, IssuesOf, TitleOf, StatOf):
        fields = shape.__struct_fields__
        assert {p: [getattr(v, f) for f in fields] for p, v in table.fields(shape)} == {
            p: [getattr(r, f) for f in fields] for p, r in expected.items()
        }


def test_a_record_msgpack_cannot_hold_is_kept_as_it_is() -> None:
    table = NoteTable()
    odd = [_record("bad\udcff-name.md"), _record("big.md", frontmatter={"n": 2**70}), _record("ok.md")]
    for record in odd:
        table.put(record)
    assert table == {r.path: r for r in odd}
    assert not table.same(table.copy(), "big.md") and table.same(table.copy(), "ok.md")
    assert table.pop("big.md") == odd[1] and "big.md" not in table


def test_a_record_replaced_is_never_answered_again() -> None:
    table = NoteTable()
    table.put(_record("a.md", title="old"))
    assert table["a.md"].title == "old"
    table.put(_record("a.md", title="new"))
    assert table["a.md"].title == "new"
    # A copy made before the change keeps the old record; the change does not reach it.
    before = table.copy()
    table.put(_record("a.md", title="newer"))
    assert before["a.md"].title == "new" and table["a.md"].title == "newer"
    assert table.pop("a.md") == _record("a.md", title="newer")
    assert "a.md" not in table and table.get("a.md") is None and table.pop("a.md") is None
    assert before["a.md"].title == "new"


def test_decoded_records_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(note_table, "RECENT", 8)
    table = NoteTable()
    for i in range(50):
        table.put(_record(f"n{i}.md"))
        assert len(table._recent) <= 8
    for path in list(table):
        assert table[path].path == path
        assert len(table._recent) <= 8


def test_subset_keeps_a_table_a_table() -> None:
    table = NoteTable()
    for name in ("a.md", "b.md", "private/c.md"):
        table.put(_record(name))
    shown = subset(table, lambda p: not p.startswith("private/"))
    assert isinstance(shown, NoteTable) and sorted(shown) == ["a.md", "b.md"]
    assert subset(dict(table), lambda p: p == "a.md") == {"a.md": table["a.md"]}


def test_changes_between_tables_compare_bytes_then_content() -> None:
    before, after = NoteTable(), NoteTable()
    for table in (before, after):
        table.put(_record("same.md"))
        table.put(_record("touched.md", mtime_ns=5))
    before.put(_record("edited.md", sha256="aa" * 32))
    after.put(_record("edited.md", sha256="bb" * 32))
    before.put(_record("gone.md", sha256="cc" * 32))
    after.put(_record("new.md", sha256="dd" * 32))
    after.put(_record("touched.md", mtime_ns=6))  # other bytes, same content: no event
    events = index_changes(before, after)
    assert events == [NoteRemoved(path="gone.md"), NoteCreated(path="new.md"), NoteChanged(path="edited.md")]


def test_a_warm_start_reuses_records_and_parses_one_that_no_longer_decodes(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    for i in range(5):
        (root / f"n{i}.md").write_text(f"# N{i}\n\nsee [[n{(i + 1) % 5}]]\n")
    cache_file = tmp_path / "index.sqlite"
    cache = IndexCache.open(cache_file)
    first = VaultIndex(root, cache)
    assert first.build() == (5, 0)
    cache.close()
    con = apsw.Connection(str(cache_file))
    con.execute("UPDATE record SET data = x'c1' WHERE id = (SELECT id FROM note WHERE path = 'n2.md')")
    con.close()
    cache = IndexCache.open(cache_file)
    try:
        warm = VaultIndex(root, cache)
        assert warm.build() == (1, 4)
        assert warm.notes == first.notes
        assert [source for source, _link in warm.backlinks("n3.md")] == ["n2.md"]
    finally:
        cache.close()


def test_a_note_msgpack_cannot_hold_never_fails_a_build(tmp_path: Path) -> None:
    """An integer past 64 bits or a lone surrogate in a note's frontmatter: the index keeps the
    record in memory only, the cache stores every other note and the note's text, and a warm
    start parses that note again."""
    root = tmp_path / "vault"
    root.mkdir()
    odd = {
        "big.md": "---\nn: 123456789012345678901234567890\n---\n# Big\n\nbigword body\n",
        "small.md": "---\nn: -123456789012345678901234567890\n---\n# Small\n\nsmallword body\n",
        "lone.md": '---\ns: "\\udcff"\n---\n# Lone\n\nloneword body\n',
    }
    for name, text in odd.items():
        (root / name).write_text(text)
    for i in range(4):
        (root / f"n{i}.md").write_text(f"# N{i}\n\nplainword{i} links [[big]]\n")
    cache = IndexCache.open(tmp_path / "index.sqlite")
    try:
        first = VaultIndex(root, cache)
        assert first.build() == (7, 0)
        assert first.notes["big.md"].frontmatter == {"n": 123456789012345678901234567890}
        assert first.notes["small.md"].frontmatter == {"n": -123456789012345678901234567890}
        assert first.notes["lone.md"].frontmatter == {"s": "\udcff"}
        for word, path in (("bigword", "big.md"), ("smallword", "small.md"), ("loneword", "lone.md"), ("plainword2", "n2.md")):
            assert [hit.path for hit in cache.search(word)] == [path]
        assert sorted(cache.load_encoded()) == ["n0.md", "n1.md", "n2.md", "n3.md"]
        warm = VaultIndex(root, cache)
        assert warm.build() == (3, 4)
        assert warm.notes == first.notes
        assert [source for source, _link in warm.backlinks("big.md")] == ["n0.md", "n1.md", "n2.md", "n3.md"]
    finally:
        cache.close()


def test_a_warm_start_answers_links_names_and_aliases_as_a_cold_build(tmp_path: Path) -> None:
    """A warm start fills the maps from each record's sketch: every backlink, alias, resolution
    and title answers as after a cold build, for a note many notes link to (a group held as a
    set), names shared by two folders, names differing only by case and normalization, and
    links to attachments."""
    root = tmp_path / "vault"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    (root / "a" / "Same.md").write_text("---\naliases: [Twin, Shared]\n---\n# Same A\n\n[[b/Same]] [[Hub#Top]]\n")
    (root / "b" / "Same.md").write_text("---\naliases: [shared]\n---\n# Same B\n\n[[Same]] ![[pic.png]]\n")
    (root / "Hub.md").write_text("# Hub\n\n## Top\n\n[[Cafe\u0301]] [[a/Same.md]]\n")
    (root / "Caf\u00e9.md").write_text("# Café\n\n[link](Hub.md) [[missing]]\n")
    (root / "pic.png").write_bytes(b"\x89PNG")
    for i in range(40):
        (root / f"n{i:02}.md").write_text(f"---\naliases: [Many]\n---\n# N{i}\n\n[[hub]] [[HUB|label]] [[n{(i + 1) % 40:02}]]\n")
    cache = IndexCache.open(tmp_path / "index.sqlite")
    try:
        cold = VaultIndex(root, cache)
        cold.build()
        warm = VaultIndex(root, cache)
        assert warm.build() == (0, len(cold.notes))
        for index in (cold, warm):
            assert isinstance(index._linkers["hub"], list)  # past SMALL linking notes
        for path in cold.notes:
            assert list(warm.backlinks(path)) == list(cold.backlinks(path))
            for link in cold.notes[path].links:
                assert warm.resolve(link, path) == cold.resolve(link, path)
        assert len(list(cold.backlinks("Hub.md"))) == 82  # two from each n, one from a/Same, one from Café
        for alias in ("twin", "SHARED", "Many", "nothing"):
            assert warm.notes_by_alias(alias) == cold.notes_by_alias(alias)
        assert cold.notes_by_alias("shared") == ["a/Same.md", "b/Same.md"]
        assert sorted(warm.resolver.paths()) == sorted(cold.resolver.paths())
        assert warm.resolver.resolve("Same", "Hub.md").candidates == ["a/Same.md", "b/Same.md"]
        assert sorted(warm.suggester.titles()) == sorted(cold.suggester.titles())
        assert warm.notes == cold.notes
    finally:
        cache.close()


def test_the_bytes_a_record_was_kept_as_are_answered_for_that_record_only() -> None:
    table = NoteTable()
    record = _record("a.md", title="one")
    blob = table.put(record)
    assert blob == msgspec.msgpack.encode(record) and table.kept_encoding(record) is blob
    assert table.kept_encoding(_record("a.md", title="one")) is None  # equal, but not the record kept
    table.put(_record("a.md", title="two"))
    assert table.kept_encoding(record) is None
    assert table.put(_record("big.md", frontmatter={"n": 2**70})) is None
