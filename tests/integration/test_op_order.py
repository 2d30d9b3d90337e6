"""op.list lists newest first, also for operations applied within the same second and across a
restart, so 'undo the last operation' undoes the last one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.support.harness import Daemon, Home, RawClient

if TYPE_CHECKING:
    from pathlib import Path


def _session(home: Home) -> RawClient:
    c = RawClient(home.socket)
    c.hello()
    return c


def _append(c: RawClient, i: int) -> str:
    receipt = c.call("note.append", {"target": "Ada Lovelace", "section": "Order", "markdown": f"- line {i}"})
    op_id: str = receipt["op_id"]
    return op_id


def test_rapid_operations_list_newest_first_and_undo_takes_the_last(home: Home, sample_vault: Path) -> None:
    d = Daemon(home)
    try:
        c = _session(home)
        c.call("vault.add", {"id": "v", "path": str(sample_vault)})
        applied = [_append(c, i) for i in range(20)]
        assert len(set(applied)) == 20
        listed = [o["op_id"] for o in c.call("op.list", {"limit": 50})["ops"]]
        assert listed == applied[::-1]
        undo = c.call("op.undo", {"op_id": listed[0]})
        assert undo["applied"]
        text = (sample_vault / "people" / "Ada Lovelace.md").read_text(encoding="utf-8")
        assert "- line 18" in text and "- line 19" not in text
    finally:
        d.stop()
    d = Daemon(home)
    try:
        c = _session(home)
        after_restart = [_append(c, i) for i in range(20, 25)]
        listed = [o["op_id"] for o in c.call("op.list", {"limit": 50})["ops"]]
        assert listed == [*after_restart[::-1], undo["op_id"], *applied[::-1]]
    finally:
        d.stop()
