"""The inotify watch on a real folder tree: what it reports, under which name, and when it gives up."""

from __future__ import annotations

import os
import shutil
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.wait import wait_until_async
from vaultd.vault import inotify
from vaultd.vault.inotify import TreeWatch, WatchFailed

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

pytestmark = pytest.mark.skipif(not inotify.available(), reason="inotify is Linux's")


class Seen:
    def __init__(self) -> None:
        self.paths: set[str] = set()
        self.each: list[set[str]] = []
        self.batches = 0
        self.failure: BaseException | None = None
        self.changed = anyio.Event()
        self.tree: TreeWatch | None = None

    async def take(self, batch: set[str]) -> None:
        self.paths |= batch
        self.each.append(batch)
        self.batches += 1
        self.changed.set()
        self.changed = anyio.Event()

    async def until(self, *paths: str, within: float = 5.0) -> None:
        with anyio.fail_after(within):
            while not set(paths) <= self.paths:
                await self.changed.wait()

    async def quiet(self, seconds: float = 0.3) -> set[str]:
        """What arrives in the next ``seconds`` (to show that something is *not* reported)."""
        before = set(self.paths)
        await anyio.sleep(seconds)
        return self.paths - before


@asynccontextmanager
async def watching(root: Path) -> AsyncIterator[Seen]:
    seen = Seen()
    tree = TreeWatch(root)
    seen.tree = tree

    async def run() -> None:
        try:
            await tree.run(lambda batch: seen.take(batch))  # looked up per batch: a test may slow it
        except BaseExceptionGroup as group:
            seen.failure = group.exceptions[0]
            seen.changed.set()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            yield seen
            tg.cancel_scope.cancel()
    finally:
        tree.close()


async def test_a_file_in_a_nested_folder_is_reported_by_its_vault_path(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    async with watching(tmp_path) as seen:
        (tmp_path / "a" / "b" / "n.md").write_text("x")
        await seen.until("a/b/n.md")


async def test_a_new_folder_is_reported_and_then_watched(tmp_path: Path) -> None:
    async with watching(tmp_path) as seen:
        (tmp_path / "new" / "deep").mkdir(parents=True)
        await seen.until("new")  # the refresh walks it: files made before its watch are found so
        await anyio.sleep(0.05)
        (tmp_path / "new" / "deep" / "later.md").write_text("x")
        await seen.until("new/deep/later.md")


async def test_what_a_new_folder_held_before_its_watch_is_reported_too(tmp_path: Path) -> None:
    """No await between the steps: the reader sees the folder only after its files were made,
    so those files raised no event of their own (a checkout writes into folders it just made)."""
    async with watching(tmp_path) as seen:
        (tmp_path / "new" / "sub").mkdir(parents=True)
        (tmp_path / "new" / "a.md").write_text("a")
        (tmp_path / "new" / "sub" / "b.md").write_text("b")
        await seen.until("new", "new/a.md", "new/sub", "new/sub/b.md")


async def test_a_folder_moved_out_is_no_longer_reported_and_one_moved_in_is(tmp_path: Path) -> None:
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    (vault / "going" / "sub").mkdir(parents=True)
    (outside / "coming" / "sub").mkdir(parents=True)
    async with watching(vault) as seen:
        (vault / "going").rename(outside / "gone")
        (outside / "coming").rename(vault / "came")
        await seen.until("going", "came")
        await anyio.sleep(0.05)
        (outside / "gone" / "sub" / "x.md").write_text("x")
        (vault / "came" / "sub" / "y.md").write_text("y")
        await seen.until("came/sub/y.md")
        assert not {p for p in seen.paths if p.startswith(("going/", "gone"))}


async def test_a_folder_renamed_inside_reports_under_its_new_name(tmp_path: Path) -> None:
    (tmp_path / "old" / "sub").mkdir(parents=True)
    async with watching(tmp_path) as seen:
        (tmp_path / "old").rename(tmp_path / "new")
        await seen.until("old", "new")
        await anyio.sleep(0.05)
        (tmp_path / "new" / "sub" / "z.md").write_text("z")
        await seen.until("new/sub/z.md")
        assert not {p for p in seen.paths if p.startswith("old/")}


async def test_a_rename_into_another_folder_is_one_batch(tmp_path: Path) -> None:
    """Its two halves are queued one after the other; a batch handed over between them would
    read as a removal and a creation, not as a rename."""
    (tmp_path / "projects").mkdir()
    async with watching(tmp_path) as seen:
        for i in range(20):
            (tmp_path / f"d{i}.md").write_text("x")
            await seen.until(f"d{i}.md")
            os.rename(tmp_path / f"d{i}.md", tmp_path / "projects" / f"f{i}.md")
            await seen.until(f"projects/f{i}.md")
            assert any({f"d{i}.md", f"projects/f{i}.md"} <= batch for batch in seen.each), seen.each[-3:]


async def test_a_burst_is_gathered_into_few_batches(tmp_path: Path) -> None:
    async with watching(tmp_path) as seen:

        def write() -> None:  # as an editor or git would, while the event loop runs
            for i in range(500):
                (tmp_path / f"b{i}.md").write_text("x")

        await anyio.to_thread.run_sync(write)
        await seen.until(*(f"b{i}.md" for i in range(500)))
    assert seen.batches <= 50, f"{seen.batches} batches for 500 files: not gathered"


async def test_skipped_folders_are_silent_but_the_cookies_are_not(tmp_path: Path) -> None:
    for folder in (".git/objects", ".obsidian", ".trash", ".vaultd/journal", "notes/.git"):
        (tmp_path / folder).mkdir(parents=True)
    async with watching(tmp_path) as seen:
        for rel in (".git/objects/o", ".obsidian/app.json", ".trash/t.md", ".vaultd/journal/j", ".vaultd/lock", "notes/.git/HEAD"):
            (tmp_path / rel).write_text("x")
        (tmp_path / ".vaultd" / "cookie-1").write_text("")
        await seen.until(".vaultd/cookie-1")
        assert seen.paths == {".vaultd/cookie-1"}
        assert await seen.quiet() == set()


async def test_a_batch_holding_a_cookie_is_handed_over_without_waiting_for_quiet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write's freshness barrier is a cookie: once it is read, everything before it is too."""
    monkeypatch.setattr(inotify, "QUIET_S", 30.0)
    monkeypatch.setattr(inotify, "OPENING_GATHER_S", 60.0)
    (tmp_path / ".vaultd").mkdir()
    async with watching(tmp_path) as seen:
        (tmp_path / "note.md").write_text("x")
        (tmp_path / ".vaultd" / "cookie-1").write_text("")
        await seen.until("note.md", ".vaultd/cookie-1", within=10)  # not the 30 s a quiet folder waits
        assert seen.each == [{"note.md", ".vaultd/cookie-1"}]


async def test_settle_waits_for_a_batch_being_applied(tmp_path: Path) -> None:
    """A barrier called while the batch holding an earlier change is with its receiver returns
    only once the receiver is done with it."""
    async with watching(tmp_path) as seen:
        tree = seen.tree
        assert tree is not None
        applying, release = anyio.Event(), anyio.Event()
        taken = seen.take

        async def slow_take(batch: set[str]) -> None:
            applying.set()
            await release.wait()
            await taken(batch)

        seen.take = slow_take  # type: ignore[method-assign]
        (tmp_path / "n.md").write_text("x")
        await applying.wait()
        settled: list[bool] = []
        async with anyio.create_task_group() as tg:

            async def barrier() -> None:
                settled.append(await tree.settle())

            tg.start_soon(barrier)
            await anyio.sleep(0.2)
            assert settled == [], "returned while the batch was still being applied"
            release.set()
        assert settled == [True] and "n.md" in seen.paths


async def test_settle_returns_once_the_batch_holding_earlier_changes_is_applied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The barrier without a cookie: what was queued before the call is read, handed over at once
    (not after the folder's quiet) and applied before settle returns."""
    monkeypatch.setattr(inotify, "QUIET_S", 30.0)
    monkeypatch.setattr(inotify, "OPENING_GATHER_S", 60.0)
    async with watching(tmp_path) as seen:
        tree = seen.tree
        assert tree is not None
        await wait_until_async(lambda: tree._ready is not None, 5, "the watch running")
        assert await tree.settle(), "nothing queued: settled at once"
        (tmp_path / "a.md").write_text("a")
        (tmp_path / "b.md").write_text("b")
        with anyio.fail_after(10):  # not the 30 s a quiet folder waits
            assert await tree.settle()
        assert {"a.md", "b.md"} <= seen.paths, "applied before settle returned"
    assert not await tree.settle(), "a watch that ended cannot say"


async def test_a_change_to_the_folder_itself_names_the_folder(tmp_path: Path) -> None:
    (tmp_path / "f").mkdir()
    async with watching(tmp_path) as seen:
        (tmp_path / "f").chmod(0o750)
        await seen.until("f")
        assert all("//" not in p and not p.endswith("/") for p in seen.paths)


async def test_the_vault_folder_removed_fails_the_watch(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    async with watching(vault) as seen:
        shutil.rmtree(vault)
        with anyio.fail_after(5):
            while seen.failure is None:
                await seen.changed.wait()
    assert isinstance(seen.failure, WatchFailed)
    assert "moved or removed" in str(seen.failure)


async def test_a_queue_overflow_fails_the_watch(tmp_path: Path) -> None:
    # The kernel's bound (fs.inotify.max_queued_events) cannot be lowered without root; its
    # overflow event is what the kernel sends, so the watch is handed that event.
    tree = TreeWatch(tmp_path)
    try:
        with pytest.raises(WatchFailed, match="overflowed"):
            tree._event(-1, inotify._IN_Q_OVERFLOW, b"")
    finally:
        tree.close()


async def test_many_files_at_once_are_each_reported(tmp_path: Path) -> None:
    """A checkout's worth: the reader drains the queue while batches are handed over."""
    async with watching(tmp_path) as seen:
        (tmp_path / "chk").mkdir()
        names = [f"chk/c{i:05d}.md" for i in range(3000)]

        def write_all() -> None:  # as another process would: the event loop runs meanwhile
            for rel in names:
                (tmp_path / rel).write_text(rel)

        await anyio.to_thread.run_sync(write_all)
        await seen.until(*names, within=30)
    assert seen.failure is None


_names = st.binary(min_size=1, max_size=255).filter(lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b".."))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(_names, min_size=1, max_size=5, unique=True))
def test_any_name_linux_allows_is_reported_as_os_decodes_it(tmp_path: Path, names: list[bytes]) -> None:
    root = tmp_path / f"r{len(os.listdir(tmp_path))}"
    (root / "d").mkdir(parents=True)
    expected = {f"d/{os.fsdecode(n)}" for n in names if os.fsdecode(n) not in {".git", ".obsidian", ".trash", ".vaultd"}}

    async def main() -> None:
        async with watching(root) as seen:
            for name in names:
                fd = os.open(os.fsencode(str(root / "d")) + b"/" + name, os.O_WRONLY | os.O_CREAT, 0o644)
                os.close(fd)
            await seen.until(*expected)

    anyio.run(main)
