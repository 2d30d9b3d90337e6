"""A capture is one transaction for binary files too: crashed at every point it is rolled back (or
finished) whole at the next start, an I/O error mid-apply leaves nothing behind, and undo and
redo carry raw copies past a note's size bound."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from tests.support.harness import Daemon, Home, RawClient, snapshot

BIG = 3 * 1024 * 1024  #: over a note's 2 MiB bound: the engine must read raw copies with their own bound


def _session(home: Home) -> RawClient:
    c = RawClient(home.socket, timeout=30)
    c.hello()
    return c


def _start(home: Home, faults: str | None = None) -> Daemon:
    home.env.pop("VAULTD_FAULTS", None)
    if faults:
        home.env["VAULTD_FAULTS"] = faults
    return Daemon(home)


def _setup(home: Home) -> tuple[Path, list[str]]:
    vault = home.root / "vault"
    vault.mkdir()
    (vault / "Page.md").write_text("# Page\n")
    inputs = []
    for i in range(2):
        path = home.root / f"input-{i}.bin"
        path.write_bytes(os.urandom(BIG))
        inputs.append(str(path))
    d = _start(home)
    _session(home).call("vault.add", {"id": "v", "path": str(vault)})
    d.stop()
    return vault, inputs


def _capture(c: RawClient, inputs: list[str]) -> dict:  # type: ignore[type-arg]
    items = [{"path": p} for p in inputs]
    preview = c.call("source.capture", {"items": items})
    return c.request("source.capture", {"items": items, "confirm": True, "fingerprint": preview["fingerprint"]})


def _leftovers(vault: Path) -> list[str]:
    journal = vault / ".vaultd" / "journal"
    pending = [p.name for p in journal.iterdir() if not (p / "committed").exists()] if journal.is_dir() else []
    return pending + [str(p) for p in vault.rglob(".vaultd-*.tmp")]


@pytest.mark.parametrize("point", ["after-journal", "after-rename", "after-rename@3", "before-commit", "after-commit"])
def test_a_crashed_capture_recovers_whole(home: Home, point: str) -> None:
    vault, inputs = _setup(home)
    before = snapshot(vault)
    originals = [Path(p).read_bytes() for p in inputs]
    d = _start(home, f"crash={point}")
    try:
        acknowledged = "result" in _capture(_session(home), inputs)
    except (ConnectionError, OSError, json.JSONDecodeError):
        acknowledged = False
    assert d.stop() == -signal.SIGKILL and not acknowledged
    d = _start(home)
    try:
        c = _session(home)
        c.call("note.list", {"fresh": True})
        after = snapshot(vault)
        assert not _leftovers(vault)
        changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)} - {"log.md"}
        if point == "after-commit":
            raws = [p for p in changed if not p.endswith(".md")]
            assert len(raws) == 2 and sorted(after[p] for p in raws) == sorted(originals)
        else:
            assert not changed, f"an uncommitted capture must be fully absent: {changed}"
        assert [Path(p).read_bytes() for p in inputs] == originals, "the inputs are never changed"
    finally:
        d.stop()


@pytest.mark.parametrize("fault", ["write:EIO@3", "rename:EIO@3", "fsync:ENOSPC@4"])
def test_an_io_error_mid_capture_leaves_nothing(home: Home, fault: str) -> None:
    vault, inputs = _setup(home)
    before = snapshot(vault)
    d = _start(home, f"error={fault}")
    try:
        c = _session(home)
        reply = _capture(c, inputs)
        assert reply["error"]["data"]["code"] == "UNAVAILABLE", reply
        assert snapshot(vault) == before and not _leftovers(vault)
        assert "result" in _capture(c, inputs), "the daemon serves the vault on"
    finally:
        d.stop()


def test_undo_and_redo_of_a_large_capture(home: Home) -> None:
    vault, inputs = _setup(home)
    d = _start(home)
    try:
        c = _session(home)
        before = {k: v for k, v in snapshot(vault).items() if k != "log.md"}
        applied = _capture(c, inputs)["result"]
        done = {k: v for k, v in snapshot(vault).items() if k != "log.md"}
        undo = c.call("op.undo", {"op_id": applied["op_id"]})
        assert {k: v for k, v in snapshot(vault).items() if k != "log.md"} == before
        c.call("op.undo", {"op_id": undo["op_id"]})
        assert {k: v for k, v in snapshot(vault).items() if k != "log.md"} == done
    finally:
        d.stop()
