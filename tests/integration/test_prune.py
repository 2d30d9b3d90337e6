"""Pruning old journals never rolls back an acknowledged operation: a journal leaves the live
namespace (renamed and synced) before it is deleted, a kill in between is finished by recovery,
and a committed journal whose marker was lost anyway is finished, not rolled back."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from tests.support.harness import Daemon, Home, RawClient, snapshot, vaultctl

if TYPE_CHECKING:
    from pathlib import Path

PATCH = {"target": "Alpha Plan", "old": "ships the search", "new": "ships the find"}


def _session(home: Home) -> RawClient:
    c = RawClient(home.socket)
    c.hello()
    return c


def _start(home: Home, keep: int | None = None, faults: str | None = None) -> Daemon:
    for name, value in (("VAULTD_JOURNAL_KEEP", keep), ("VAULTD_FAULTS", faults)):
        if value is None:
            home.env.pop(name, None)
        else:
            home.env[name] = str(value)
    return Daemon(home)


def _journal(vault: Path) -> list[str]:
    return sorted(p.name for p in (vault / ".vaultd" / "journal").iterdir())


def _append(c: RawClient, i: int) -> str:
    op_id: str = c.call("note.append", {"target": "Ada Lovelace", "section": "Prune", "markdown": f"- op {i}"})["op_id"]
    return op_id


def test_pruning_keeps_the_newest_journals_and_nothing_else(home: Home, sample_vault: Path) -> None:
    d = _start(home, keep=3)
    try:
        c = _session(home)
        c.call("vault.add", {"id": "v", "path": str(sample_vault)})
        applied = [_append(c, i) for i in range(8)]
        assert _journal(sample_vault) == applied[-3:]
        assert all((sample_vault / ".vaultd" / "journal" / o / "committed").is_file() for o in applied[-3:])
        assert [o["op_id"] for o in c.call("op.list", {})["ops"]] == applied[:-4:-1]
    finally:
        d.stop()


def test_a_kill_between_renaming_a_journal_out_and_deleting_it_loses_nothing(home: Home, sample_vault: Path) -> None:
    d = _start(home)
    _session(home).call("vault.add", {"id": "v", "path": str(sample_vault)})
    d.stop()
    d = _start(home, keep=2, faults="crash=during-prune")
    c = _session(home)
    acknowledged: list[str] = []
    with pytest.raises((ConnectionError, OSError, json.JSONDecodeError)):
        for i in range(10):
            acknowledged.append(_append(c, i))
    assert d.stop() == -9, "the daemon must die in its first prune"
    assert len(acknowledged) == 2, "the third operation's prune is the first"
    names = _journal(sample_vault)
    assert acknowledged[0] not in names, "the pruned journal left the live namespace before the kill"
    assert [n for n in names if n.startswith(acknowledged[0])] == [n for n in names if n.endswith(".dead")]
    assert len([n for n in names if n.endswith(".dead")]) == 1
    d = _start(home, keep=2)
    try:
        c = _session(home)
        assert c.call("note.search", {"query": "alpha", "fresh": True})["hits"]  # recovery is done
        text = (sample_vault / "people" / "Ada Lovelace.md").read_text(encoding="utf-8")
        assert all(f"- op {i}" in text for i in range(3)), "acknowledged (and the committed third) kept"
        names = _journal(sample_vault)
        assert len(names) == 2 and acknowledged[1] in names and not any("." in n[16:] for n in names), names
        listed = [o["op_id"] for o in c.call("op.list", {})["ops"]]
        assert listed[1] == acknowledged[1] and len(listed) == 2
    finally:
        d.stop()


def test_a_journal_that_lost_its_commit_marker_is_finished_not_rolled_back(home: Home, sample_vault: Path) -> None:
    """The state a delete cut short could leave: a manifest without its marker, older than a
    committed operation. It was acknowledged, so recovery must not roll it back."""
    d = _start(home)
    try:
        c = _session(home)
        c.call("vault.add", {"id": "v", "path": str(sample_vault)})
        first = c.call("note.patch", PATCH)["op_id"]
        second = _append(c, 0)
    finally:
        d.stop()
    marker = sample_vault / ".vaultd" / "journal" / first / "committed"
    marker.unlink()
    acknowledged = snapshot(sample_vault)
    d = _start(home)
    try:
        c = _session(home)
        assert c.call("note.search", {"query": "find", "fresh": True})["hits"]
        assert snapshot(sample_vault) == acknowledged
        assert "ships the find" in (sample_vault / "projects/alpha/Alpha Plan.md").read_text(encoding="utf-8")
        assert marker.is_file(), "the lost marker is written again"
        assert [o["op_id"] for o in c.call("op.list", {})["ops"]] == [second, first]
        doctor = vaultctl(home, "doctor", "--json").json()
        assert any(first in f["finding"] and "lost their commit marker" in f["finding"] for f in doctor["findings"]), doctor
        assert c.call("op.undo", {"op_id": second})["applied"]
        assert c.call("op.undo", {"op_id": first})["applied"], "the finished operation can still be undone"
        assert "ships the search" in (sample_vault / "projects/alpha/Alpha Plan.md").read_text(encoding="utf-8")
    finally:
        d.stop()
