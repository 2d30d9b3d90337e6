"""Pruning old journals never rolls back an acknowledged operation: a journal leaves the live
namespace (renamed and synced) before it is deleted, a kill in between is finished by recovery,
and a committed journal whose marker was lost anyway is finished, not rolled back."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from protocol.methods.reads import SEARCH, SearchParams
from protocol.methods.receipts import Applied
from protocol.methods.vaults import VAULT_ADD, VaultAddParams
from protocol.methods.writes import APPEND, OP_LIST, PATCH, UNDO, AppendParams, OpListParams, PatchParams, UndoParams
from tests.support.harness import Daemon, Home, snapshot, vaultctl
from tests.support.typed import applied
from vaultctl.client import DaemonUnavailable

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.typed import TypedClient, TypedClients

FIND = PatchParams(target="Alpha Plan", old="ships the search", new="ships the find")


def _add(c: TypedClient, vault: Path) -> None:
    c.call(VAULT_ADD, VaultAddParams(id="v", path=str(vault)))


def _listed(c: TypedClient) -> list[str]:
    return [o.op_id for o in c.call(OP_LIST, OpListParams()).ops]


def _start(home: Home, keep: int | None = None, faults: str | None = None) -> Daemon:
    for name, value in (("VAULTD_JOURNAL_KEEP", keep), ("VAULTD_FAULTS", faults)):
        if value is None:
            home.env.pop(name, None)
        else:
            home.env[name] = str(value)
    return Daemon(home)


def _journal(vault: Path) -> list[str]:
    return sorted(p.name for p in (vault / ".vaultd" / "journal").iterdir())


def _append(c: TypedClient, i: int) -> str:
    return applied(c.call(APPEND, AppendParams(target="Ada Lovelace", section="Prune", markdown=f"- op {i}"))).op_id


def test_pruning_keeps_the_newest_journals_and_nothing_else(home: Home, typed_clients: TypedClients, sample_vault: Path) -> None:
    d = _start(home, keep=3)
    try:
        c = typed_clients.open(home)
        _add(c, sample_vault)
        applied = [_append(c, i) for i in range(8)]
        assert _journal(sample_vault) == applied[-3:]
        assert all((sample_vault / ".vaultd" / "journal" / o / "committed").is_file() for o in applied[-3:])
        assert _listed(c) == applied[:-4:-1]
    finally:
        d.stop()


def test_a_kill_between_renaming_a_journal_out_and_deleting_it_loses_nothing(
    home: Home, typed_clients: TypedClients, sample_vault: Path
) -> None:
    d = _start(home)
    _add(typed_clients.open(home), sample_vault)
    d.stop()
    d = _start(home, keep=2, faults="crash=during-prune")
    c = typed_clients.open(home)
    acknowledged: list[str] = []
    with pytest.raises(DaemonUnavailable):  # the connection breaks as the daemon dies
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
        c = typed_clients.open(home)
        assert c.call(SEARCH, SearchParams(query="alpha", fresh=True)).hits  # recovery is done
        text = (sample_vault / "people" / "Ada Lovelace.md").read_text(encoding="utf-8")
        assert all(f"- op {i}" in text for i in range(3)), "acknowledged (and the committed third) kept"
        names = _journal(sample_vault)
        assert len(names) == 2, names
        assert acknowledged[1] in names, names
        assert not any("." in n[16:] for n in names), names
        listed = _listed(c)
        assert listed[1] == acknowledged[1]
        assert len(listed) == 2
    finally:
        d.stop()


def test_a_journal_that_lost_its_commit_marker_is_finished_not_rolled_back(
    home: Home, typed_clients: TypedClients, sample_vault: Path
) -> None:
    """The state a delete cut short could leave: a manifest without its marker, older than a
    committed operation. It was acknowledged, so recovery must not roll it back."""
    d = _start(home)
    try:
        c = typed_clients.open(home)
        _add(c, sample_vault)
        first = applied(c.call(PATCH, FIND)).op_id
        second = _append(c, 0)
    finally:
        d.stop()
    marker = sample_vault / ".vaultd" / "journal" / first / "committed"
    marker.unlink()
    acknowledged = snapshot(sample_vault)
    d = _start(home)
    try:
        c = typed_clients.open(home)
        assert c.call(SEARCH, SearchParams(query="find", fresh=True)).hits
        assert snapshot(sample_vault) == acknowledged
        assert "ships the find" in (sample_vault / "projects/alpha/Alpha Plan.md").read_text(encoding="utf-8")
        assert marker.is_file(), "the lost marker is written again"
        assert _listed(c) == [second, first]
        doctor = vaultctl(home, "doctor", "--json").json()
        assert any(first in f["finding"] and "lost their commit marker" in f["finding"] for f in doctor["findings"]), doctor
        assert isinstance(c.call(UNDO, UndoParams(op_id=second)), Applied)
        assert isinstance(c.call(UNDO, UndoParams(op_id=first)), Applied), "the finished operation can still be undone"
        assert "ships the search" in (sample_vault / "projects/alpha/Alpha Plan.md").read_text(encoding="utf-8")
    finally:
        d.stop()
