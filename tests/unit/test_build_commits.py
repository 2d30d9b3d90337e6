"""A cold build writes its cache in a few large transactions, not one a parsed chunk: each
commit flushes the full-text index's postings into a new segment and merges segments, which cost
most of the cache writer's time. A failed write ends the build with its error, never a hang."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from vaultd.errors import Unavailable
from vaultd.vault import index as index_module
from vaultd.vault.cache import IndexCache
from vaultd.vault.index import VaultIndex

if TYPE_CHECKING:
    from pathlib import Path

NOTES = 1300  #: six chunks of BUILD_CHUNK (256)
GROUP = 512  #: BUILD_COMMIT for these tests: three transactions


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("commits") / "vault"
    for i in range(NOTES):
        folder = root / f"f{i % 9}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"N{i}.md").write_text(f"# Note {i}\n\nword{i} and [[N{(i + 1) % NOTES}]] #t{i % 4}\n")
    return root


@pytest.mark.parametrize(
    ("chunk", "group", "transactions"),
    [
        (256, GROUP, 3),  # 512, 512, then the last 276
        (260, 520, 3),  # every group full, the handing's end after the last: no empty transaction
        (260, 260, 5),
    ],
)
def test_a_cold_build_commits_once_a_group_of_notes_not_once_a_chunk(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, group: int, transactions: int
) -> None:
    monkeypatch.setattr(index_module, "BUILD_CHUNK", chunk)
    monkeypatch.setattr(index_module, "BUILD_COMMIT", group, raising=False)
    monkeypatch.setattr(index_module, "worker_count", lambda _notes: 0)  # the same chunks, parsed here
    cache = IndexCache.open(tmp_path / "c.sqlite")
    commits: list[int] = []

    def committing() -> bool:
        commits.append(1)
        return False  # let it commit

    cache._writer.set_commit_hook(committing)
    try:
        index = VaultIndex(vault, cache)
        parsed, reused = index.build()
        assert (parsed, reused) == (NOTES, 0)
        assert len(commits) == transactions
        assert cache.stats().rows == NOTES
        for i in (0, 255, 256, 700, NOTES - 1):
            assert [h.path for h in cache.search(f"word{i}")] == [f"f{i % 9}/N{i}.md"]
        # Every record is read from the file once its group committed: none is left in memory.
        assert index.notes.in_memory() == 0
        assert index.notes[f"f0/N{NOTES - 1 - (NOTES - 1) % 9}.md"].title == f"Note {NOTES - 1 - (NOTES - 1) % 9}"
    finally:
        cache.close()


def test_a_cache_write_that_fails_ends_the_build_with_its_error(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_module, "BUILD_COMMIT", GROUP, raising=False)
    monkeypatch.setattr(index_module, "worker_count", lambda _notes: 0)
    cache = IndexCache.open(tmp_path / "c.sqlite")
    calls: list[int] = []
    real = cache.apply

    def failing(*args: object, **kwargs: object) -> None:
        calls.append(1)
        if len(calls) == 2:
            raise Unavailable("the cache went away")
        real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cache, "apply", failing)
    try:
        with pytest.raises(Unavailable, match="went away"):
            VaultIndex(vault, cache).build()
    finally:
        cache.close()
