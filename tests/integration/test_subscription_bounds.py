"""Subscriptions under load: a git checkout of 3,000 notes arrives coalesced between state markers,
and consumers that never read are dropped with a final notification while the daemon's memory stays
bounded and a reading subscriber gets everything."""

from __future__ import annotations

import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from protocol.methods.subscriptions import MAX_FRAME_EVENTS
from tests.support.events import Subscriber, of_kind
from tests.support.harness import Daemon, Home, RawClient

if TYPE_CHECKING:
    from pathlib import Path

BULK = 3000


def _git(root: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def _bulk_paths() -> list[str]:
    return [f"bulk/{n // 100:02d}/Note {n:04d}.md" for n in range(BULK)]


def _write_bulk(root: Path) -> None:
    for rel in _bulk_paths():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {path.stem}\n\nLinks to [[Home]].\n")


def _remove_bulk(root: Path) -> None:
    for rel in _bulk_paths():
        os.unlink(root / rel)


def _closed(events: list[dict[str, Any]]) -> bool:
    """Every bulk state that was entered has been left."""
    kinds = [e["kind"] for e in events]
    return kinds.count("state.enter") == kinds.count("state.leave") >= 1


def _none_open(events: list[dict[str, Any]]) -> bool:
    """Every bulk state that was entered (if any) has been left."""
    kinds = [e["kind"] for e in events]
    return kinds.count("state.enter") == kinds.count("state.leave")


def _inside_states(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The note events between a state.enter and its state.leave, each state's count checked."""
    inside: list[dict[str, Any]] = []
    open_at: int | None = None
    for event in events:
        if event["kind"] == "state.enter":
            assert open_at is None, "states do not nest"
            open_at = len(inside)
        elif event["kind"] == "state.leave":
            assert open_at is not None
            assert event["changes"] == event["listed"] == len(inside) - open_at
            open_at = None
        elif open_at is not None and event["kind"].startswith("note."):
            inside.append(event)
    return inside


def test_a_git_checkout_of_3000_notes_arrives_coalesced_between_state_markers(home: Home, daemon: Daemon, cli: Any) -> None:
    root = home.root / "vault"
    root.mkdir()
    (root / "Home.md").write_text("# Home\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "home")
    _git(root, "checkout", "-q", "-b", "bulk")
    _write_bulk(root)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "bulk")
    _git(root, "checkout", "-q", "main")
    assert cli("vault", "add", "v", str(root)).code == 0

    sub = Subscriber(home.socket)
    sub.subscribe(vaults=["v"])
    _git(root, "checkout", "-q", "bulk")
    sub.read_until(lambda ev: len(of_kind(ev, "note.created")) >= BULK and _closed(ev), 60, "every note and the states' end")
    sub.read_for(0.5)

    created = [e["path"] for e in of_kind(sub.events, "note.created")]
    assert sorted(created) == sorted(_bulk_paths()), "every note of the checkout, once"
    # The watcher may report the first files before the rest (the state opens once 64 come at
    # once), and a checkout that pauses for longer than the quiet time is two states: allowed.
    inside = _inside_states(sub.events)
    assert len(inside) > BULK - 64
    assert sub.frames <= 20, f"{sub.frames} notifications for {BULK} notes: not coalesced"
    assert max(sub.frame_sizes) == MAX_FRAME_EVENTS, "frames are full, and never fuller than the bound"
    sub.close()

    # Back to main: the 3,000 notes go, coalesced the same way.
    gone = Subscriber(home.socket)
    gone.subscribe(vaults=["v"], kinds=["note.removed"])
    _git(root, "checkout", "-q", "main")
    gone.read_until(lambda ev: len(of_kind(ev, "note.removed")) >= BULK and _closed(ev), 60, "every removal and the states' end")
    assert sorted(e["path"] for e in of_kind(gone.events, "note.removed")) == sorted(_bulk_paths())
    assert len(_inside_states(gone.events)) > BULK - 64
    assert gone.frames <= 20
    gone.close()


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _drain(client: RawClient, timeout: float) -> list[dict[str, Any]]:
    """Everything the daemon sent on a connection it then closed, read at last."""
    client.sock.settimeout(timeout)
    messages = []
    while True:
        try:
            messages.append(json.loads(client.recv_line()))
        except ConnectionError:
            return messages


def test_consumers_that_never_read_are_dropped_with_a_final_notification(home: Home, cli: Any) -> None:
    home.home.mkdir(mode=0o700, exist_ok=True)
    (home.home / "config.json").write_text(json.dumps({"version": 1, "daemon": {"send_timeout_s": 2.0}}))
    daemon = Daemon(home)
    try:
        root = home.root / "vault"
        root.mkdir()
        (root / "Home.md").write_text("# Home\n")
        assert cli("vault", "add", "v", str(root)).code == 0
        quiet = []
        for _ in range(20):
            c = RawClient(home.socket)
            c.hello()
            assert "result" in c.request("subscribe", {"vaults": ["v"]})  # and reads nothing from here on
            quiet.append(c)
        reader = Subscriber(home.socket)
        reader.subscribe(vaults=["v"], kinds=["note.created", "note.removed"])
        before = _rss_kib(daemon.pid)

        # The files change on another thread while this one reads, as an editor's reader would:
        # a reader that stops reading for the send timeout is rightly dropped, so it must not wait
        # for 3,000 writes on a loaded machine before it reads again.
        with ThreadPoolExecutor(1) as pool:
            writing = pool.submit(_write_bulk, root)
            reader.read_until(lambda ev: len(of_kind(ev, "note.created")) == BULK, 60, "every note created")
            writing.result()
            # A bulk state lists at most BULK_LISTED events: let the creations' state close first
            # (it does once the vault is quiet), so the removals are listed in a state of their own.
            reader.read_until(_none_open, 60, "the creations' bulk state closed")
            removing = pool.submit(_remove_bulk, root)
            reader.read_until(lambda ev: len(of_kind(ev, "note.removed")) == BULK, 60, "every note removed")
            removing.result()
        assert reader.dropped is None, "a subscriber that reads is never dropped"

        time.sleep(2.5)  # the send timeout passes for the quiet ones
        grown = _rss_kib(daemon.pid) - before
        for c in quiet:
            messages = _drain(c, 10)
            assert messages[-1]["method"] == "subscription.dropped", messages[-1]
            final = messages[-1]["params"]
            assert final["reason"] == "not_reading" and "send_timeout_s" in final["message"]
            sent = [e for m in messages[:-1] for e in m["params"]["events"]]
            assert sent and final["clocks"]["v"] == sent[-1]["clock"], "the clocks say where it stopped"
            assert len(sent) < 2 * BULK, "held back: it got only what its socket could hold"
        # 20 consumers x 6,000 events (~1 MB each) held nowhere: the daemon grew by its index alone.
        assert grown < 48 * 1024, f"the daemon grew by {grown} KiB"
        alive = RawClient(home.socket)
        alive.hello()
        assert alive.call("daemon.status")["pid"] == daemon.pid
    finally:
        daemon.stop()
