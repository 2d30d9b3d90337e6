"""A daemon killed in the middle of a cold build leaves a cache the next start can trust: each
note the file holds is whole (its stat, record and text rows together), the notes it lacks are
parsed again, and the index ends up the vault's, every note found."""

from __future__ import annotations

import signal
from typing import TYPE_CHECKING

import apsw

from protocol.methods.reads import LIST, SEARCH, ListParams, SearchParams
from tests.support.harness import Daemon, RawClient
from tests.support.wait import wait_until
from vaultctl.client import CallError
from vaultd.vault.cache.sqlite_file import cache_file_name

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Home
    from tests.support.typed import TypedClients

NOTES = 1300  #: six chunks of a build (BUILD_CHUNK 256); the crash comes at the fourth


def _vault(root: Path) -> None:
    for i in range(NOTES):
        folder = root / f"f{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"N{i}.md").write_text(f"---\ntags: [t{i % 5}]\n---\n# Note {i}\n\nword{i} and [[N{(i + 1) % NOTES}]]\n")


def _rows(home: Home, root: Path) -> dict[str, set[int]]:
    path = home.home / "indexes" / cache_file_name(str(root.resolve()))
    con = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return {
            table: {row[0] for row in con.execute(f"SELECT {key} FROM {table}")}
            for table, key in (("note", "id"), ("record", "id"), ("fts", "rowid"))
        }
    finally:
        con.close()


def test_a_build_killed_midway_leaves_whole_notes_and_the_next_start_indexes_every_one(home: Home, typed_clients: TypedClients) -> None:
    root = home.root / "vault"
    _vault(root)
    home.env["VAULTD_FAULTS"] = "crash=build-chunk@4"
    daemon = Daemon(home)
    del home.env["VAULTD_FAULTS"]
    try:
        client = RawClient.session(home.socket, 120)
        client.send(1, "vault.add", {"id": "v", "path": str(root)})
        assert daemon.proc.wait(120) == -signal.SIGKILL, "the build must die at its fourth chunk"
        client.close()
    finally:
        daemon.stop()
    rows = _rows(home, root)
    # What the killed build committed is whole notes: none with its stat row and no text or record.
    assert rows["note"] == rows["record"] == rows["fts"]
    assert len(rows["note"]) < NOTES

    daemon = Daemon(home)
    try:
        c = typed_clients.open(home)

        def listed() -> bool:
            try:
                return c.call(LIST, ListParams(vault="v", limit=1)).total == NOTES
            except CallError:  # still indexing
                return False

        wait_until(listed, 300, "the index of every note")
        for i in (0, 700, NOTES - 1):
            hits = c.call(SEARCH, SearchParams(vault="v", query=f"word{i}")).hits
            assert [h.path for h in hits] == [f"f{i % 7}/N{i}.md"], hits
    finally:
        daemon.stop()
    rows = _rows(home, root)
    assert len(rows["note"]) == NOTES and rows["note"] == rows["record"] == rows["fts"]
