"""A write plans on the vault as it is on disk, not as the watcher has reported it so far.

Files are written behind the daemon's back in one burst, as a ``git checkout`` does, and a write
follows at once; the write must see every one of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from protocol.errors import ErrorCode
from protocol.methods.reads import STATS, StatsParams
from protocol.methods.receipts import Applied
from protocol.methods.vaults import VAULT_ADD, VaultAddParams
from protocol.methods.writes import CREATE, MOVE, CreateParams, MoveParams
from tests.support.harness import Daemon, Home, vaultctl
from tests.support.typed import TypedClient, previewed, refused

if TYPE_CHECKING:
    from pathlib import Path

BACKLINKERS = 1000  #: a wide move: a thousand notes rewritten in one operation
FOLDERS = 20


@pytest.fixture
def vault(home: Home, daemon: Daemon, typed: TypedClient) -> Path:
    root = home.root / "vault"
    root.mkdir()
    (root / "Target.md").write_text("# Target\n\nThe note everything links to.\n")
    (root / "Home.md").write_text("# Home\n\nStart here.\n")
    typed.call(VAULT_ADD, VaultAddParams(id="v", path=str(root)))
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


def test_move_right_after_a_checkout_rewrites_every_backlink(vault: Path, home: Home, typed: TypedClient) -> None:
    dead_before = typed.call(STATS, StatsParams(fresh=True)).dead_links
    written = _burst(vault)
    preview = previewed(typed.call(MOVE, MoveParams(target="Target", to="Renamed")))  # at once: no watcher has caught up
    planned = {c.path for c in preview.changes}
    assert len(planned) == BACKLINKERS + 2, "the preview plans every backlink's rewrite"
    done = vaultctl(home, "move", "Target", "Renamed", "--confirm", "--fingerprint", preview.fingerprint, "--json")
    assert done.code == 0, done.err
    receipt = done.json()
    assert receipt["outcome"] == "applied"
    assert not (vault / "Target.md").exists()
    assert (vault / "Renamed.md").exists()
    for path in written:
        text = path.read_text()
        assert "[[Target" not in text, path
        assert "[[Renamed]]" in text, path
        assert "[[Renamed|the target]]" in text, path
    assert typed.call(STATS, StatsParams(fresh=True)).dead_links == dead_before


def test_create_right_after_a_checkout_sees_the_new_notes(vault: Path, typed: TypedClient) -> None:
    (vault / "fresh").mkdir()
    for i in range(200):
        (vault / "fresh" / f"Arrived {i}.md").write_text(f"# Arrived {i}\n")
    receipt = typed.call(CREATE, CreateParams(path="inbox/links", body="[[Arrived 199]] and [[Arrived 0]]\n"))
    assert isinstance(receipt, Applied), receipt  # no refusal for a dead link: both targets arrived before the call
    with refused(ErrorCode.VALIDATION):  # a case collision, seen
        typed.call(CREATE, CreateParams(path="fresh/arrived 7", body="x\n"))
    assert (vault / "fresh" / "Arrived 7.md").read_text() == "# Arrived 7\n"
