"""A refresh reads each changed file once, however the watcher's batch names it."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from vaultd.vault.index import VaultIndex, compute_updates

if TYPE_CHECKING:
    from pathlib import Path


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
