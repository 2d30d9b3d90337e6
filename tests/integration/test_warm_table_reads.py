"""A restarted daemon answers the reads of its note table alone (a listing, a read by exact path)
once the table is whole, before the name maps are: the build is held there through the fault
seam (``pause=build-names``), so the window is known. What the answers show is as fresh as after
the build (a note changed, added or deleted while the daemon was down), and what needs the maps
(a read by name or alias, links and backlinks), a fresh read and a write still wait for the whole
index, as before, then answer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.methods.reads import LIST, READ, ListParams, ReadParams
from tests.support.harness import Daemon, RawClient, paused_daemon, registered_vault, wait_at_gate

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Home
    from tests.support.typed import TypedClients

NOTES = {
    "topics/Alpha.md": "---\naliases: [First Letter]\n---\n# Alpha\n\nSee [[Beta]].\n",
    "topics/Beta.md": "# Beta\n\nBack to [[Alpha]].\n",
    "Gamma.md": "# Gamma\n\nLinks [[Alpha]] and [[Beta]].\n",
    "Old.md": "# Old\n\nTo be deleted while the daemon is down.\n",
}


def _unanswered(client: RawClient) -> bool:
    """No reply has arrived on ``client`` yet (what has arrived is kept for ``reply_to``)."""
    client.sock.setblocking(False)
    try:
        chunk = client.sock.recv(1 << 16)
    except BlockingIOError:
        chunk = None
    finally:
        client.sock.setblocking(True)
        client.sock.settimeout(120)
    if chunk:
        client.buf += chunk
    return chunk is None and b"\n" not in client.buf


def _restart_held(home: Home) -> tuple[Daemon, Path]:
    """A vault indexed once, changed while the daemon is down, and a new daemon held between its
    warm build's table and its name maps."""
    first = Daemon(home)
    root = registered_vault(home, NOTES)
    first.stop()
    (root / "topics/Beta.md").write_text("# Beta renamed\n\nChanged while the daemon was down. Back to [[Alpha]].\n")
    (root / "New.md").write_text("# New\n\nWritten while the daemon was down, links [[Gamma]].\n")
    (root / "Old.md").unlink()
    daemon, gate = paused_daemon(home, "build-names", 1)
    del home.env["VAULTD_FAULTS"]
    wait_at_gate(gate, daemon, "the warm build's table to be whole")
    return daemon, gate


def test_listing_and_a_read_by_path_answer_before_the_maps_and_are_fresh(home: Home, typed_clients: TypedClients) -> None:
    daemon, gate = _restart_held(home)
    try:
        typed = typed_clients.open(home)
        listed = typed.call(LIST, ListParams(vault="v"))
        assert [(n.path, n.title) for n in listed.notes] == [
            ("Gamma.md", "Gamma"),
            ("New.md", "New"),
            ("topics/Alpha.md", "Alpha"),
            ("topics/Beta.md", "Beta renamed"),
        ]
        assert listed.total == 4
        read = typed.call(READ, ReadParams(vault="v", target="topics/Beta.md"))
        assert read.title == "Beta renamed" and "Changed while the daemon was down" in read.body
        new = typed.call(READ, ReadParams(vault="v", target="New"))  # the exact path without .md
        assert new.path == "New.md" and "Written while the daemon was down" in new.body
        alpha = typed.call(READ, ReadParams(vault="v", target="topics/Alpha.md"))
        assert alpha.frontmatter == {"aliases": ["First Letter"]}
        assert gate.exists(), "the build was held while these answered"
    finally:
        gate.unlink(missing_ok=True)
        daemon.stop()


def test_name_reads_fresh_reads_and_writes_wait_for_the_whole_index(home: Home, typed_clients: TypedClients) -> None:
    daemon, gate = _restart_held(home)
    try:
        waiting: dict[str, tuple[RawClient, str, dict[str, Any]]] = {
            "by-name": (RawClient.session(home.socket), "note.read", {"vault": "v", "target": "Alpha"}),
            "by-alias": (RawClient.session(home.socket), "note.read", {"vault": "v", "target": "First Letter"}),
            "links": (RawClient.session(home.socket), "note.links", {"vault": "v", "target": "topics/Alpha.md"}),
            "fresh-list": (RawClient.session(home.socket), "note.list", {"vault": "v", "fresh": True}),
            # deleted while the daemon was down: no path of the table, so it waits for the names
            "deleted": (RawClient.session(home.socket), "note.read", {"vault": "v", "target": "Old.md"}),
            "create": (
                RawClient.session(home.socket),
                "note.create",
                {"vault": "v", "path": "Later", "body": "# Later\n\nsee [[Alpha]]\n"},
            ),
        }
        for client, method, params in waiting.values():
            client.send(7, method, params)  # each answered later: it waits for the whole index
        # A read of the table answers meanwhile, on a session of its own: the daemon is serving,
        # so the requests above have been taken and wait.
        typed = typed_clients.open(home)
        assert typed.call(LIST, ListParams(vault="v")).total == 4
        assert typed.call(READ, ReadParams(vault="v", target="Gamma.md")).title == "Gamma"
        for name, (client, _method, _params) in waiting.items():
            assert _unanswered(client), f"{name} answered before the name maps were whole"
        assert not (home.vault / "Later.md").exists(), "the write applied before the index was whole"
        assert gate.exists()
        gate.unlink()
        replies = {name: client.reply_to(7) for name, (client, _m, _p) in waiting.items()}
        assert replies.pop("deleted")["error"]["data"]["code"] == "NOT_FOUND"
        for name, reply in replies.items():
            assert "error" not in reply, (name, reply)
        assert replies["by-name"]["result"]["path"] == "topics/Alpha.md"
        assert replies["by-alias"]["result"]["path"] == "topics/Alpha.md"
        incoming = sorted(link["path"] for link in replies["links"]["result"]["incoming"])
        assert incoming == ["Gamma.md", "topics/Beta.md"]
        assert [o["target"] for o in replies["links"]["result"]["out"]] == ["Beta"]
        assert replies["links"]["result"]["dead"] == []
        assert replies["fresh-list"]["result"]["total"] == 4
        assert (home.vault / "Later.md").exists()
        after = typed.call(READ, ReadParams(vault="v", target="Later"))
        assert after.path == "Later.md"
    finally:
        gate.unlink(missing_ok=True)
        daemon.stop()


def test_a_listing_answers_between_the_build_and_the_index_ready(home: Home, typed_clients: TypedClients) -> None:
    """After the build returns and before the index is ready (the watcher's changes of the build
    applied, the heap given back), the table is still whole: a listing answers, by the built index,
    never "still indexing"."""
    first = Daemon(home)
    registered_vault(home, NOTES)
    first.stop()
    daemon, gate = paused_daemon(home, "build-settle", 1)
    del home.env["VAULTD_FAULTS"]
    try:
        wait_at_gate(gate, daemon, "the build to return")
        typed = typed_clients.open(home)
        assert typed.call(LIST, ListParams(vault="v")).total == len(NOTES)
        assert typed.call(READ, ReadParams(vault="v", target="Gamma.md")).title == "Gamma"
        assert gate.exists(), "the index was held short of ready while these answered"
    finally:
        gate.unlink(missing_ok=True)
        daemon.stop()
