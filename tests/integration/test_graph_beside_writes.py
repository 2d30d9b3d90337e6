"""A graph read never holds the vault's index: writes to the vault it reads are answered meanwhile.

The read is held at a fault gate (``pause=graph-snapshot``: its snapshot built from its copy of
the index, its answer not yet made), so what the test shows is an order of replies, never a
duration: while the read is held, a write to the very vault it reads is acknowledged and read
back, and the read then answers of the vault as it was copied.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tests.support.harness import RawClient, paused_daemon, wait_at_gate

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Home


def _vault(root: Path) -> Path:
    root.mkdir()
    for i in range(20):
        (root / f"n{i:02d}.md").write_text(f"# Note {i}\n\nSee [[n{(i + 1) % 20:02d}]].\n")
    return root


def test_a_graph_read_held_at_its_snapshot_leaves_the_vaults_writes_free(home: Home) -> None:
    root = _vault(home.root / "v")
    daemon, gate = paused_daemon(home, "graph-snapshot", 1)
    try:
        setup = RawClient(home.socket, timeout=120)
        setup.hello()
        setup.call("vault.add", {"id": "v", "path": str(root)})
        reader = RawClient(home.socket, timeout=120)
        reader.hello()
        params = {"vault": "v", "target": "n00", "hops": 1}
        reader.send_bytes(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "graph.neighbors", "params": params}).encode() + b"\n")
        wait_at_gate(gate, daemon, "the graph read to reach its gate")

        made = setup.call("note.create", {"vault": "v", "path": "Fresh.md", "body": "Links [[n00]].\n"})
        assert made["outcome"] == "applied", made
        assert "Links [[n00]]" in setup.call("note.read", {"vault": "v", "target": "Fresh"})["body"]

        gate.unlink()
        while (reply := reader.recv_message()).get("id") != 1:
            pass
        neighbours = {n["path"] for n in reply["result"]["neighbors"]}
        assert neighbours == {"n01.md", "n19.md"}, "the read answers of the vault as it was copied"
        again = setup.call("graph.neighbors", params)
        assert {n["path"] for n in again["neighbors"]} == {"n01.md", "n19.md", "Fresh.md"}
    finally:
        gate.unlink(missing_ok=True)
        daemon.stop()
