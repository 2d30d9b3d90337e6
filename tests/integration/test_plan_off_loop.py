"""A write plans and validates in a worker thread, under the vault's writer lock, with the index
held still: the daemon keeps answering meanwhile, and a change the watcher reports during the
planning is applied after it, not under it.

The fault seam holds the planning at its end (``pause=after-plan@1:GATE``: the daemon creates GATE
and waits until it is removed), so the test acts at exactly that point.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from protocol.methods.reads import READ, SEARCH, ReadParams, SearchParams
from protocol.methods.vaults import VAULT_ADD, VaultAddParams
from protocol.methods.writes import MOVE, MoveParams
from tests.integration.test_apply_races import BACKLINKS, _build_vault, _wait_for
from tests.support.harness import Daemon, Home
from tests.support.typed import applied, previewed

if TYPE_CHECKING:
    from tests.support.typed import TypedClients

TARGET = MoveParams(target="src/Target.md", to="moved/Renamed")


def test_reads_are_answered_while_a_write_plans_and_the_watcher_waits_for_it(home: Home, typed_clients: TypedClients) -> None:
    vault = _build_vault(home.root)
    gate = home.root / "gate"
    home.env["VAULTD_FAULTS"] = f"pause=after-plan@1:{gate}"
    d = Daemon(home)
    try:
        setup = typed_clients.open(home)
        setup.call(VAULT_ADD, VaultAddParams(id="v", path=str(vault)))
        writer = typed_clients.open(home, timeout=60.0)
        replies: list[Any] = []
        preview = threading.Thread(target=lambda: replies.append(writer.call(MOVE, TARGET)))
        preview.start()
        _wait_for(gate)

        # The move's planning is held in its thread: the event loop still serves another session,
        # from its hello on.
        reader = typed_clients.open(home, timeout=30.0)
        hits = reader.call(SEARCH, SearchParams(query="Target")).hits
        assert any(h.path == "src/Target.md" for h in hits)
        assert reader.call(READ, ReadParams(target="links/L00.md")).body.startswith("# L00")
        # An editor's note arrives while the index is held still for the planner.
        (vault / "Outside.md").write_text("# Outside\n\nThe word heldstillword is new.\n")

        gate.unlink()
        preview.join(60)
        assert not preview.is_alive()
        [answer] = replies
        result = previewed(answer)
        assert len(result.changes) == 2 + BACKLINKS, result

        # The refresh that waited for the planner has been applied since.
        found = reader.call(SEARCH, SearchParams(query="heldstillword", fresh=True)).hits
        assert [h.path for h in found] == ["Outside.md"]
        done = applied(
            writer.call(MOVE, MoveParams(target="src/Target.md", to="moved/Renamed", confirm=True, fingerprint=result.fingerprint))
        )
        assert len(done.changes) == 2 + BACKLINKS
        assert "[[Renamed]]" in (vault / "links" / "L00.md").read_text()
        assert not (vault / "src" / "Target.md").exists()
    finally:
        d.stop()
