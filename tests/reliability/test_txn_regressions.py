"""Regressions for write-path bugs the reliability suites found (docs/reliability.md, "Bugs found")."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from reliability.checks import disk_state, leftovers
from reliability.session import Client, Died, Proc, Refused, connect_ready, register
from tests.support.harness import Home, copy_sample_vault

if TYPE_CHECKING:
    from collections.abc import Iterator

PATCH = {"target": "projects/alpha/Alpha Plan.md", "old": "ships the search", "new": "ships the find"}


@pytest.fixture
def vault_home() -> Iterator[Home]:
    home = Home.create()
    register(home, copy_sample_vault(home.root / "vault"))
    yield home
    home.cleanup()


def _start(home: Home, faults: str | None = None) -> tuple[Proc, Client]:
    p = Proc(home, faults)
    assert p.listening()
    return p, connect_ready(home)


def test_a_refused_journal_does_not_undo_an_acknowledged_retry(vault_home: Home) -> None:
    """Bug 1: the journal's folder fsync fails after its rename; the retry must survive a restart."""
    vault = vault_home.root / "vault"
    p, c = _start(vault_home, "error=fsync-dir:EIO@2")
    with pytest.raises(Refused):
        c.call("note.patch", PATCH)
    assert not leftovers(vault)
    c.call("note.patch", PATCH)
    c.close()
    p.stop()
    p, c = _start(vault_home)
    assert "ships the find" in (vault / "projects/alpha/Alpha Plan.md").read_text()
    c.close()
    p.stop()


def test_a_rollback_cut_short_after_a_failed_commit_sync_leaves_no_torn_move(vault_home: Home) -> None:
    """Bug 3: the commit marker's folder fsync fails (the 10th folder fsync of this 7-file move),
    the rollback starts and the daemon is killed in it; the move must be whole or absent."""
    vault = vault_home.root / "vault"
    p, c = _start(vault_home, "error=fsync-dir:EIO@10;crash=during-recovery")
    move = {"target": "people/Ada Lovelace.md", "to": "people/Ada King"}
    preview = c.call("note.move", move)
    plan = [(ch["path"], ch["before_sha"], ch["after_sha"]) for ch in preview["changes"]]
    assert len(plan) == 7
    with pytest.raises(Died):
        c.call("note.move", {**move, "confirm": True, "fingerprint": preview["fingerprint"]})
    c.close()
    p.wait()
    p, c = _start(vault_home)
    disk = disk_state(vault)
    states = {"after" if disk.get(path) == after else "before" if disk.get(path) == before else "other" for path, before, after in plan}
    assert len(states) == 1 and states != {"other"}, f"torn: {states}"
    assert not leftovers(vault)
    c.close()
    p.stop()
