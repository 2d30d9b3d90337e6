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

from tests.support.harness import Daemon, Home, RawClient, snapshot, vaultctl
from tests.support.wait import wait_until

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture
def vault(home: Home, raw: RawClient) -> Path:
    root = home.root / "vault"
    root.mkdir()
    (root / "Alpha.md").write_text("# Alpha\n\nThe first note.\n")
    raw.call("vault.add", {"id": "v", "path": str(root)})
    assert raw.call("note.create", {"path": "Beta", "body": "see [[Alpha]]\n"})["applied"]
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


def _error(reply: dict) -> dict:  # type: ignore[type-arg]
    assert "error" in reply, reply
    return reply["error"]["data"]  # type: ignore[no-any-return]


def test_a_replaced_vault_folder_is_neither_read_nor_written_until_it_comes_back(vault: Path, home: Home, raw: RawClient) -> None:
    away = _swap(vault)
    kept = snapshot(away)
    refused = _error(raw.request("note.create", {"path": "Gamma", "body": "g\n"}))
    assert refused["code"] == "UNAVAILABLE"
    assert "missing" in refused["message"] and "renamed or removed" in refused["message"]
    append = _error(raw.request("note.append", {"target": "Alpha", "section": "More", "markdown": "x"}))
    assert append["code"] == "UNAVAILABLE"
    assert _error(raw.request("log.append", {"event": {"type": "TASK", "source": "t", "note": "n"}}))["code"] == "UNAVAILABLE"
    fresh = vaultctl(home, "search", "Alpha", "--fresh")
    assert fresh.code == 69, (fresh.code, fresh.err)  # unavailable, not an internal error
    assert "renamed or removed" in fresh.err
    status = raw.call("daemon.status")["vaults"][0]
    assert status["state"] == "missing" and "another folder is at that path" in status["message"]
    assert snapshot(away) == kept, "the renamed folder is untouched"
    assert sorted(p.name for p in vault.iterdir()) == ["Stranger.md"], "nothing is written into the newcomer"

    shutil.rmtree(vault)
    os.rename(away, vault)  # the original comes back
    again = raw.call("note.create", {"path": "Gamma", "body": "see [[Beta]]\n"})
    assert again["applied"] and (vault / "Gamma.md").exists()
    assert [h["path"] for h in raw.call("note.search", {"query": "first", "fresh": True})["hits"]] == ["Alpha.md"]
    status = raw.call("daemon.status")["vaults"][0]
    assert status["state"] == "ready" and "came back" in status["message"]
    assert "vault folder came back" in (home.home / "logs" / "vaultd.log").read_text()


def test_a_lost_vault_says_what_is_at_its_path_now_not_when_it_was_lost(vault: Path, raw: RawClient) -> None:
    """A rename and the next folder's mkdir are two steps; the watcher may see the loss between them."""
    away = vault.with_name(vault.name + "-renamed")
    os.rename(vault, away)

    def status() -> dict:  # type: ignore[type-arg]
        return raw.call("daemon.status")["vaults"][0]  # type: ignore[no-any-return]

    lost = wait_until(lambda: (s := status())["state"] == "missing" and s, 10, "the vault is seen missing")
    assert "nothing is at that path now" in lost["message"]
    vault.mkdir()
    now = status()
    assert now["state"] == "missing" and "another folder is at that path now" in now["message"], now
    vault.rmdir()
    assert "nothing is at that path now" in status()["message"]
    os.rename(away, vault)
    assert status()["state"] in ("indexing", "ready"), "the original back at its path is taken again"
    wait_until(lambda: status()["state"] == "ready", 10, "the vault taken back is ready")


def test_two_daemons_never_write_one_folder(vault: Path, raw: RawClient, other_home: Home) -> None:
    second = Daemon(other_home)
    try:
        b = RawClient(other_home.socket)
        b.hello()
        assert b.call("vault.add", {"id": "w", "path": str(vault)})["health"]["state"] == "locked"
        assert _error(b.request("note.create", {"vault": "w", "path": "FromB", "body": "b\n"}))["code"] == "UNAVAILABLE"
        b.call("vault.remove", {"id": "w", "confirm": True, "fingerprint": b.call("vault.remove", {"id": "w"})["fingerprint"]})

        away = _swap(vault)
        kept = snapshot(away)
        assert b.call("vault.add", {"id": "w", "path": str(vault)})["health"]["state"] == "ready"
        assert b.call("note.create", {"vault": "w", "path": "FromB", "body": "b\n"})["applied"]
        refused = _error(raw.request("note.create", {"path": "FromA", "body": "a\n"}))
        assert refused["code"] == "UNAVAILABLE"
        assert (vault / "FromB.md").exists() and not (vault / "FromA.md").exists()
        assert not (away / "FromA.md").exists() and snapshot(away) == kept
    finally:
        second.stop()
