"""Recovery of one vault's share of an operation over several vaults, while the vault holding the
operation's commit point recovers beside it (each vault is taken in its own worker thread).

Regression: the share looked for the first vault's journal, found it, and read it a moment later;
when that vault's own recovery rolled the journal back and retired it in between, the read failed
and the share was "left as found" (refused) for good, a journal pending beside notes that had
been restored. Gone between the two looks is gone: the operation never committed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vaultd.txn import engine, journal

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

OP_ID = "20261206T091403.087463-9285e895"


def test_a_first_journal_retired_between_the_looks_means_not_committed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = tmp_path / "team"
    folder = journal.journal_root(vault) / OP_ID
    folder.mkdir(parents=True)
    real_open = journal.open_journal

    def retired_meanwhile(path: Path, key: bytes | None = None) -> journal.Manifest:
        path.rename(path.with_name(f"{OP_ID}.gone"))  # the other vault's rollback retires it now
        return real_open(path, key)

    monkeypatch.setattr(journal, "open_journal", retired_meanwhile)
    ref = journal.JournalRef(vault=str(vault), op_id=OP_ID)
    assert engine._first_committed(ref, b"k" * 32) is False


def test_a_first_journal_that_cannot_be_read_is_still_undecided(tmp_path: Path) -> None:
    vault = tmp_path / "team"
    folder = journal.journal_root(vault) / OP_ID
    folder.mkdir(parents=True)  # there, but no sealed manifest: not this daemon's to judge
    ref = journal.JournalRef(vault=str(vault), op_id=OP_ID)
    assert engine._first_committed(ref, b"k" * 32) is None
