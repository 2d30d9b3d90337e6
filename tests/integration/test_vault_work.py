"""Vault-wide work against a real daemon: it never stalls the other clients, piled-up rebuilds
join one another, and one connection queues at most MAX_VAULT_WORK of them.

Each test holds the heavy work at a fault gate (``VAULTD_FAULTS``) so what it shows is an order of
replies, never a duration: while Leiden is held in its worker process, another client's search and
a write to another vault are answered; while a rebuild is held, 240 pipelined rebuild requests
are either joined to the one queued rebuild or refused LIMIT at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from protocol.methods.indexing import MAX_VAULT_WORK
from tests.support.events import Subscriber, of_kind
from tests.support.harness import Home, RawClient, paused_daemon, wait_at_gate
from vaultd.graph.leiden_worker import WORKER_MIN_NOTES

if TYPE_CHECKING:
    from pathlib import Path

CONNECTIONS = 4
PIPELINED = 60


def _vault(root: Path, notes: int) -> Path:
    """``notes`` notes in rings of 20, each linking the next and one note of the next ring."""
    root.mkdir()
    for i in range(notes):
        ring, k = divmod(i, 20)
        nxt = ring * 20 + (k + 1) % 20
        across = ((ring + 1) * 20 + k) % notes
        (root / f"n{i:05d}.md").write_text(f"# Note {i}\n\nSee [[n{nxt:05d}]] and [[n{across:05d}]]; alpha word {i}.\n")
    return root


def test_communities_run_in_a_worker_while_other_clients_search_and_write(home: Home) -> None:
    big = _vault(home.root / "big", WORKER_MIN_NOTES + 50)
    small = _vault(home.root / "small", 3)
    daemon, gate = paused_daemon(home, "communities-worker", 1)
    try:
        setup = RawClient(home.socket, timeout=120)
        setup.hello()
        setup.call("vault.add", {"id": "big", "path": str(big)})
        setup.call("vault.add", {"id": "small", "path": str(small)})

        asker = RawClient(home.socket, timeout=120)
        asker.hello()
        for request_id in (1, 2, 3):  # the third is one past this connection's bound
            asker.send(request_id, "graph.communities", {"vault": "big"})
        wait_at_gate(gate, daemon, "the work to reach its gate")  # Leiden is held in its worker: communities cannot answer yet

        refused = asker.recv_message()
        assert refused["id"] == 3 and refused["error"]["data"]["code"] == "LIMIT", refused
        other = RawClient(home.socket, timeout=120)
        other.hello()
        found = other.call("note.search", {"vault": "big", "query": "alpha"})
        assert len(found["hits"]) >= 1, found
        made = other.call("note.create", {"vault": "small", "path": "Fresh.md", "body": "written while Leiden runs\n"})
        assert made["outcome"] == "applied", made
        assert (small / "Fresh.md").exists()

        gate.unlink()  # let Leiden finish
        answers = asker.replies(2)
        first, second = answers[1]["result"], answers[2]["result"]
        assert first == second, "the second request is answered from the first's partition"
        assert first["notes"] == WORKER_MIN_NOTES + 50 and first["total"] >= 1 and first["communities"]
        members = first["communities"][0]["members"]
        assert all(m.startswith("n") and m.endswith(".md") for m in members)
    finally:
        gate.unlink(missing_ok=True)
        daemon.stop()


def test_240_pipelined_rebuilds_are_joined_or_refused_and_run_at_most_twice(home: Home) -> None:
    root = _vault(home.root / "vault", 40)
    # The vault's first build parses its one chunk (hit 1); the first rebuild's chunk is hit 2.
    daemon, gate = paused_daemon(home, "build-chunk", 2)
    try:
        setup = RawClient(home.socket, timeout=120)
        setup.hello()
        setup.call("vault.add", {"id": "v", "path": str(root)})
        watcher = Subscriber(home.socket)
        watcher.subscribe(vaults=["v"], kinds=["index.ready", "note.created"])

        clients = [RawClient(home.socket, timeout=120) for _ in range(CONNECTIONS)]
        for client in clients:
            client.hello()
            for request_id in range(1, PIPELINED + 1):
                client.send(request_id, "vault.rebuild", {"vault": "v"})
        wait_at_gate(gate, daemon, "the work to reach its gate")

        # While the first rebuild is held, every request past the bound is refused at once.
        refused: list[dict[int, dict[str, Any]]] = [client.replies(PIPELINED - MAX_VAULT_WORK) for client in clients]
        for replies in refused:
            assert all(r["error"]["data"]["code"] == "LIMIT" for r in replies.values()), replies
            assert "vault-wide" in next(iter(replies.values()))["error"]["message"]

        gate.unlink()
        answered = [client.replies(MAX_VAULT_WORK) for client in clients]
        for replies, limits in zip(answered, refused, strict=True):
            assert set(replies) | set(limits) == set(range(1, PIPELINED + 1))
            assert all(r["result"]["vault"] == "v" and r["result"]["notes"] == 40 for r in replies.values()), replies

        # A rebuild's index.ready is recorded before its requests are answered, so once a note
        # made after every answer has arrived, every rebuild that ran has been counted.
        setup.call("note.create", {"vault": "v", "path": "Barrier.md"})
        watcher.read_until(lambda ev: any(e.get("path") == "Barrier.md" for e in ev), 30, "the barrier note")
        rebuilds = [e for e in of_kind(watcher.events, "index.ready") if e.get("rebuild")]
        assert 1 <= len(rebuilds) <= 2, rebuilds
    finally:
        gate.unlink(missing_ok=True)
        daemon.stop()


@pytest.mark.parametrize(
    ("method", "point"),
    [("lint.fix", "lint-fixes-found"), ("vault.tidy", "after-plan")],
)
def test_operations_that_plan_over_the_whole_vault_count_as_vault_wide_work(home: Home, method: str, point: str) -> None:
    """A lint.fix or a tidy plans over every note: pipelined on one connection they are held to
    MAX_VAULT_WORK like a lint, one more refused LIMIT at once, while another client still reads."""
    root = _vault(home.root / "vault", 40)
    (root / "n00000.md").write_text("# Note 0\n\nSee [[N00001]] and [[n00020]].\n")  # a link lint.fix would rewrite
    daemon, gate = paused_daemon(home, point, 1)
    try:
        setup = RawClient(home.socket, timeout=120)
        setup.hello()
        setup.call("vault.add", {"id": "v", "path": str(root)})
        asker = RawClient(home.socket, timeout=120)
        asker.hello()
        for request_id in range(1, MAX_VAULT_WORK + 2):  # the last is one past the bound
            asker.send(request_id, method, {"vault": "v"})
        wait_at_gate(gate, daemon, f"the {method} to reach its gate")

        refused = asker.recv_message()
        assert refused["id"] == MAX_VAULT_WORK + 1 and refused["error"]["data"]["code"] == "LIMIT", refused
        assert "vault-wide" in refused["error"]["message"] and method in refused["error"]["message"]
        other = RawClient(home.socket, timeout=120)
        other.hello()
        assert other.call("note.search", {"vault": "v", "query": "alpha"})["hits"]  # reads go on meanwhile

        gate.unlink()
        answers = asker.replies(MAX_VAULT_WORK)
        assert set(answers) == set(range(1, MAX_VAULT_WORK + 1))
        assert all("result" in a and a["result"]["outcome"] in ("preview", "unchanged", "applied") for a in answers.values()), answers
    finally:
        gate.unlink(missing_ok=True)
        daemon.stop()
