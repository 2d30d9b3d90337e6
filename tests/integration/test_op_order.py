"""op.list lists newest first, also for operations applied within the same second and across a
restart, so 'undo the last operation' undoes the last one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.methods.vaults import VAULT_ADD, VaultAddParams
from protocol.methods.writes import APPEND, OP_LIST, UNDO, AppendParams, OpListParams, UndoParams
from tests.support.harness import Daemon, Home
from tests.support.typed import applied

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.typed import TypedClient, TypedClients


def _append(c: TypedClient, i: int) -> str:
    return applied(c.call(APPEND, AppendParams(target="Ada Lovelace", section="Order", markdown=f"- line {i}"))).op_id


def _listed(c: TypedClient) -> list[str]:
    return [o.op_id for o in c.call(OP_LIST, OpListParams(limit=50)).ops]


def test_rapid_operations_list_newest_first_and_undo_takes_the_last(home: Home, typed_clients: TypedClients, sample_vault: Path) -> None:
    d = Daemon(home)
    try:
        c = typed_clients.open(home)
        c.call(VAULT_ADD, VaultAddParams(id="v", path=str(sample_vault)))
        made = [_append(c, i) for i in range(20)]
        assert len(set(made)) == 20
        listed = _listed(c)
        assert listed == made[::-1]
        undo = applied(c.call(UNDO, UndoParams(op_id=listed[0])))
        text = (sample_vault / "people" / "Ada Lovelace.md").read_text(encoding="utf-8")
        assert "- line 18" in text
        assert "- line 19" not in text
    finally:
        d.stop()
    d = Daemon(home)
    try:
        c = typed_clients.open(home)
        after_restart = [_append(c, i) for i in range(20, 25)]
        assert _listed(c) == [*after_restart[::-1], undo.op_id, *made[::-1]]
    finally:
        d.stop()
