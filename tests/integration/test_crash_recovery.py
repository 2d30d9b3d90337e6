"""Crash injection at every named point, then a restart: every file is byte-identical to before or
after the operation, no journal or temp file remains, and the index equals a fresh rebuild."""

from __future__ import annotations

import errno
import json
import os
import signal
from typing import TYPE_CHECKING

import pytest

from tests.support.harness import Daemon, Home, RawClient, snapshot

if TYPE_CHECKING:
    from pathlib import Path


def _session(home: Home) -> RawClient:
    c = RawClient(home.socket)
    c.hello()
    return c


def _start(home: Home, faults: str | None = None) -> Daemon:
    if faults:
        home.env["VAULTD_FAULTS"] = faults
    else:
        home.env.pop("VAULTD_FAULTS", None)
    return Daemon(home)


def _leftovers(vault: Path) -> list[str]:
    journal = vault / ".vaultd" / "journal"
    pending = [p.name for p in journal.iterdir() if not (p / "committed").exists()] if journal.is_dir() else []
    temps = [str(p) for p in vault.rglob(".vaultd-*.tmp")]
    return pending + temps


def _index_view(c: RawClient) -> dict:  # type: ignore[type-arg]
    notes = c.call("note.list", {"limit": 500, "fresh": True})["notes"]
    stats = c.call("vault.stats", {})
    return {
        "notes": [(n["path"], n["title"]) for n in notes],
        "stats": {k: v for k, v in stats.items() if k != "vault"},
        "shas": {n["path"]: c.call("note.read", {"target": n["path"]})["sha256"] for n in notes},
    }


OPERATIONS = {
    "create": ("note.create", {"path": "crash/new", "body": "# New\n\nsee [[Alpha Plan]]\n"}),
    "patch": ("note.patch", {"target": "Alpha Plan", "old": "ships the search", "new": "ships the find"}),
    "append": ("note.append", {"target": "Ada Lovelace", "section": "Crash", "markdown": "- appended"}),
    "set": ("note.set_frontmatter", {"target": "Grace Hopper", "set": {"status": "draft"}}),
}
POINTS = ["after-journal", "after-rename", "before-commit", "after-commit"]


@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("op", sorted(OPERATIONS))
def test_crash_at_each_point_recovers_whole(home: Home, sample_vault: Path, op: str, point: str) -> None:
    d = _start(home)
    _session(home).call("vault.add", {"id": "v", "path": str(sample_vault)})
    d.stop()
    before = snapshot(sample_vault)
    d = _start(home, f"crash={point}")
    method, params = OPERATIONS[op]
    try:
        reply = _session(home).request(method, params)
        acknowledged = "result" in reply
    except (ConnectionError, OSError, json.JSONDecodeError):
        acknowledged = False
    code = d.stop()
    assert code == -signal.SIGKILL and not acknowledged, "the crash point must fire before the reply"
    during = snapshot(sample_vault)
    d = _start(home)
    try:
        c = _session(home)
        view = _index_view(c)
        after = snapshot(sample_vault)
        assert not _leftovers(sample_vault)
        changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)} - {"log.md"}
        if point == "after-commit":
            assert changed, "a committed operation must be fully present"
            assert during == after or {p for p in during if during.get(p) != after.get(p)} <= {"log.md"}
        else:
            assert not changed, f"an uncommitted operation must be fully absent: {changed}"
    finally:
        d.stop()
    # recovery run twice equals once, and the index equals a from-scratch rebuild
    fresh_home = Home.create()
    try:
        d2 = Daemon(fresh_home)
        c2 = _session(fresh_home)
        c2.call("vault.add", {"id": "v", "path": str(sample_vault)})
        assert _index_view(c2) == view
        assert snapshot(sample_vault) == after
        d2.stop()
    finally:
        fresh_home.cleanup()


@pytest.mark.parametrize("hit", ["first", "target"])
@pytest.mark.parametrize("fault", ["write:ENOSPC", "fsync:EIO", "rename:EIO", "fsync-dir:EIO", "write:EIO"])
def test_io_errors_refuse_cleanly_and_the_daemon_keeps_serving(home: Home, sample_vault: Path, fault: str, hit: str) -> None:
    op, name = fault.split(":")
    d = _start(home)
    _session(home).call("vault.add", {"id": "v", "path": str(sample_vault)})
    d.stop()
    before = snapshot(sample_vault)
    # the journal's own calls come first (original, manifest, seal); a later hit lands the fault
    # on the target's write
    nth = {"write": 4, "fsync": 4, "rename": 2, "fsync-dir": 4}[op] if hit == "target" else 1
    d = _start(home, f"error={op}:{name}@{nth}")
    try:
        c = _session(home)
        reply = c.request("note.patch", {"target": "Alpha Plan", "old": "ships the search", "new": "ships the find"})
        assert "error" in reply, reply
        assert reply["error"]["data"]["code"] == "UNAVAILABLE"
        assert (
            errno.errorcode[getattr(errno, name)] in reply["error"]["message"]
            or os.strerror(getattr(errno, name)) in reply["error"]["message"]
        )
        assert snapshot(sample_vault) == before
        assert not _leftovers(sample_vault)
        assert c.call("note.search", {"query": "Alpha"})["hits"]
    finally:
        d.stop()


def test_a_failed_rollback_quarantines_the_vault_until_recovery(home: Home, sample_vault: Path) -> None:
    """The target's folder fsync fails, then the rollback's rename fails too: the vault holds a
    half-done change, so it is not served until a restart recovers it."""
    d = _start(home)
    _session(home).call("vault.add", {"id": "v", "path": str(sample_vault)})
    d.stop()
    before = snapshot(sample_vault)
    d = _start(home, "error=fsync-dir:EIO@5;error=rename:EIO@3")
    try:
        c = _session(home)
        reply = c.request("note.patch", {"target": "Alpha Plan", "old": "ships the search", "new": "ships the find"})
        assert reply["error"]["data"]["code"] == "INTERNAL" and "restart" in reply["error"]["message"]
        refused = c.request("note.search", {"query": "alpha"})
        assert refused["error"]["data"]["code"] == "UNAVAILABLE"
        assert c.call("daemon.status")["vaults"][0]["state"] == "error"
    finally:
        d.stop()
    d = _start(home)
    try:
        c = _session(home)
        assert c.call("note.search", {"query": "alpha", "fresh": True})["hits"]
        assert snapshot(sample_vault) == before and not _leftovers(sample_vault)
    finally:
        d.stop()
