"""The directory-descriptor primitives every vault write goes through (vaultd/txn/dirfd.py), and
the engine on top of them: a folder on the way that is a link, a file, or gone is refused for
read, write, rename, unlink and mkdir, and nothing outside the vault changes."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

import pytest

from vaultd import content_mode
from vaultd.errors import Conflict, InvalidParams
from vaultd.txn.dirfd import NotAFolder, VaultRoot
from vaultd.txn.engine import _put, apply_plan, read_current
from vaultd.txn.plan import Change, Plan

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

OUTSIDE_BYTES = b"outside the vault: never touched\n"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A vault whose ``linked/`` folder is a symlink to an outside folder holding ``n.md``."""
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    (vault / "real").mkdir(parents=True)
    (vault / "real" / "n.md").write_bytes(b"# inside\n")
    (vault / ".vaultd").mkdir()
    outside.mkdir()
    (outside / "n.md").write_bytes(OUTSIDE_BYTES)
    (vault / "linked").symlink_to(outside, target_is_directory=True)
    (vault / "deep").mkdir()
    (vault / "deep" / "linked").symlink_to(outside, target_is_directory=True)
    return vault, outside


@pytest.fixture
def root(layout: tuple[Path, Path]) -> Iterator[VaultRoot]:
    with VaultRoot(layout[0]) as r:
        yield r


def _outside_untouched(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["n.md"]
    assert (outside / "n.md").read_bytes() == OUTSIDE_BYTES


@pytest.mark.parametrize("create", [False, True], ids=["existing", "create"])  # create: the mkdir path
@pytest.mark.parametrize("rel", ["linked/n.md", "deep/linked/n.md", "linked/new/n.md"])
def test_a_linked_folder_on_the_way_is_refused_for_read_and_for_every_write(
    root: VaultRoot, layout: tuple[Path, Path], rel: str, create: bool
) -> None:
    with pytest.raises(Conflict, match="symbolic link"):
        root.read_file(rel, 1 << 20)
    with pytest.raises(Conflict, match="symbolic link"):
        read_current(layout[0], rel)
    with pytest.raises(Conflict, match="symbolic link"):
        root.parent(rel, create=create)
    _outside_untouched(layout[1])


@pytest.mark.parametrize(
    "change",
    [
        Change(path="linked/n.md", before=OUTSIDE_BYTES, after=b"rewritten\n"),  # temp write + rename
        Change(path="linked/n.md", before=OUTSIDE_BYTES, after=None),  # unlink
        Change(path="linked/fresh.md", before=None, after=b"new\n"),  # create
        Change(path="deep/linked/sub/fresh.md", before=None, after=b"new\n"),  # mkdir under the link
    ],
    ids=["rewrite", "unlink", "create", "mkdir"],
)
def test_the_engine_refuses_to_write_through_a_linked_folder(layout: tuple[Path, Path], change: Change) -> None:
    """Refused when the plan is checked, and by the write itself when the link appears after
    the check (the write reaches its folder only through descriptors)."""
    vault, outside = layout
    plan = Plan(op="test", changes=[change], summary="test")
    with pytest.raises(Conflict, match="symbolic link"):
        apply_plan(vault, plan, "20260101T000000-0000aaaa", "cli")
    _outside_untouched(outside)
    journal = vault / ".vaultd" / "journal"
    assert not journal.exists() or not list(journal.iterdir())
    with VaultRoot(vault) as root, pytest.raises(Conflict, match="symbolic link"):
        _put(root, change)
    _outside_untouched(outside)


def test_a_file_where_a_folder_should_be_reads_as_absent_and_refuses_writes(root: VaultRoot) -> None:
    assert root.read_file("real/n.md/x.md", 1 << 20) is None
    with pytest.raises(NotAFolder):
        root.parent("real/n.md/x.md", create=True)


def test_a_missing_folder_reads_as_absent_and_is_made_only_when_asked(layout: tuple[Path, Path], root: VaultRoot) -> None:
    assert root.read_file("gone/x.md", 1 << 20) is None
    with pytest.raises(FileNotFoundError):
        root.parent("gone/x.md")
    assert not (layout[0] / "gone").exists()


@pytest.mark.parametrize("create", [False, True], ids=["existing", "create"])
@pytest.mark.parametrize("rel", ["../outside/n.md", "/etc/passwd", "a//b.md", "./n.md", "a/\x00.md", ""])
def test_paths_that_name_more_than_one_entry_below_the_root_are_refused(root: VaultRoot, rel: str, create: bool) -> None:
    """Refused for every write; a read answers "absent" (NUL aside) so the path rules name it."""
    with pytest.raises(InvalidParams):
        root.parent(rel, create=create)
    if "\x00" in rel:
        with pytest.raises(InvalidParams, match="NUL"):
            root.read_file(rel, 1 << 20)
    else:
        assert root.read_file(rel, 1 << 20) is None


def test_a_final_link_is_refused_for_read(layout: tuple[Path, Path], root: VaultRoot) -> None:
    (layout[0] / "real" / "l.md").symlink_to(layout[1] / "n.md")
    with pytest.raises(Conflict, match="symbolic link"):
        root.read_file("real/l.md", 1 << 20)


def test_an_open_folder_stays_bound_to_its_descriptor_when_its_name_is_swapped(layout: tuple[Path, Path], root: VaultRoot) -> None:
    """The swap after the folder was opened does not redirect the write: it lands in the folder
    that was opened (now under its new name), never in the link's target."""
    vault, outside = layout
    folder, name = root.parent("real/n.md")
    with folder:
        (vault / "real").rename(vault / "real.moved")
        (vault / "real").symlink_to(outside, target_is_directory=True)
        temp = folder.write_temp(b"bound\n", 0o644)
        temp.rename_over(name)
    _outside_untouched(outside)
    assert (vault / "real.moved" / "n.md").read_bytes() == b"bound\n"


def test_new_folders_and_temp_files_get_the_modes_asked_for_not_the_process_umask(
    layout: tuple[Path, Path], root: VaultRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(content_mode, "_user_umask", 0o002)
    old = os.umask(0o077)
    try:
        folder, name = root.parent("made/one/x.md", create=True)
        with folder:
            temp = folder.write_temp(b"x\n", 0o640)
            temp.rename_over(name)
    finally:
        os.umask(old)
    vault = layout[0]
    assert stat.S_IMODE((vault / "made").stat().st_mode) == 0o775
    assert stat.S_IMODE((vault / "made" / "one").stat().st_mode) == 0o775
    assert stat.S_IMODE((vault / "made" / "one" / "x.md").stat().st_mode) == 0o640
