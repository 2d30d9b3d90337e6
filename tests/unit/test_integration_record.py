"""The record of a sync's integration: read back exactly as written, and never acted on unless
this daemon sealed it (a vault folder can arrive with a ``.vaultd/`` of its own)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.methods.git import ResolveParams
from vaultd.git import integration
from vaultd.txn import seal
from vaultd.txn.plan import MAX_OP_BYTES, MAX_OP_FILES, Change

if TYPE_CHECKING:
    from pathlib import Path


def _intent() -> integration.Intent:
    return integration.Intent(
        branch="refs/heads/main",
        old="a" * 40,
        fetched="b" * 40,
        merge=True,
        message="sync: merge origin/main (2 file(s) from origin)\n\n",
        trailers=["Vaultd-Channel: sync"],
        tree={"Team.md": ("100644", "c" * 40), "Gone.md": None},
        writes=[integration.Write("Team.md", "d" * 40, "c" * 40), integration.Write("Gone.md", "e" * 40, None)],
        proposals=[integration.Pending(id="p20260101000000-0a0b0c0d", kept="origin", params=ResolveParams(path="Team.md", ours="d" * 40))],
    )


def test_a_record_reads_back_as_written_and_is_gone_once_cleared(tmp_path: Path) -> None:
    seal.install(tmp_path / "home")
    vault = tmp_path / "vault"
    vault.mkdir()
    assert integration.load(vault) is None and not integration.waiting(vault)
    intent = _intent()
    integration.save(vault, intent)
    assert integration.waiting(vault)
    assert integration.load(vault) == intent
    intent.moved_to = ("a" * 40, "f" * 40)
    integration.save(vault, intent)
    assert integration.load(vault) == intent, "a later state replaces the earlier one"
    integration.clear(vault)
    assert integration.load(vault) is None and not integration.waiting(vault)


def test_a_record_this_daemon_did_not_seal_is_never_acted_on_and_left_in_place(tmp_path: Path) -> None:
    seal.install(tmp_path / "home")
    vault = tmp_path / "vault"
    vault.mkdir()
    integration.save(vault, _intent())
    path = vault / integration.RECORD
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"merge":true', b'"merge":false'))
    assert integration.load(vault) is None, "changed since it was sealed"
    assert path.exists(), "left for a person to look at"
    other = tmp_path / "other"
    seal.install(other / "home")
    other_vault = other / "vault"
    other_vault.mkdir()
    (other_vault / ".vaultd" / "git").mkdir(parents=True)
    (other_vault / integration.RECORD).write_bytes(data)
    assert integration.load(other_vault) is None, "sealed by another daemon's key"


def test_an_integrations_writes_split_into_operations_at_the_engines_bounds() -> None:
    def change(i: int, size: int = 1) -> Change:
        return Change(path=f"n{i:05d}.md", before=None, after=b"x" * size)

    assert [len(b) for b in integration.batches([change(i) for i in range(MAX_OP_FILES)])] == [MAX_OP_FILES]
    assert [len(b) for b in integration.batches([change(i) for i in range(MAX_OP_FILES + 1)])] == [MAX_OP_FILES, 1]
    half = MAX_OP_BYTES // 2
    assert [len(b) for b in integration.batches([change(0, half), change(1, half)])] == [2], "at the byte bound: one operation"
    assert [len(b) for b in integration.batches([change(0, half), change(1, half + 1)])] == [1, 1], "one byte past it: two"
    assert integration.batches([]) == []
