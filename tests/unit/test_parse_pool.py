"""Parsing on worker processes gives exactly what parsing here gives, and a worker that dies or
babbles costs speed, never a note."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from tests.support.corpus import generator
from vaultd.vault import parse_pool
from vaultd.vault.index import BUILD_CHUNK, VaultIndex
from vaultd.vault.parse_pool import parsed_chunks, worker_count
from vaultd.vault.walk import FileStat, walk

if TYPE_CHECKING:
    from pathlib import Path

    from vaultd.vault.reading import Updates


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pool") / "vault"
    subprocess.run(
        [sys.executable, str(generator()), str(out), "--notes", "600", "--seed", "5"], check=True, capture_output=True, timeout=90
    )
    # What a build meets besides notes: a note that is not UTF-8, one with NUL bytes, one over
    # the limit, and one that turns into a link after the walk saw a regular file.
    (out / "odd").mkdir()
    (out / "odd" / "latin1.md").write_bytes(b"# caf\xe9\n")
    (out / "odd" / "nul.md").write_bytes(b"# a\x00b\n")
    with open(out / "odd" / "huge.md", "wb") as fh:
        fh.truncate(2 * 1024 * 1024 + 1)
    (out / "odd" / "turns.md").write_text("# soon a link\n")
    return out


def _chunks(vault: Path) -> list[list[FileStat]]:
    notes = sorted((f for f in walk(vault) if isinstance(f, FileStat) and f.is_note), key=lambda f: f.path)
    return [notes[i : i + BUILD_CHUNK // 4] for i in range(0, len(notes), BUILD_CHUNK // 4)]


def _flat(results: list[Updates]) -> tuple[list[object], list[object]]:
    return [n for u in results for n in u.notes], [s for u in results for s in u.skipped]


def test_workers_parse_exactly_what_this_process_parses(vault: Path) -> None:
    chunks = _chunks(vault)
    link = vault / "odd" / "turns.md"
    link.unlink()
    link.symlink_to(vault / "odd" / "latin1.md")
    try:
        here = _flat(list(parsed_chunks(vault, chunks, 0)))
        there = _flat(list(parsed_chunks(vault, chunks, 2)))
    finally:
        link.unlink()
        link.write_text("# soon a link\n")
    assert len(here[0]) == 600  # every generated note; the odd ones are skipped, each with its code
    assert sorted(s.code for s in here[1]) == ["S01", "S02", "S03", "S04"]  # type: ignore[attr-defined]
    assert there == here


@pytest.mark.parametrize(
    "worker",
    [
        pytest.param(("-c", "import sys; sys.exit(3)"), id="dies-at-once"),
        pytest.param(("-c", "import sys; sys.stdout.buffer.write(b'\\0\\0\\0\\2xx'); sys.stdout.flush()"), id="babbles"),
        pytest.param(("-c", "import sys; sys.stdin.buffer.read(4); sys.exit(0)"), id="ends-mid-build"),
    ],
)
def test_a_lost_worker_costs_speed_never_a_note(vault: Path, worker: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = _chunks(vault)
    expected = _flat(list(parsed_chunks(vault, chunks, 0)))
    monkeypatch.setattr(parse_pool, "WORKER_ARGS", worker)
    assert _flat(list(parsed_chunks(vault, chunks, 2))) == expected


def test_no_worker_outlives_the_build(vault: Path) -> None:
    before = _children()
    results = parsed_chunks(vault, _chunks(vault), 2)
    next(results)
    assert len(_children() - before) == 2  # started, and working
    results.close()  # the build is given up half way
    assert _children() - before == set()


def _children() -> set[int]:
    me = str(os.getpid())
    found = set()
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/stat") as fh:
                    if fh.read().rsplit(")", 1)[1].split()[1] == me:
                        found.add(int(pid))
            except OSError:
                continue
    return found


def test_a_build_with_workers_indexes_what_one_without_does(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    serial = VaultIndex(vault, None)
    monkeypatch.setattr(parse_pool, "PARALLEL_MIN_NOTES", 10**9)
    serial.build()
    monkeypatch.setattr(parse_pool, "PARALLEL_MIN_NOTES", 1)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    assert worker_count(600) == 2
    parallel = VaultIndex(vault, None)
    parallel.build()
    assert parallel.notes == serial.notes
    assert parallel.skipped == serial.skipped


def test_small_builds_and_single_cores_parse_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3}, raising=False)
    assert worker_count(parse_pool.PARALLEL_MIN_NOTES - 1) == 0
    assert worker_count(parse_pool.PARALLEL_MIN_NOTES) == 4
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(64)), raising=False)
    assert worker_count(10**6) == parse_pool.MAX_WORKERS
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0}, raising=False)
    assert worker_count(10**6) == 0
