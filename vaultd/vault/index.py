"""The in-memory index of one vault: notes, names, aliases, links, backlinks, tags, skipped files.

Threading rule: the maps here are changed only on the event loop thread, in short synchronous
steps (:meth:`VaultIndex.apply`), so a read never sees a half-applied change. Reading and
parsing files (:func:`compute_updates`) and writing the SQLite cache happen in worker threads,
before and after that step.

Link resolution is not stored: a link is resolved when it is read, against the current file
set, so adding or removing a file can never leave a stale resolution behind. Backlinks are
found through ``_linkers``, a map from the name a link points at to the notes that contain such
a link; each candidate is then resolved to confirm it. The maps hold their paths as
:mod:`~vaultd.vault.path_bags` groups (a path alone in most entries), and a warm start fills
them from each cached record's :class:`~vaultd.vault.note_table.Sketch`.
"""

from __future__ import annotations

import queue
import sys
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import msgspec

from vaultd import faults
from vaultd.memory import collector_paused
from vaultd.vault.link_targets import LinkResolver, Resolution, Suggester, name_key
from vaultd.vault.note import stem_of
from vaultd.vault.note_table import AliasesOf, NoteTable, Sketch, decoded_as
from vaultd.vault.parse_pool import parsed_chunks, worker_count
from vaultd.vault.path_bags import LARGE, PathBag, added, members, removed
from vaultd.vault.reading import Updates, read_note
from vaultd.vault.walk import FileStat, SkippedFile, classify, is_ignored, is_valid_name, walk

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from pathlib import Path

    from vaultd.vault.cache import IndexCache
    from vaultd.vault.model import Link, NoteRecord
    from vaultd.vault.note_table import LinkTarget
    from vaultd.vault.search_doc import SearchDoc

    #: a parsed chunk on its way to the cache: its notes, and their encodings by path
    _Chunk = tuple[list[tuple[NoteRecord, SearchDoc]], dict[str, bytes | None]]

BUILD_CHUNK = 256  #: notes parsed at a time during a build (a worker's share, a progress step)
#: notes a cold build's cache writes commit at once: fewer, larger FTS5 segments to write and
#: merge; the records not yet committed are held encoded until then (about 1 KB a note)
BUILD_COMMIT = 2048
WRITES_AHEAD = 2  #: parsed chunks waiting for the cache's writer, at most (each holds its notes' text)


class _Filed(msgspec.Struct):
    """A cached record's path and the stat it was read at: all a warm start's check decodes of it
    before the note table is whole (its names are decoded after, see :meth:`VaultIndex._map_filed`)."""

    path: str
    size: int
    mtime_ns: int
    ino: int


def _same_stat(filed: _Filed, fs: FileStat) -> bool:
    """Whether a cached record is still the file's: the same path, and the stat it was read at."""
    return (filed.path, filed.size, filed.mtime_ns, filed.ino) == (fs.path, fs.size, fs.mtime_ns, fs.ino)


def link_key(link: Link | LinkTarget) -> str:
    """The name a link points at, as the resolver compares names (stem for notes)."""
    key = name_key(link.target.rpartition("/")[2])
    return key[:-3] if key.endswith(".md") else key


def note_key(path: str) -> str:
    name = path.rpartition("/")[2]
    key = name_key(name)
    return key[:-3] if key.endswith(".md") else key


@dataclass(slots=True)
class BuildTally:
    """How far a build has come: written by the build's thread, read on the event loop (each field
    is one plain value, so a read sees it whole; the reader only reports, never decides by it)."""

    rebuild: bool = False  #: every note is re-parsed, whatever the cache holds
    started: float | None = None  #: ``time.monotonic()`` when the walk began
    total: int | None = None  #: notes to parse, once the walk is done
    parsed: int = 0
    reused: int = 0  #: notes taken from the cache unchanged


@dataclass(slots=True, eq=False)
class IndexCopy:
    """What a vault-wide reader needs of the index, copied in one synchronous step on the event
    loop (where every change is applied), so it is one state of the vault and the reader may
    take seconds over it in a worker thread without holding the index: writes and refreshes go
    on meanwhile, and the copy does not see them.

    The copy shares the records and the resolver's lists, which the index replaces and never
    changes: at 20,000 notes it costs one or two milliseconds (``VaultIndex.copy``).
    """

    origin: VaultIndex  #: the index copied (a snapshot built from the copy is kept for it)
    generation: int  #: the origin's generation when copied
    notes: Mapping[str, NoteRecord]
    attachments: dict[str, FileStat]
    skipped: dict[str, SkippedFile]
    resolver: LinkResolver
    suggester: Suggester
    _aliases: dict[str, list[str]] | None = None  #: alias key -> notes, made when first asked

    def notes_by_alias(self, text: str) -> list[str]:
        """As :meth:`VaultIndex.notes_by_alias`, from the copied notes (the table is made on the
        first call, in the reader's thread)."""
        if self._aliases is None:
            table: dict[str, list[str]] = {}
            named: Iterable[tuple[str, AliasesOf | NoteRecord]]
            named = self.notes.fields(AliasesOf) if isinstance(self.notes, NoteTable) else self.notes.items()
            for path, of in sorted(named, key=lambda item: item[0]):
                for alias in of.aliases:
                    paths = table.setdefault(name_key(alias), [])
                    if not paths or paths[-1] != path:
                        paths.append(path)
            self._aliases = table
        return list(self._aliases.get(name_key(text), ()))


def _hand(handed: queue.Queue[_Chunk | None], item: _Chunk | None, writing: Future[None]) -> None:
    """Put ``item`` in the writer's queue, waiting while it is full.

    Raises:
        Exception: whatever ended the writer early (the cache closed, or found damaged).
    """
    while not writing.done():
        try:
            handed.put(item, timeout=0.1)
        except queue.Full:
            continue
        return
    writing.result()


def _group(
    handed: queue.Queue[_Chunk | None], head: _Chunk, encoded: dict[str, bytes | None], ended: list[None]
) -> Iterator[tuple[NoteRecord, SearchDoc]]:
    """The notes of ``head`` and the chunks handed after it, until BUILD_COMMIT notes are taken
    or None comes (then put in ``ended``); each chunk's encodings go into ``encoded`` before its
    notes are taken."""
    item: _Chunk | None = head
    taken = 0
    while item is not None:
        notes, their_encoding = item
        encoded.update(their_encoding)
        taken += len(notes)
        yield from notes
        if taken >= BUILD_COMMIT:
            return
        item = handed.get()
    ended.append(None)


RECENT_CHANGES = 256  #: changes whose paths the index remembers (see ``changed_since``)
RECENT_PATHS = 5000  #: a change touching more paths is remembered as "too many"


class VaultIndex:
    def __init__(self, root: Path, cache: IndexCache | None) -> None:
        self.root = root
        self.cache = cache
        self.notes = NoteTable(file=cache, reread=self._reread)
        self.attachments: dict[str, FileStat] = {}
        self.skipped: dict[str, SkippedFile] = {}
        self.resolver = LinkResolver()
        self._aliases: dict[str, PathBag] = {}
        self._linkers: dict[str, PathBag] = {}
        #: title -> how many notes carry it besides the first (the suggester holds each title once;
        #: most titles are one note's, and an entry each cost 0.4 MB at 10,000 notes)
        self._titles: dict[str, int] = {}
        self.suggester = Suggester()
        #: folder -> how many indexed paths (notes, attachments, skipped) lie below it: a path that
        #: is gone is looked for below itself only when it was a folder, not across the vault
        self._folders: dict[str, int] = {}
        self.generation = 0  #: bumped by every applied change; readers may cache by it
        #: the paths each recent change touched, by the generation it made (None: too many to keep),
        #: so a table derived from the index can catch up by those paths instead of every note
        self._recent: deque[tuple[int, list[str] | None]] = deque(maxlen=RECENT_CHANGES)

    # -- building ------------------------------------------------------------------------

    def build(self, tally: BuildTally | None = None, table_whole: Callable[[], None] | None = None) -> tuple[int, int]:
        """Fill a fresh index from the cache and the disk (worker thread; not yet shared).

        Notes whose stat matches their cached record are reused (none in a rebuild, see
        ``tally``, which also counts the progress); the rest are parsed in chunks, on a process
        per core when there are many (``parse_pool``), and each chunk is written to the FTS cache
        on a second thread while the next is parsed (SQLite releases the GIL).

        The build has two steps, and ``table_whole`` is called between them, on this thread:
        first the note table (every note on disk, each cached record checked by its stat alone,
        every other note parsed), the attachments and the skipped files; then the name maps
        (resolver, aliases, linkers, suggester, folders) of the cached notes. From the call on,
        the table, the attachments and the skipped files do not change until the caller is told
        the build returned, so readers of those alone may read them on another thread; the
        maps are this thread's until then, and nothing may read them.
        Returns how many notes were parsed and how many cached records were reused.
        """
        with collector_paused():
            return self._build(tally if tally is not None else BuildTally(), table_whole)

    def _build(self, tally: BuildTally, table_whole: Callable[[], None] | None = None) -> tuple[int, int]:
        tally.started = time.monotonic()
        found = list(walk(self.root))
        updates = Updates()
        notes_on_disk: dict[str, FileStat] = {}
        skipped_paths: set[str] = set()
        for item in found:
            if isinstance(item, SkippedFile):
                updates.skipped.append(item)
                skipped_paths.add(item.path)
            elif not item.is_note:
                updates.attachments.append(item)
            else:
                notes_on_disk[item.path] = item
        on_disk = {f.path for f in found}
        stale: list[str] = []  #: cached notes now skipped
        reused: set[str] = set()
        # The cached records one row at a time: a record still the file's is read from the file
        # from then on (its names are mapped once the table is whole); none of the bytes are kept.
        for path, blob in self.cache.each_record() if self.cache is not None else ():
            if path not in on_disk:
                updates.gone.append(path)
                continue
            if path in skipped_paths:
                stale.append(path)
            fs = notes_on_disk.get(path)
            if tally.rebuild or fs is None:
                continue
            if (filed := decoded_as(blob, _Filed)) is None or not _same_stat(filed, fs):
                continue  # parsed again; a record that no longer decodes too
            self.notes.put_filed(fs.path, blob)  # the walk's string: the maps hold it too
            reused.add(path)
        to_parse = [fs for path, fs in notes_on_disk.items() if path not in reused]
        del found, on_disk, notes_on_disk
        tally.reused = len(reused)
        tally.total = len(to_parse)
        chunks = [to_parse[start : start + BUILD_CHUNK] for start in range(0, len(to_parse), BUILD_CHUNK)]
        parsed = 0
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="vaultd-cache") as writer:
            # The cache's writer takes the chunks as they are parsed and commits every
            # BUILD_COMMIT notes: each commit flushes FTS5's postings into a new segment and
            # merges segments, so a commit a chunk cost most of the writer's time.
            handed: queue.Queue[_Chunk | None] = queue.Queue(maxsize=WRITES_AHEAD)
            writing = writer.submit(self._write_chunks, handed) if self.cache is not None else None
            try:
                for done, chunk in enumerate(parsed_chunks(self.root, chunks, worker_count(len(to_parse))), start=1):
                    tally.parsed = min(done * BUILD_CHUNK, len(to_parse))
                    faults.point("build-chunk")
                    # Into the index as each chunk comes, kept encoded: the parsed objects and the
                    # notes' text are let go chunk by chunk, so the build's peak is a few chunks,
                    # not the vault (the heap would keep that peak's pages for good).
                    # The cache stores the bytes the table keeps: each record is encoded once.
                    encoded = {record.path: self._put_note(record) for record, _doc in chunk.notes}
                    parsed += len(chunk.notes)
                    updates.skipped += chunk.skipped
                    if writing is not None and chunk.notes:
                        _hand(handed, (chunk.notes, encoded), writing)
            finally:
                if writing is not None:
                    _hand(handed, None, writing)
            if writing is not None:
                writing.result()
        self.apply(updates, write_cache=False)
        self.notes.forget_decoded()
        if self.cache is not None:
            # Notes gone, and notes now skipped that used to be cached, leave the cache too.
            stale += updates.gone
            if stale:
                self.cache.apply([], stale, owner=self.notes)
        if table_whole is not None:
            table_whole()
        faults.point("build-names")
        self._map_filed(reused)
        if self.cache is not None:
            self.cache.release_memory()
        return parsed, len(reused)

    def _map_filed(self, reused: set[str]) -> None:
        """Put the names of the notes taken from the cache into the maps (the build's thread,
        after the table is whole): each record's sketch decoded alone, a batch of rows read at a
        time, each row checked against the table's checksum (a row the file lost is read again
        from the note, as any read of the table does)."""
        if not reused:
            return
        for path, sketch in self.notes.fields(Sketch):
            if path in reused:
                self._map_note(sketch, path)

    def _write_chunks(self, handed: queue.Queue[_Chunk | None]) -> None:
        """Store the chunks ``handed`` over until None comes (the cache's writer thread), in
        transactions of about BUILD_COMMIT notes. A chunk is committed with the ones before it in
        its transaction, or not at all: a build cut short leaves whole notes in the cache, each
        trusted on the next start only while its file's stat is the one stored with it."""
        assert self.cache is not None
        head = handed.get()
        while head is not None:
            encoded: dict[str, bytes | None] = {}
            ended: list[None] = []  #: holds the None that ended the handing, once it came
            self.cache.apply(_group(handed, head, encoded, ended), (), encoded, self.notes)
            head = None if ended else handed.get()  # the next group's first chunk, outside the transaction

    # -- applying changes (event loop thread) ---------------------------------------------

    def apply(self, updates: Updates, *, write_cache: bool = True) -> None:
        for path in updates.gone:
            self._forget(path)
        for item in updates.skipped:
            self._forget(item.path)
            self.skipped[item.path] = item
            self._count_folders(item.path, 1)
        for fs in updates.attachments:
            self._forget(fs.path)
            self.attachments[fs.path] = fs
            self._count_folders(fs.path, 1)
            self.resolver.add(fs.path)
        for record, _doc in updates.notes:
            self._forget(record.path)
            self._put_note(record)
        self.generation += 1
        touched = len(updates.gone) + len(updates.skipped) + len(updates.attachments) + len(updates.notes)
        paths = None
        if touched <= RECENT_PATHS:
            paths = [*updates.gone, *(s.path for s in updates.skipped), *(a.path for a in updates.attachments)]
            paths += (r.path for r, _doc in updates.notes)
        self._recent.append((self.generation, paths))

    def changed_since(self, generation: int) -> set[str] | None:
        """Every path changed after ``generation``; None when the index no longer knows (too long
        ago, or a change too big to list): the asker then derives its table from every note."""
        if generation >= self.generation:
            return set()
        if not self._recent or self._recent[0][0] > generation + 1:
            return None
        changed: set[str] = set()
        for made, paths in self._recent:
            if made <= generation:
                continue
            if paths is None:
                return None
            changed.update(paths)
        return changed

    def write_cache(self, updates: Updates) -> None:
        """Mirror ``updates`` into the SQLite cache (worker thread, one writer per vault)."""
        if self.cache is not None:
            deletes = updates.gone + [s.path for s in updates.skipped] + [a.path for a in updates.attachments]
            # a name that is not UTF-8 was never stored (SQLite text is UTF-8); nothing to delete
            kept = ((record.path, self.notes.kept_encoding(record)) for record, _doc in updates.notes)
            encoded = {path: blob for path, blob in kept if blob is not None}
            self.cache.apply(updates.notes, [p for p in deletes if is_valid_name(p)], encoded, self.notes)

    def _reread(self, path: str) -> NoteRecord | None:
        """A note's record parsed again from the vault (its cached record was lost); None when it
        is no note now (the watcher's refresh drops it)."""
        fs = classify(self.root, path)
        if not isinstance(fs, FileStat) or not fs.is_note:
            return None
        parsed = read_note(self.root, fs)
        return None if isinstance(parsed, SkippedFile) else parsed[0]

    def _put_note(self, record: NoteRecord) -> bytes | None:
        """Index ``record``; answer its encoding (None when it has none), for the cache."""
        blob = self.notes.put(record)
        self._map_note(record)
        return blob

    def _map_note(self, record: NoteRecord | Sketch, path: str | None = None) -> None:
        """Put a note's names in the maps; ``path``: the table's own string for the record's path
        (kept once, for the table and the maps)."""
        if path is None:
            path = record.path
        self._count_folders(path, 1)
        self.resolver.add(path)
        title = record.title
        if title in self.suggester:  # another note's title too: counted apart (a few notes do)
            self._titles[title] = self._titles.get(title, 0) + 1
        else:
            self.suggester.add(title)
        aliases, linkers = self._aliases, self._linkers
        for alias in record.aliases:
            key = name_key(alias)
            aliases[key] = added(aliases.get(key), path, ordered=False)
        for link in record.links:  # the warm start's inner loop: link_key and added, inlined
            if target := link.target:
                name = target.rpartition("/")[2]
                key = name.lower() if name.isascii() else name_key(name)
                if key.endswith(".md"):
                    key = key[:-3]
                bag = linkers.get(key)
                if bag is None:
                    linkers[sys.intern(key)] = path  # the string the resolver holds for that name
                elif bag is path:
                    continue
                elif type(bag) is list and len(bag) < LARGE:
                    # A note's paths are added in this one call, so only the last entry can be
                    # it: no scan of the list (a name many notes link to, in a build).
                    if bag[-1] is not path:
                        bag.append(path)
                else:
                    linkers[key] = added(bag, path, ordered=False)

    def _forget(self, path: str) -> None:
        if self.skipped.pop(path, None) is not None:
            self._count_folders(path, -1)
        if self.attachments.pop(path, None) is not None:
            self._count_folders(path, -1)
            self.resolver.remove(path)
        record = self.notes.pop(path)
        if record is None:
            return
        self._count_folders(path, -1)
        self.resolver.remove(path)
        others = self._titles.pop(record.title, 0)
        if others > 1:
            self._titles[record.title] = others - 1
        elif not others:
            self.suggester.remove(record.title)
        for alias in record.aliases:
            self._discard(self._aliases, name_key(alias), path)
        for link in record.links:
            if link.target:
                self._discard(self._linkers, link_key(link), path)

    @staticmethod
    def _discard(table: dict[str, PathBag], key: str, path: str) -> None:
        entries = table.get(key)
        if entries is not None:
            left = removed(entries, path)
            if left is None:
                del table[key]
            else:
                table[key] = left

    def _count_folders(self, path: str, step: int) -> None:
        folder = path
        while (cut := folder.rfind("/")) > 0:
            folder = folder[:cut]
            below = self._folders.get(folder, 0) + step
            if below:
                self._folders[folder] = below
            else:
                del self._folders[folder]

    def known_under(self, prefix: str) -> list[str]:
        """Indexed paths at or below a vault-relative path (a file gone, or a folder moved away).

        Only a folder with indexed paths below it is looked for across the index: a write's
        temporary file, renamed away, is one of these per write.
        """
        prefix = prefix.rstrip("/")
        own = [prefix] if prefix in self.notes or prefix in self.attachments or prefix in self.skipped else []
        if prefix not in self._folders:
            return own
        base = prefix + "/"
        return own + [p for p in (*self.notes, *self.attachments, *self.skipped) if p.startswith(base)]

    def stat_paths(self, rels: Iterable[str]) -> tuple[list[FileStat | SkippedFile], list[str]]:
        """Classify changed paths for a refresh: what exists now (folders expanded), what is gone.

        Each path comes out once: a batch that names a folder and the files in it (a checkout
        or an unpacked archive creates both) would otherwise have every such file read, parsed
        and stored twice.
        """
        found: dict[str, FileStat | SkippedFile] = {}
        gone: dict[str, None] = {}
        for rel in sorted(rels):  # a folder before its files: a file its walk found is not looked at again
            if rel in found or is_ignored(rel):
                continue
            item = classify(self.root, rel)
            if item is not None:
                found[item.path] = item
            elif (self.root / rel).is_dir() and not (self.root / rel).is_symlink():
                found.update((each.path, each) for each in walk(self.root, rel))
            else:
                gone.update(dict.fromkeys(self.known_under(rel)))
        return list(found.values()), [path for path in gone if path not in found]

    # -- reading ----------------------------------------------------------------------------

    def resolve(self, link: Link, source: str) -> Resolution:
        return self.resolver.resolve(link.target, source)

    def notes_by_alias(self, text: str) -> list[str]:
        # A note whose cached record was lost, and gone from the disk when it was dropped, may
        # leave its aliases behind (its record was not there to say them): never named.
        return sorted(p for p in members(self._aliases.get(name_key(text))) if p in self.notes)

    def copy(self) -> IndexCopy:
        """This state of the index, for a reader that lets it go (call it on the event loop, or
        with the index held still)."""
        return IndexCopy(
            origin=self,
            generation=self.generation,
            notes=self.notes.copy(),
            attachments=dict(self.attachments),
            skipped=dict(self.skipped),
            resolver=self.resolver.copy(),
            suggester=self.suggester.copy(),
        )

    def backlinks(self, path: str, seen: Callable[[Resolution], Resolution] | None = None) -> Iterator[tuple[str, Link]]:
        """Every (source, link) that resolves to ``path``, sources in path order; ``seen`` turns a
        resolution into the one a caller sees (a name shared with a note it may not see)."""
        key = note_key(path)
        for source in sorted(members(self._linkers.get(key))):
            record = self.notes.get(source)
            if record is None:
                continue
            for link in record.links:
                if link.target and link_key(link) == key:
                    res = self.resolver.resolve(link.target, source)
                    if seen is not None:
                        res = seen(res)
                    if res.path == path:
                        yield source, link

    def title_of(self, path: str) -> str:
        record = self.notes.get(path)
        return record.title if record is not None else stem_of(path)
