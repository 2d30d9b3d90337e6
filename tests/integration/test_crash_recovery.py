"""Crash injection at every named point, then a restart: every file is byte-identical to before or
after the operation, no journal or temp file remains, and the index equals a fresh rebuild."""

from __future__ import annotations

import errno
import os
import signal
from typing import TYPE_CHECKING, Any

import msgspec
import pytest

from protocol.errors import ErrorCode
from protocol.methods.common import Empty
from protocol.methods.reads import LIST, READ, SEARCH, STATS, ListParams, ReadParams, SearchParams, StatsParams
from protocol.methods.service import DAEMON_STATUS
from protocol.methods.vaults import VAULT_ADD, VaultAddParams, VaultState
from protocol.methods.writes import (
    APPEND,
    CREATE,
    PATCH,
    SET_FRONTMATTER,
    AppendParams,
    CreateParams,
    PatchParams,
    SetFrontmatterParams,
)
from tests.support.harness import Daemon, Home, snapshot
from tests.support.typed import TypedClient, TypedClients, refused
from vaultctl.client import CallError, DaemonUnavailable

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


def _add(c: TypedClient, vault: Path) -> None:
    c.call(VAULT_ADD, VaultAddParams(id="v", path=str(vault)))


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


def _index_view(c: TypedClient) -> dict[str, Any]:
    notes = c.call(LIST, ListParams(limit=500, fresh=True)).notes
    stats = c.call(STATS, StatsParams())
    return {
        "notes": [(n.path, n.title) for n in notes],
        "stats": {k: v for k, v in msgspec.structs.asdict(stats).items() if k != "vault"},
        "shas": {n.path: c.call(READ, ReadParams(target=n.path)).sha256 for n in notes},
    }


OPERATIONS: dict[str, Callable[[TypedClient], object]] = {
    "create": lambda c: c.call(CREATE, CreateParams(path="crash/new", body="# New\n\nsee [[Alpha Plan]]\n")),
    "patch": lambda c: c.call(PATCH, PatchParams(target="Alpha Plan", old="ships the search", new="ships the find")),
    "append": lambda c: c.call(APPEND, AppendParams(target="Ada Lovelace", section="Crash", markdown="- appended")),
    "set": lambda c: c.call(SET_FRONTMATTER, SetFrontmatterParams(target="Grace Hopper", set={"status": "draft"})),
}
POINTS = ["after-journal", "after-rename", "before-commit", "after-commit"]


@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("op", sorted(OPERATIONS))
def test_crash_at_each_point_recovers_whole(home: Home, typed_clients: TypedClients, sample_vault: Path, op: str, point: str) -> None:
    d = _start(home)
    _add(typed_clients.open(home), sample_vault)
    d.stop()
    before = snapshot(sample_vault)
    d = _start(home, f"crash={point}")
    try:
        OPERATIONS[op](typed_clients.open(home))
        acknowledged = True
    except (CallError, DaemonUnavailable):  # refused, or the connection broke as the daemon died
        acknowledged = False
    code = d.stop()
    assert code == -signal.SIGKILL, "the crash point must fire before the reply"
    assert not acknowledged, "the crash point must fire before the reply"
    during = snapshot(sample_vault)
    d = _start(home)
    try:
        c = typed_clients.open(home)
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
        c2 = typed_clients.open(fresh_home)
        _add(c2, sample_vault)
        assert _index_view(c2) == view
        assert snapshot(sample_vault) == after
        d2.stop()
    finally:
        fresh_home.cleanup()


@pytest.mark.parametrize("hit", ["first", "target"])
@pytest.mark.parametrize("fault", ["write:ENOSPC", "fsync:EIO", "rename:EIO", "fsync-dir:EIO", "write:EIO"])
def test_io_errors_refuse_cleanly_and_the_daemon_keeps_serving(
    home: Home, typed_clients: TypedClients, sample_vault: Path, fault: str, hit: str
) -> None:
    op, name = fault.split(":")
    d = _start(home)
    _add(typed_clients.open(home), sample_vault)
    d.stop()
    before = snapshot(sample_vault)
    # the journal's own calls come first (original, manifest, seal); a later hit lands the fault
    # on the target's write
    nth = {"write": 4, "fsync": 4, "rename": 2, "fsync-dir": 4}[op] if hit == "target" else 1
    d = _start(home, f"error={op}:{name}@{nth}")
    try:
        c = typed_clients.open(home)
        with refused(ErrorCode.UNAVAILABLE) as refusal:
            c.call(PATCH, PatchParams(target="Alpha Plan", old="ships the search", new="ships the find"))
        message = refusal.data.message
        assert errno.errorcode[getattr(errno, name)] in message or os.strerror(getattr(errno, name)) in message, message
        assert snapshot(sample_vault) == before
        assert not _leftovers(sample_vault)
        assert c.call(SEARCH, SearchParams(query="Alpha")).hits
    finally:
        d.stop()


def test_a_failed_rollback_quarantines_the_vault_until_recovery(home: Home, typed_clients: TypedClients, sample_vault: Path) -> None:
    """The target's folder fsync fails, then the rollback's rename fails too: the vault holds a
    half-done change, so it is not served until a restart recovers it."""
    d = _start(home)
    _add(typed_clients.open(home), sample_vault)
    d.stop()
    before = snapshot(sample_vault)
    d = _start(home, "error=fsync-dir:EIO@5;error=rename:EIO@3")
    try:
        c = typed_clients.open(home)
        with refused(ErrorCode.INTERNAL) as refusal:
            c.call(PATCH, PatchParams(target="Alpha Plan", old="ships the search", new="ships the find"))
        assert "restart" in refusal.data.message
        with refused(ErrorCode.UNAVAILABLE):
            c.call(SEARCH, SearchParams(query="alpha"))
        assert c.call(DAEMON_STATUS, Empty()).vaults[0].state is VaultState.ERROR
    finally:
        d.stop()
    d = _start(home)
    try:
        c = typed_clients.open(home)
        assert c.call(SEARCH, SearchParams(query="alpha", fresh=True)).hits
        assert snapshot(sample_vault) == before
        assert not _leftovers(sample_vault)
    finally:
        d.stop()
