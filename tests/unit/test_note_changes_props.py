"""The note events of a refresh or a rebuild, as properties: applied to the index before, they give
the index after; no path is reported twice; a rename is only ever identical bytes at a new path."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hypothesis import given
from hypothesis import strategies as st

from protocol.methods.events import NoteChanged, NoteCreated, NoteRemoved, NoteRenamed, event_paths
from vaultd.vault.cache import SearchDoc
from vaultd.vault.changes import index_changes, refresh_changes
from vaultd.vault.model import NoteRecord
from vaultd.vault.reading import Updates

if TYPE_CHECKING:
    from collections.abc import Sequence

PATHS = st.sampled_from([f"{d}n{i}.md" for d in ("", "a/", "b/") for i in range(5)])
SHAS = st.sampled_from(["s1", "s2", "s3", "s4"])  # few values: twins and renames are common
INOS = st.integers(min_value=1, max_value=6)
STATES = st.dictionaries(PATHS, st.tuples(SHAS, INOS), max_size=12)


def record(path: str, sha: str, ino: int) -> NoteRecord:
    return NoteRecord(
        path=path,
        size=1,
        mtime_ns=ino,
        ino=ino,
        sha256=sha,
        title=path,
        frontmatter=None,
        aliases=[],
        tags=[],
        headings=[],
        blocks=[],
        links=[],
        issues=[],
        words=0,
        body_offset=0,
    )


def index_of(state: dict[str, tuple[str, int]]) -> dict[str, NoteRecord]:
    return {p: record(p, sha, ino) for p, (sha, ino) in state.items()}


def replay(before: dict[str, NoteRecord], events: Sequence[object]) -> dict[str, str]:
    """What a client's view of the vault (path -> bytes) becomes by applying the events."""
    view = {p: r.sha256 for p, r in before.items()}
    for event in events:
        match event:
            case NoteRenamed(path=new, old_path=old):
                assert new not in view
                view[new] = view.pop(old)
            case NoteRemoved(path=path):
                del view[path]
            case NoteCreated(path=path):
                assert path not in view
                view[path] = "?"
            case NoteChanged(path=path):
                assert path in view
                view[path] = "?"
    return view


@given(STATES, STATES)
def test_the_events_take_the_index_before_to_the_index_after(old: dict[str, tuple[str, int]], new: dict[str, tuple[str, int]]) -> None:
    before, after = index_of(old), index_of(new)
    events = index_changes(before, after)
    view = replay(before, events)
    assert view.keys() == after.keys()
    for path, sha in view.items():
        assert sha in ("?", after[path].sha256), "a rename carries identical bytes"
    created_or_changed = {e.path for e in events if isinstance(e, NoteCreated | NoteChanged)}
    assert {p for p, sha in view.items() if sha == "?"} == created_or_changed
    named = [p for e in events for p in event_paths(e)]
    assert len(named) == len(set(named)), "no path is reported twice"
    for e in events:
        if isinstance(e, NoteChanged):
            assert before[e.path].sha256 != after[e.path].sha256, "unchanged bytes are not a change"


@given(STATES, STATES)
def test_a_refresh_reports_what_the_rebuild_would(old: dict[str, tuple[str, int]], new: dict[str, tuple[str, int]]) -> None:
    before, after = index_of(old), index_of(new)
    updates = Updates(
        notes=[(r, SearchDoc.from_note(r, "")) for r in after.values()],  # a refresh re-reads every path it was told of
        gone=[p for p in before if p not in after],
    )
    assert refresh_changes(before, updates) == index_changes(before, after)


def test_a_rename_prefers_the_same_file_among_identical_twins() -> None:
    before = {"a.md": record("a.md", "same", 1), "b.md": record("b.md", "same", 2)}
    after = {"c.md": record("c.md", "same", 2), "a.md": record("a.md", "same", 1)}
    assert index_changes(before, after) == [NoteRenamed(path="c.md", old_path="b.md")]
    ambiguous = {"c.md": record("c.md", "same", 7), "d.md": record("d.md", "same", 8)}
    events = index_changes(before, ambiguous)
    assert not any(isinstance(e, NoteRenamed) for e in events), "twins with no inode to tell them apart stay removed and created"
