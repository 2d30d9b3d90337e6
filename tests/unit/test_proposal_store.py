"""The proposal store on a real folder: bounded, oldest decided first, sealed against edits.

The daemon drives it through tests/integration/test_agent_gate.py; here it is filled past its
bound directly, which through the daemon would take a proposal-making call per entry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
import pytest
import structlog

from protocol.methods.proposals import MAX_PROPOSALS, ProposalDetail, ProposalState
from vaultd.errors import NotFound, PolicyRefused
from vaultd.gate.store import ProposalStore
from vaultd.txn import seal

if TYPE_CHECKING:
    from pathlib import Path


SMALL = 40  #: the bound the ordering tests use; the daemon's own is MAX_PROPOSALS (the slow test)


def _store(tmp_path: Path, limit: int) -> ProposalStore:
    seal.install(tmp_path / "home")
    vault = tmp_path / "vault"
    vault.mkdir()
    return ProposalStore(vault, limit=limit)


@pytest.fixture
def store(tmp_path: Path) -> ProposalStore:
    return _store(tmp_path, SMALL)


def _proposal(n: int, state: ProposalState = ProposalState.PENDING) -> ProposalDetail:
    return ProposalDetail(
        id=f"p20260101{n // 3600:02d}{n // 60 % 60:02d}{n % 60:02d}-{n:08x}",
        vault="v",
        op="note.delete",
        summary=f"delete n{n}.md",
        targets=[f"n{n}.md"],
        state=state,
        proposer="mcp:test",
        created=1_000_000.0 + n,
        diffs=[],
        params={"target": f"n{n}"},
    )


def _fill(store: ProposalStore, count: int, decided_every: int = 0) -> None:
    for n in range(count):
        decided = decided_every and n % decided_every == 0
        store.add(_proposal(n, ProposalState.REJECTED if decided else ProposalState.PENDING))


def test_the_bound_drops_decided_ones_first_then_the_oldest_pending(store: ProposalStore) -> None:
    _fill(store, SMALL, decided_every=10)  # 4 decided among them: 0, 10, 20, 30
    assert len(store.entries()[0]) == SMALL, "exactly at the bound nothing goes"
    gone = store.add(_proposal(SMALL))
    assert [p.id for p in gone] == [_proposal(0).id] and gone[0].state is ProposalState.REJECTED
    for n in range(SMALL + 1, SMALL + 4):
        store.add(_proposal(n))
    kept = store.entries()[0]
    assert len(kept) == SMALL
    assert all(p.state is ProposalState.PENDING for p in kept), "every decided one went before any pending one"
    store.add(_proposal(SMALL + 4))
    ids = {p.id for p in store.entries()[0]}
    assert _proposal(1).id not in ids and _proposal(2).id in ids, "then the oldest pending one expires"
    assert len(list(store.folder.iterdir())) == SMALL


def test_expiry_is_logged(store: ProposalStore) -> None:
    with structlog.testing.capture_logs() as logs:
        _fill(store, SMALL + 1)
    expired = [e for e in logs if e["event"] == "proposal expired"]
    assert [e["proposal"] for e in expired] == [_proposal(0).id]
    assert expired[0]["log_level"] == "warning" and expired[0]["state"] == "pending" and expired[0]["bound"] == SMALL


@pytest.mark.slow
def test_ten_thousand_proposals_stay_bounded(tmp_path: Path) -> None:
    store = _store(tmp_path, MAX_PROPOSALS)
    _fill(store, 10_000, decided_every=7)
    kept, refused = store.entries()
    assert len(kept) == MAX_PROPOSALS and refused == []
    assert len(list(store.folder.iterdir())) == MAX_PROPOSALS
    pending = sorted((p.created for p in kept if p.state is ProposalState.PENDING), reverse=True)
    newest_pending = sorted((_proposal(n).created for n in range(10_000) if n % 7), reverse=True)[: len(pending)]
    assert pending == newest_pending, "pending ones expire oldest first"
    assert len(pending) >= MAX_PROPOSALS - 1, "decided ones went first (only the one just added may remain)"


def test_a_changed_byte_or_a_foreign_file_is_refused_never_used(store: ProposalStore) -> None:
    store.add(_proposal(1))
    store.add(_proposal(2))
    path = store.folder / f"{_proposal(1).id}.json"
    data = path.read_bytes()
    path.write_bytes(data.replace(b"n1.md", b"n9.md"))
    with pytest.raises(PolicyRefused, match="seal"):
        store.get(_proposal(1).id)
    other = store.folder / "p20260101000000-deadbeef.json"
    other.write_bytes(b"0" * 64 + b"\n" + msgspec.json.encode(_proposal(3)))
    kept, refused = store.entries()
    assert [p.id for p in kept] == [_proposal(2).id]
    assert sorted(r.name for r in refused) == sorted([path.name, other.name])
    assert path.exists() and other.exists(), "never deleted"
    with pytest.raises(NotFound):
        store.get("p20260101000000-00000000")


def test_a_proposal_renamed_to_another_id_is_refused(store: ProposalStore) -> None:
    store.add(_proposal(1))
    src = store.folder / f"{_proposal(1).id}.json"
    dst = store.folder / "p20260101000000-0000abcd.json"
    src.rename(dst)
    with pytest.raises(PolicyRefused, match="file name"):
        store.get("p20260101000000-0000abcd")
