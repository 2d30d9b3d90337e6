"""A capture is one transaction for binary files too: crashed at every point it is rolled back (or
finished) whole at the next start, an I/O error mid-apply leaves nothing behind, and undo and
redo carry raw copies past a note's size bound."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from protocol.errors import ErrorCode
from protocol.methods.reads import LIST, ListParams
from protocol.methods.sources import CAPTURE, CaptureItem, CaptureParams
from protocol.methods.vaults import VAULT_ADD, VaultAddParams
from protocol.methods.writes import UNDO, UndoParams
from tests.support.harness import Daemon, Home, snapshot
from tests.support.typed import applied, previewed, refused
from vaultctl.client import CallError, DaemonUnavailable

if TYPE_CHECKING:
    from protocol.methods.receipts import WriteReceipt
    from tests.support.typed import TypedClient, TypedClients

BIG = 3 * 1024 * 1024  #: over a note's 2 MiB bound: the engine must read raw copies with their own bound


def _session(clients: TypedClients, home: Home) -> TypedClient:
    return clients.open(home, timeout=30)


def _start(home: Home, faults: str | None = None) -> Daemon:
    home.env.pop("VAULTD_FAULTS", None)
    if faults:
        home.env["VAULTD_FAULTS"] = faults
    return Daemon(home)


def _setup(home: Home, clients: TypedClients) -> tuple[Path, list[str]]:
    vault = home.root / "vault"
    vault.mkdir()
    (vault / "Page.md").write_text("# Page\n")
    inputs = []
    for i in range(2):
        path = home.root / f"input-{i}.bin"
        path.write_bytes(os.urandom(BIG))
        inputs.append(str(path))
    d = _start(home)
    _session(clients, home).call(VAULT_ADD, VaultAddParams(id="v", path=str(vault)))
    d.stop()
    return vault, inputs


def _capture(c: TypedClient, inputs: list[str]) -> WriteReceipt[Any]:
    """The confirm's receipt of a capture of ``inputs``, previewed first (a refusal raises CallError)."""
    items = [CaptureItem(path=p) for p in inputs]
    preview = previewed(c.call(CAPTURE, CaptureParams(items=items)))
    return c.call(CAPTURE, CaptureParams(items=items, confirm=True, fingerprint=preview.fingerprint))


def _leftovers(vault: Path) -> list[str]:
    journal = vault / ".vaultd" / "journal"
    pending = [p.name for p in journal.iterdir() if not (p / "committed").exists()] if journal.is_dir() else []
    return pending + [str(p) for p in vault.rglob(".vaultd-*.tmp")]


@pytest.mark.parametrize("point", ["after-journal", "after-rename", "after-rename@3", "before-commit", "after-commit"])
def test_a_crashed_capture_recovers_whole(home: Home, typed_clients: TypedClients, point: str) -> None:
    vault, inputs = _setup(home, typed_clients)
    before = snapshot(vault)
    originals = [Path(p).read_bytes() for p in inputs]
    d = _start(home, f"crash={point}")
    try:
        _capture(_session(typed_clients, home), inputs)
        acknowledged = True
    except (CallError, DaemonUnavailable):  # refused, or the connection broke as the daemon died
        acknowledged = False
    assert d.stop() == -signal.SIGKILL
    assert not acknowledged
    d = _start(home)
    try:
        c = _session(typed_clients, home)
        c.call(LIST, ListParams(fresh=True))
        after = snapshot(vault)
        assert not _leftovers(vault)
        changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)} - {"log.md"}
        if point == "after-commit":
            raws = [p for p in changed if not p.endswith(".md")]
            assert len(raws) == 2
            assert sorted(after[p] for p in raws) == sorted(originals)
        else:
            assert not changed, f"an uncommitted capture must be fully absent: {changed}"
        assert [Path(p).read_bytes() for p in inputs] == originals, "the inputs are never changed"
    finally:
        d.stop()


@pytest.mark.parametrize("fault", ["write:EIO@3", "rename:EIO@3", "fsync:ENOSPC@4"])
def test_an_io_error_mid_capture_leaves_nothing(home: Home, typed_clients: TypedClients, fault: str) -> None:
    vault, inputs = _setup(home, typed_clients)
    before = snapshot(vault)
    d = _start(home, f"error={fault}")
    try:
        c = _session(typed_clients, home)
        with refused(ErrorCode.UNAVAILABLE):
            _capture(c, inputs)
        assert snapshot(vault) == before
        assert not _leftovers(vault)
        _capture(c, inputs)  # the daemon serves the vault on
    finally:
        d.stop()


def test_undo_and_redo_of_a_large_capture(home: Home, typed_clients: TypedClients) -> None:
    vault, inputs = _setup(home, typed_clients)
    d = _start(home)
    try:
        c = _session(typed_clients, home)
        before = {k: v for k, v in snapshot(vault).items() if k != "log.md"}
        captured = applied(_capture(c, inputs))
        done = {k: v for k, v in snapshot(vault).items() if k != "log.md"}
        undo = applied(c.call(UNDO, UndoParams(op_id=captured.op_id)))
        assert {k: v for k, v in snapshot(vault).items() if k != "log.md"} == before
        c.call(UNDO, UndoParams(op_id=undo.op_id))
        assert {k: v for k, v in snapshot(vault).items() if k != "log.md"} == done
    finally:
        d.stop()
