"""What happens to a multi-file operation when the vault changes under it while it is applied.

A real daemon applies a move that rewrites many backlinks, held at a chosen point by the fault
seam (``pause=after-rename@N:GATE``: the daemon creates GATE and waits until it is removed), so the
change lands deterministically between two target writes:

- a folder on the way is swapped for a symlink to an outside folder holding files with the
  targets' names: the move is refused (CONFLICT), rolled back, and nothing outside changes;
- an editor saves a note the move has not written yet (or the moved note itself): the move is
  refused (CONFLICT, ``vaultctl`` exit 75) naming that note, the editor's bytes stay, and every
  other file is back to its bytes before the move.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import TYPE_CHECKING, Any

import pytest

from protocol.errors import ErrorCode, ErrorData
from protocol.methods.reads import SEARCH, SearchParams
from protocol.methods.vaults import VAULT_ADD, VaultAddParams
from protocol.methods.writes import MOVE, MoveParams
from tests.support.harness import Daemon, Home, snapshot, vaultctl
from tests.support.typed import previewed
from tests.support.wait import wait_until
from vaultctl.client import CallError

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.typed import TypedClients

BACKLINKS = 40
OUTSIDE_BYTES = b"an outside file with a target's name: never touched\n"


def _build_vault(root: Path) -> Path:
    vault = root / "vault"
    (vault / "src").mkdir(parents=True)
    (vault / "links").mkdir()
    (vault / "src" / "Target.md").write_text("# Target\n\nThe note being moved.\n")
    for i in range(BACKLINKS):
        (vault / "links" / f"L{i:02}.md").write_text(f"# L{i:02}\n\nSee [[Target]] for more.\n")
    return vault


def _leftovers(vault: Path) -> list[str]:
    journal = vault / ".vaultd" / "journal"
    pending = [p.name for p in journal.iterdir() if not (p / "committed").exists()] if journal.is_dir() else []
    return pending + [str(p) for p in vault.rglob(".vaultd-*.tmp")]


def _start_paused(home: Home, clients: TypedClients, vault: Path, nth: int) -> tuple[Daemon, Path]:
    gate = home.root / "gate"
    home.env["VAULTD_FAULTS"] = f"pause=after-rename@{nth}:{gate}"
    d = Daemon(home)
    c = clients.open(home)
    c.call(VAULT_ADD, VaultAddParams(id="v", path=str(vault)))
    c.close()
    return d, gate


def _wait_for(path: Path, proc: Any = None, timeout: float = 60.0) -> None:
    """Until the daemon holds at the gate (bounded; a daemon that answered first fails the test)."""

    def at_gate() -> bool:
        if path.exists():
            return True
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the operation finished before reaching the gate: {proc.communicate()}")
        return False

    wait_until(at_gate, timeout, f"the daemon to reach {path}", poll=0.01)


TARGET = MoveParams(target="src/Target.md", to="moved/Renamed")


@pytest.mark.parametrize(
    ("nth", "swapped", "names"),
    [
        (1, "src", ["Target.md"]),  # after the create: the unlink of src/Target.md is next
        (2, "links", [f"L{i:02}.md" for i in range(BACKLINKS)]),  # after the unlink: the rewrites are next
    ],
    ids=["unlink-through-swapped-folder", "rewrite-through-swapped-folder"],
)
def test_a_folder_swapped_for_a_link_mid_move_is_refused_and_nothing_outside_changes(
    home: Home, typed_clients: TypedClients, nth: int, swapped: str, names: list[str]
) -> None:
    vault = _build_vault(home.root)
    outside = home.root / "outside"
    outside.mkdir()
    for name in names:
        (outside / name).write_bytes(OUTSIDE_BYTES)
    before = snapshot(vault)
    d, gate = _start_paused(home, typed_clients, vault, nth)
    try:
        c = typed_clients.open(home)
        preview = previewed(c.call(MOVE, TARGET))
        assert len(preview.changes) == 2 + BACKLINKS
        replies: list[Any] = []

        def confirm_move() -> None:
            try:
                replies.append(c.call(MOVE, MoveParams(target=TARGET.target, to=TARGET.to, confirm=True, fingerprint=preview.fingerprint)))
            except CallError as exc:
                replies.append(exc.data)

        confirm = threading.Thread(target=confirm_move)
        confirm.start()
        _wait_for(gate)
        (vault / swapped).rename(home.root / f"{swapped}.aside")  # the real folder, out of the vault
        (vault / swapped).symlink_to(outside, target_is_directory=True)
        gate.unlink()
        confirm.join(60)
        assert not confirm.is_alive()
        [error] = replies
        assert isinstance(error, ErrorData), error
        assert error.code is ErrorCode.CONFLICT, error
        assert "symbolic link" in error.message, error
        assert sorted(p.name for p in outside.iterdir()) == sorted(names)
        assert all((outside / n).read_bytes() == OUTSIDE_BYTES for n in names)
        # the operation wrote nothing it did not take back; the folder moved aside holds its
        # files as they were
        aside = snapshot(home.root / f"{swapped}.aside")
        assert aside == {k.split("/", 1)[1]: v for k, v in before.items() if k.startswith(swapped + "/")}
        now = snapshot(vault)
        assert {k: v for k, v in now.items() if not k.startswith(swapped + "/")} == {
            k: v for k, v in before.items() if not k.startswith(swapped + "/")
        }
        assert not _leftovers(vault)
        assert c.call(SEARCH, SearchParams(query="Target")).hits  # still serving
    finally:
        d.stop()


def _editor_save(path: Path, data: bytes) -> None:
    """Save as an editor does (temp file and rename), from a process of its own."""
    code = "import os, sys; p = sys.argv[1]; t = p + '.edit~'; open(t, 'wb').write(sys.stdin.buffer.read()); os.replace(t, p)"
    subprocess.run([sys.executable, "-c", code, str(path)], input=data, check=True, timeout=30)


@pytest.mark.parametrize(
    ("nth", "edited"),
    [
        (3, f"links/L{BACKLINKS - 5:02}.md"),  # a backlink the move has not rewritten yet
        (1, "src/Target.md"),  # the moved note itself, before its unlink
    ],
    ids=["backlink", "moved-note"],
)
def test_an_editor_save_during_a_long_move_conflicts_and_nothing_is_half_applied(
    home: Home, typed_clients: TypedClients, nth: int, edited: str
) -> None:
    vault = _build_vault(home.root)
    before = snapshot(vault)
    d, gate = _start_paused(home, typed_clients, vault, nth)
    try:
        preview = vaultctl(home, "move", TARGET.target, TARGET.to, "--json")
        assert preview.code == 0, preview
        fingerprint = preview.json()["fingerprint"]
        cmd = [sys.executable, "-m", "vaultctl.main", "move", TARGET.target, TARGET.to, "--confirm", "--fingerprint", fingerprint]
        confirm = subprocess.Popen(cmd, env=home.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _wait_for(gate, confirm)
        saved = before[edited] + b"\nSaved by the editor while the move ran.\n"
        _editor_save(vault / edited, saved)
        gate.unlink()
        out, err = confirm.communicate(timeout=60)
        assert confirm.returncode == 75, (out, err)
        assert edited in err, err
        assert "changed" in err, err
        assert (vault / edited).read_bytes() == saved
        after = snapshot(vault)
        assert {k: v for k, v in after.items() if k not in (edited, "log.md")} == {k: v for k, v in before.items() if k != edited}
        assert not (vault / "moved").exists() or not list((vault / "moved").iterdir())
        assert not _leftovers(vault)
        reread = vaultctl(home, "show", edited, "--fresh", "--json")
        assert reread.code == 0
        assert "Saved by the editor" in reread.json()["body"]
    finally:
        d.stop()
