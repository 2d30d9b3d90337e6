"""A write plans on the vault as it is on disk, not as the watcher has reported it so far.

Files are written behind the daemon's back in one burst, as a ``git checkout`` does, and a write
follows at once; the write must see every one of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.support.harness import Daemon, Home, RawClient, vaultctl

if TYPE_CHECKING:
    from pathlib import Path

BACKLINKERS = 1000  #: a wide move: a thousand notes rewritten in one operation
FOLDERS = 20


@pytest.fixture
def vault(home: Home, daemon: Daemon, raw: RawClient) -> Path:
    root = home.root / "vault"
    root.mkdir()
    (root / "Target.md").write_text("# Target\n\nThe note everything links to.\n")
    (root / "Home.md").write_text("# Home\n\nStart here.\n")
    raw.call("vault.add", {"id": "v", "path": str(root)})
    return root


def _burst(root: Path) -> list[Path]:
    """Write many notes linking to Target in new folders, as fast as a checkout would."""
    written = []
    for i in range(BACKLINKERS):
        folder = root / f"area-{i % FOLDERS:02d}"
        folder.mkdir(exist_ok=True)
        path = folder / f"note-{i:04d}.md"
        path.write_text(f"# Note {i}\n\nSee [[Target]] and [[Target|the target]].\n")
        written.append(path)
    return written


def test_move_right_after_a_checkout_rewrites_every_backlink(vault: Path, home: Home, raw: RawClient) -> None:
    dead_before = raw.call("vault.stats", {"fresh": True})["dead_links"]
    written = _burst(vault)
    preview = raw.call("note.move", {"target": "Target", "to": "Renamed"})  # at once: no watcher has caught up
    planned = {c["path"] for c in preview["changes"]}
    assert len(planned) == BACKLINKERS + 2, "the preview plans every backlink's rewrite"
    done = vaultctl(home, "move", "Target", "Renamed", "--confirm", "--fingerprint", preview["fingerprint"], "--json")
    assert done.code == 0, done.err
    receipt = done.json()
    assert receipt["applied"]
    assert not (vault / "Target.md").exists() and (vault / "Renamed.md").exists()
    for path in written:
        text = path.read_text()
        assert "[[Target" not in text and "[[Renamed]]" in text and "[[Renamed|the target]]" in text, path
    assert raw.call("vault.stats", {"fresh": True})["dead_links"] == dead_before


def test_create_right_after_a_checkout_sees_the_new_notes(vault: Path, raw: RawClient) -> None:
    (vault / "fresh").mkdir()
    for i in range(200):
        (vault / "fresh" / f"Arrived {i}.md").write_text(f"# Arrived {i}\n")
    receipt = raw.request("note.create", {"path": "inbox/links", "body": "[[Arrived 199]] and [[Arrived 0]]\n"})
    assert "error" not in receipt, receipt  # no dead link: both targets arrived before the call
    assert receipt["result"]["applied"]
    clash = raw.request("note.create", {"path": "fresh/arrived 7", "body": "x\n"})  # a case collision, seen
    assert clash["error"]["data"]["code"] == "VALIDATION"
    assert (vault / "fresh" / "Arrived 7.md").read_text() == "# Arrived 7\n"
