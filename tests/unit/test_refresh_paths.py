"""A refresh reads each changed file once, however the watcher's batch names it, and reads it
the way a note must be read: never through a symlink, never blocking, never past the limit."""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

from hypothesis import given
from hypothesis import strategies as st

from vaultd.vault.index import VaultIndex
from vaultd.vault.note import MAX_NOTE_BYTES
from vaultd.vault.reading import Updates, compute_updates, read_note
from vaultd.vault.walk import LINK_REASON, NOT_REGULAR_REASON, FileStat, SkippedFile

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def _vault(tmp_path: Path, files: int) -> tuple[Path, list[str]]:
    root = tmp_path / "vault"
    (root / "chk" / "deep").mkdir(parents=True)
    rels = [f"chk/c{i}.md" for i in range(files)] + ["chk/deep/d.md", "chk/pic.png"]
    for rel in rels:
        (root / rel).write_text(f"# {rel}\n\nbody\n")
    return root, rels


def test_a_folder_and_the_files_in_it_are_each_read_once(tmp_path: Path) -> None:
    root, rels = _vault(tmp_path, 5)
    index = VaultIndex(root, None)
    # What a checkout's batch holds: the new folders and every file created in them.
    found, gone = index.stat_paths({"chk", "chk/deep", *rels})
    paths = [item.path for item in found]
    assert sorted(paths) == sorted(rels)
    assert gone == []
    updates = compute_updates(root, found, index.notes, gone)
    assert sorted(record.path for record, _doc in updates.notes) == sorted(r for r in rels if r.endswith(".md"))
    assert [a.path for a in updates.attachments] == ["chk/pic.png"]


def test_a_removed_folder_and_its_files_are_each_gone_once(tmp_path: Path) -> None:
    root, rels = _vault(tmp_path, 3)
    index = VaultIndex(root, None)
    found, gone = index.stat_paths(rels)
    index.apply(compute_updates(root, found, index.notes, gone))
    shutil.rmtree(root / "chk")
    found, gone = index.stat_paths({"chk", "chk/deep", *rels})
    assert found == []
    assert sorted(gone) == sorted(rels)


def _stat(rel: str) -> FileStat:
    # What the walk saw before the file changed under it: a regular note.
    return FileStat(rel, 10, 0, 0, is_note=True)


def test_a_note_that_became_a_link_is_skipped_not_followed(tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("# outside\n")
    (tmp_path / "a.md").symlink_to(tmp_path / "secret.md")
    skipped = read_note(tmp_path, _stat("a.md"))
    assert skipped == SkippedFile("a.md", "S04", LINK_REASON)


def test_a_note_that_became_a_fifo_is_skipped_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "a.md")
    assert read_note(tmp_path, _stat("a.md")) == SkippedFile("a.md", "S06", NOT_REGULAR_REASON)


def test_a_note_over_the_limit_is_skipped_with_its_size(tmp_path: Path) -> None:
    with open(tmp_path / "big.md", "wb") as fh:
        fh.truncate(MAX_NOTE_BYTES + 1)
    skipped = read_note(tmp_path, _stat("big.md"))
    assert isinstance(skipped, SkippedFile)
    assert (skipped.code, str(MAX_NOTE_BYTES + 1) in skipped.reason) == ("S01", True)


def test_a_note_at_the_limit_is_read_whole(tmp_path: Path) -> None:
    body = b"# Edge\n\n" + b"x" * (MAX_NOTE_BYTES - 8)
    (tmp_path / "edge.md").write_bytes(body)
    parsed = read_note(tmp_path, _stat("edge.md"))
    assert not isinstance(parsed, SkippedFile)
    record, _doc = parsed
    assert (record.size, record.title) == (MAX_NOTE_BYTES, "Edge")


_PARTS = st.sampled_from(["a", "b", "a.md", "b c", "ä"])
_PATHS = st.lists(_PARTS, min_size=1, max_size=4).map("/".join)
_STEPS = st.lists(st.tuples(st.sampled_from(["note", "attachment", "skipped", "gone"]), _PATHS), max_size=40)


@given(steps=_STEPS, asked=st.lists(_PATHS, max_size=10))
def test_what_is_known_under_a_path_is_what_a_scan_of_the_index_finds(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, str]], asked: list[str]
) -> None:
    """A gone path is looked for below itself only when it was a folder; the folder counts that
    decide it must agree with a scan after any mix of notes, attachments and skipped files."""
    root = tmp_path_factory.mktemp("vault")
    index = VaultIndex(root, None)
    for kind, rel in steps:
        if kind == "note":
            try:  # a real file to parse; a step the disk cannot take (a file where a folder is) is left out
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(f"# {rel}\n")
            except OSError:
                continue
            updates = compute_updates(root, [FileStat(rel, 1, 0, 0, is_note=True)], index.notes, [])
        elif kind == "attachment":
            updates = Updates(attachments=[FileStat(rel, 1, 0, 0, is_note=False)])
        elif kind == "skipped":
            updates = Updates(skipped=[SkippedFile(rel, "S01", "test")])
        else:
            updates = Updates(gone=[rel])
        index.apply(updates)
    everything = [*index.notes, *index.attachments, *index.skipped]
    for rel in {*asked, *(r for _k, r in steps)}:
        scanned = sorted(p for p in everything if p == rel or p.startswith(rel + "/"))
        assert sorted(index.known_under(rel)) == scanned, rel
