"""The index reads each note's record from its cache file; the file stays a derived one: deleted
or damaged while the daemon runs, every answer stays whole (a record the file lost is read again
from the note), and the next start rebuilds it."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from tests.support.harness import Daemon, registered_vault
from tests.support.wait import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Home


def _notes() -> dict[str, str]:
    notes = {
        f"topics/T{i}.md": (
            f"---\ntags: [topic, t{i % 3}]\naliases: [Alias {i}]\ntype: topic\n---\n# Topic {i}\n\n"
            f"## Part {i}\n\nSee [[T{(i + 1) % 12}]] and [[Missing {i}]] #inline{i % 2} ^b{i}\n\n- [ ] task {i}\n"
        )
        for i in range(12)
    }
    notes["Broken.md"] = "---\ntags: [a\n---\n# Broken\n\nlinks [[T1#Part 1]]\n"
    return notes


def _answers(cli: Any) -> dict[str, object]:
    """What reads that need every note's record answer (links, tags, issues, list, stats)."""
    out: dict[str, object] = {}
    for name, args in {
        "links": ("links", "T1", "--json"),
        "links-broken": ("links", "Broken", "--json"),
        "tags": ("tags", "--json"),
        "issues": ("issues", "--json"),
        "list": ("list", "--json"),
        "stats": ("stats", "--json"),
        "show": ("show", "T5", "--json"),
        "alias": ("show", "Alias 7", "--json"),
    }.items():
        done = cli(*args)
        assert done.code in (0, 1), done.err
        out[name] = done.json()
    return out


def _lasting(answers: dict[str, object]) -> dict[str, object]:
    """The answers a note with no links, tags or issues leaves alone."""
    return {k: v for k, v in answers.items() if k not in ("list", "stats")}


def _write_and_wait(home: Home, cli: Any, name: str) -> None:
    (home.vault / f"{name}.md").write_text(f"# {name}\n\nplain words\n")
    wait_until(lambda: cli("show", name, "--json").code == 0, 60, f"{name} indexed")


def _cache_files(home: Home) -> list[Path]:
    folder = home.home / "indexes"
    return [p for p in folder.iterdir() if p.name.endswith((".sqlite", ".sqlite-wal", ".sqlite-shm"))]


def _restart(home: Home, daemon: Daemon, cli: Any, expected: dict[str, object]) -> Daemon:
    daemon.stop()
    again = Daemon(home)
    try:
        wait_until(lambda: cli("list", "--json").code == 0, 120, "the restarted daemon's index")
        assert _lasting(_answers(cli)) == _lasting(expected)
    except BaseException:
        again.stop()
        raise
    return again


def test_answers_stay_whole_when_the_cache_file_is_deleted_then_damaged(home: Home, daemon: Daemon, cli: Any) -> None:
    registered_vault(home, _notes())
    expected = _answers(cli)
    assert expected["tags"] and expected["issues"]
    # A restart: every record is now read from the file the first daemon wrote; deleted, the
    # daemon's open connections keep the file's last state, and a write after it is indexed.
    daemon = _restart(home, daemon, cli, expected)
    try:
        for path in _cache_files(home):
            path.unlink()
        assert _answers(cli) == expected
        _write_and_wait(home, cli, "Extra1")
        assert _lasting(_answers(cli)) == _lasting(expected)
        daemon = _restart(home, daemon, cli, expected)  # the start builds the file again
        # Damaged: every page after the first, and the write-ahead log, garbage; a change then
        # makes the daemon read the file again.
        cache = next(p for p in _cache_files(home) if p.name.endswith(".sqlite"))
        size = cache.stat().st_size
        with open(cache, "r+b") as f:
            f.seek(4096)
            f.write(os.urandom(max(size - 4096, 4096)))
        for path in _cache_files(home):
            if path.name.endswith("-wal"):
                path.write_bytes(os.urandom(path.stat().st_size))
        assert _lasting(_answers(cli)) == _lasting(expected)
        _write_and_wait(home, cli, "Extra2")
        assert _lasting(_answers(cli)) == _lasting(expected)
        # The damage was met (SQLite's, or a checksum's): records were read again from the notes.
        assert "the note was read again" in home.log_file.read_text()
        daemon = _restart(home, daemon, cli, expected)
    finally:
        daemon.stop()
