"""The note table reads the records the cache file holds from the file: on real SQLite files, a
copy keeps the state it was taken at while writes replace and delete rows (the writer hands the
old bytes over before it commits), a reader racing writes never gets a record of another state,
a record the file lost or garbled is read again from the note, and a record msgpack cannot hold
stays in memory."""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path

import apsw
import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultd.vault.cache import IndexCache, SearchDoc
from vaultd.vault.index import VaultIndex
from vaultd.vault.model import NoteRecord
from vaultd.vault.note_table import NoteTable

PATHS = ["a.md", "b.md", "sub/c.md", "d.md"]


def _record(path: str, title: str) -> NoteRecord:
    return NoteRecord(
        path=path,
        size=len(title),
        mtime_ns=1,
        ino=2,
        sha256="ab" * 32,
        title=title,
        frontmatter={"t": title},
        aliases=[title],
        tags=[],
        headings=[],
        blocks=[],
        links=[],
        issues=[],
        words=1,
        body_offset=0,
    )


class _Writer:
    """The index's side: changes applied to the table, then written to the cache with it as the owner."""

    def __init__(self, cache: IndexCache, table: NoteTable) -> None:
        self.cache, self.table = cache, table
        self.upserts: dict[str, NoteRecord] = {}
        self.deletes: set[str] = set()

    def put(self, record: NoteRecord) -> None:
        self.table.put(record)
        self.upserts[record.path] = record
        self.deletes.discard(record.path)

    def pop(self, path: str) -> None:
        self.table.pop(path)
        self.upserts.pop(path, None)
        self.deletes.add(path)

    def write(self) -> None:
        ups = [(r, SearchDoc(title="x")) for r in self.upserts.values()]
        encoded = {r.path: self.table.kept_encoding(r) for r in self.upserts.values()}
        self.cache.apply(ups, sorted(self.deletes), encoded, self.table)
        self.upserts.clear()
        self.deletes.clear()


_titles = st.text(st.characters(exclude_categories=()), max_size=6)  # lone surrogates too: kept in memory
_ops = st.lists(st.tuples(st.sampled_from(["put", "pop", "copy", "write"]), st.sampled_from(PATHS), _titles), max_size=40)


@settings(max_examples=60, deadline=None)
@given(_ops)
def test_copies_keep_their_state_while_writes_replace_and_delete_rows(ops: list[tuple[str, str, str]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        cache = IndexCache.open(Path(folder) / "index.sqlite")
        try:
            table = NoteTable(file=cache)
            writer = _Writer(cache, table)
            expected: dict[str, NoteRecord] = {}
            copies: list[tuple[NoteTable, dict[str, NoteRecord]]] = []
            for op, path, title in ops:
                if op == "put":
                    writer.put(record := _record(path, title))
                    expected[path] = record
                elif op == "pop":
                    writer.pop(path)
                    expected.pop(path, None)
                elif op == "copy":
                    copies.append((table.copy(), dict(expected)))
                else:
                    writer.write()
                assert table == expected
                for copy, then in copies:
                    assert copy == then
                    assert {p: r.title for p, r in copy.fields(_TitleOnly)} == {p: r.title for p, r in then.items()}
            writer.write()
            # Once written, the owner keeps in memory only the records msgpack cannot hold.
            assert table.in_memory() == sum(1 for r in expected.values() if not _encodable(r))
            assert table == expected
            for copy, then in copies:
                assert copy == then
        finally:
            cache.close()


class _TitleOnly(msgspec.Struct):
    title: str


def _encodable(record: NoteRecord) -> bool:
    try:
        msgspec.msgpack.encode(record)
    except (OverflowError, UnicodeEncodeError):
        return False
    return True


def test_a_copy_holds_in_memory_only_the_records_changed_after_it(tmp_path: Path) -> None:
    cache = IndexCache.open(tmp_path / "index.sqlite")
    try:
        table = NoteTable(file=cache)
        writer = _Writer(cache, table)
        for i in range(200):
            writer.put(_record(f"n{i}.md", f"first {i}"))
        writer.write()
        assert table.in_memory() == 0
        copy = table.copy()
        for i in range(10):
            writer.put(_record(f"n{i}.md", f"second {i}"))
        writer.pop("n50.md")
        writer.write()
        assert table.in_memory() == 0 and copy.in_memory() == 11
        assert copy["n3.md"].title == "first 3" and table["n3.md"].title == "second 3"
        assert copy["n50.md"].title == "first 50" and "n50.md" not in table
        del copy  # a copy let go is no longer handed anything
        writer.put(_record("n7.md", "third"))
        writer.write()
        assert table["n7.md"].title == "third" and table.in_memory() == 0
    finally:
        cache.close()


def test_readers_racing_writes_get_each_record_whole(tmp_path: Path) -> None:
    """Threads read the live table and a copy while the owner replaces every record again and
    again: the live table answers one of the states the record went through, the copy always
    the state it was taken at, and nothing is read again from a note (nothing was lost)."""
    cache = IndexCache.open(tmp_path / "index.sqlite")
    lost: list[str] = []
    try:
        table = NoteTable(file=cache, reread=lambda path: lost.append(path) or None)  # type: ignore[func-returns-value]
        writer = _Writer(cache, table)
        paths = [f"n{i}.md" for i in range(50)]
        for path in paths:
            writer.put(_record(path, "round 0"))
        writer.write()
        copy = table.copy()
        rounds = 30
        stop = threading.Event()
        wrong: list[str] = []

        def read() -> None:
            while not stop.is_set():
                for path, record in copy.items():
                    if record.title != "round 0":
                        wrong.append(f"copy {path} {record.title}")
                for path in paths:
                    live = table[path]
                    if live.path != path or not live.title.startswith("round ") or live.size != len(live.title):
                        wrong.append(f"live {path} {live.title}")

        readers = [threading.Thread(target=read) for _ in range(2)]
        for reader in readers:
            reader.start()
        try:
            for n in range(1, rounds + 1):
                for path in paths:
                    writer.put(_record(path, f"round {n}"))
                writer.write()
        finally:
            stop.set()
            for reader in readers:
                reader.join()
        assert not wrong and not lost
        assert all(table[p].title == f"round {rounds}" for p in paths)
        assert copy.in_memory() == len(paths)
    finally:
        cache.close()


def test_a_record_the_file_lost_or_garbled_is_read_again_from_the_note(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    for i in range(6):
        (root / f"n{i}.md").write_text(f"---\ntags: [t{i}]\n---\n# N{i}\n\nsee [[n{(i + 1) % 6}]]\n")
    cache_file = tmp_path / "index.sqlite"
    cache = IndexCache.open(cache_file)
    try:
        index = VaultIndex(root, cache)
        index.build()
        assert index.notes.in_memory() == 0
        want = {p: index.notes[p] for p in sorted(index.notes)}
        index.notes.forget_decoded()
        con = apsw.Connection(str(cache_file))
        con.execute("UPDATE record SET data = x'c1' || data WHERE id = (SELECT id FROM note WHERE path = 'n1.md')")
        con.execute("UPDATE record SET data = zeroblob(length(data)) WHERE id = (SELECT id FROM note WHERE path = 'n2.md')")
        con.execute("DELETE FROM record WHERE id = (SELECT id FROM note WHERE path = 'n3.md')")
        con.close()
        assert dict(index.notes.items()) == want
        assert index.notes.in_memory() == 3  # the three read again, kept from now on
        assert index.notes["n1.md"] == want["n1.md"]
        cache.close()
        cache_file.unlink()  # closed and deleted: every read goes to the notes
        fresh = VaultIndex(root, None)
        fresh.build()
        assert dict(index.notes.items()) == dict(fresh.notes.items()) == want
    finally:
        cache.close()
