"""A vault is the folder its lock was taken on, not whatever is at its path later.

Renaming the vault folder away and putting another folder at its path must stop every read and
write by that path (the lock is on the original); the original coming back is served again; and
two daemons never write one folder.
"""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

import pytest

from protocol.errors import ErrorCode
from protocol.methods.common import Empty
from protocol.methods.reads import SEARCH, SearchParams
from protocol.methods.receipts import Applied
from protocol.methods.service import DAEMON_STATUS
from protocol.methods.vaults import VAULT_ADD, VAULT_REMOVE, VaultAddParams, VaultHealth, VaultRemoveParams, VaultRemovePreview, VaultState
from protocol.methods.writes import APPEND, CREATE, LOG_APPEND, AppendParams, CreateParams, LogAppendParams, LogEvent, LogType
from tests.support.harness import Daemon, Home, snapshot, vaultctl
from tests.support.typed import TypedClient, TypedClients, refused
from tests.support.wait import wait_until

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture
def vault(home: Home, typed: TypedClient) -> Path:
    root = home.root / "vault"
    root.mkdir()
    (root / "Alpha.md").write_text("# Alpha\n\nThe first note.\n")
    typed.call(VAULT_ADD, VaultAddParams(id="v", path=str(root)))
    assert isinstance(typed.call(CREATE, CreateParams(path="Beta", body="see [[Alpha]]\n")), Applied)
    return root


@pytest.fixture
def other_home() -> Iterator[Home]:
    h = Home.create()
    yield h
    h.cleanup()


def _swap(root: Path) -> Path:
    """Rename the vault away and put a new folder with a note of its own at its path."""
    away = root.with_name(root.name + "-renamed")
    os.rename(root, away)
    root.mkdir()
    (root / "Stranger.md").write_text("# Stranger\n")
    return away


def _status(c: TypedClient) -> VaultHealth:
    return c.call(DAEMON_STATUS, Empty()).vaults[0]


def test_a_replaced_vault_folder_is_neither_read_nor_written_until_it_comes_back(vault: Path, home: Home, typed: TypedClient) -> None:
    away = _swap(vault)
    kept = snapshot(away)
    with refused(ErrorCode.UNAVAILABLE) as creating:
        typed.call(CREATE, CreateParams(path="Gamma", body="g\n"))
    assert "missing" in creating.data.message
    assert "renamed or removed" in creating.data.message
    with refused(ErrorCode.UNAVAILABLE):
        typed.call(APPEND, AppendParams(target="Alpha", section="More", markdown="x"))
    with refused(ErrorCode.UNAVAILABLE):
        typed.call(LOG_APPEND, LogAppendParams(event=LogEvent(type=LogType.TASK, source="t", note="n")))
    fresh = vaultctl(home, "search", "Alpha", "--fresh")
    assert fresh.code == 69, (fresh.code, fresh.err)  # unavailable, not an internal error
    assert "renamed or removed" in fresh.err
    status = _status(typed)
    assert status.state is VaultState.MISSING
    assert "another folder is at that path" in status.message
    assert snapshot(away) == kept, "the renamed folder is untouched"
    assert sorted(p.name for p in vault.iterdir()) == ["Stranger.md"], "nothing is written into the newcomer"

    shutil.rmtree(vault)
    os.rename(away, vault)  # the original comes back
    again = typed.call(CREATE, CreateParams(path="Gamma", body="see [[Beta]]\n"))
    assert isinstance(again, Applied)
    assert (vault / "Gamma.md").exists()
    assert [h.path for h in typed.call(SEARCH, SearchParams(query="first", fresh=True)).hits] == ["Alpha.md"]
    status = _status(typed)
    assert status.state is VaultState.READY
    assert "came back" in status.message
    assert "vault folder came back" in (home.home / "logs" / "vaultd.log").read_text()


def test_a_lost_vault_says_what_is_at_its_path_now_not_when_it_was_lost(vault: Path, typed: TypedClient) -> None:
    """A rename and the next folder's mkdir are two steps; the watcher may see the loss between them."""
    away = vault.with_name(vault.name + "-renamed")
    os.rename(vault, away)

    def missing() -> VaultHealth | None:
        s = _status(typed)
        return s if s.state is VaultState.MISSING else None

    lost = wait_until(missing, 10, "the vault is seen missing")
    assert lost is not None
    assert "nothing is at that path now" in lost.message
    vault.mkdir()
    now = _status(typed)
    assert now.state is VaultState.MISSING, now
    assert "another folder is at that path now" in now.message, now
    vault.rmdir()
    assert "nothing is at that path now" in _status(typed).message
    os.rename(away, vault)
    assert _status(typed).state in (VaultState.INDEXING, VaultState.READY), "the original back at its path is taken again"
    wait_until(lambda: _status(typed).state is VaultState.READY, 10, "the vault taken back is ready")


def test_two_daemons_never_write_one_folder(vault: Path, typed: TypedClient, typed_clients: TypedClients, other_home: Home) -> None:
    second = Daemon(other_home)
    try:
        b = typed_clients.open(other_home)
        assert b.call(VAULT_ADD, VaultAddParams(id="w", path=str(vault))).health.state is VaultState.LOCKED
        with refused(ErrorCode.UNAVAILABLE):
            b.call(CREATE, CreateParams(vault="w", path="FromB", body="b\n"))
        removal = b.call(VAULT_REMOVE, VaultRemoveParams(id="w"))
        assert isinstance(removal, VaultRemovePreview)
        b.call(VAULT_REMOVE, VaultRemoveParams(id="w", confirm=True, fingerprint=removal.fingerprint))

        away = _swap(vault)
        kept = snapshot(away)
        assert b.call(VAULT_ADD, VaultAddParams(id="w", path=str(vault))).health.state is VaultState.READY
        assert isinstance(b.call(CREATE, CreateParams(vault="w", path="FromB", body="b\n")), Applied)
        with refused(ErrorCode.UNAVAILABLE):
            typed.call(CREATE, CreateParams(path="FromA", body="a\n"))
        assert (vault / "FromB.md").exists()
        assert not (vault / "FromA.md").exists()
        assert not (away / "FromA.md").exists()
        assert snapshot(away) == kept
    finally:
        second.stop()
