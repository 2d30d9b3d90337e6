"""Vault files keep their modes; new ones get the user's umask, not the daemon's 077.

The daemon is started with umask 022 or 002 (as a user's shell would start it) and runs with 077
for its own state. Every write path is checked: create (a note in new folders), patch, append,
move (into a new folder, with rewritten backlinks), delete (into a new ``.trash/``), merge, undo,
a rollback after a crash, and the log file it creates. Notes at 0664 and 0640 keep those modes.
"""

from __future__ import annotations

import os
import signal
import stat
from typing import TYPE_CHECKING

import msgspec
import pytest

from protocol.methods.reads import READ, ReadParams
from protocol.methods.receipts import ChangeAction
from protocol.methods.vaults import VAULT_ADD, VaultAddParams
from protocol.methods.writes import (
    APPEND,
    CREATE,
    DELETE,
    MERGE,
    MOVE,
    PATCH,
    UNDO,
    AppendParams,
    CreateParams,
    DeleteParams,
    MergeParams,
    MoveParams,
    PatchParams,
    UndoParams,
)
from tests.support.harness import Daemon, Home
from tests.support.typed import TypedClient, TypedClients, previewed, two_step
from vaultctl.client import DaemonUnavailable

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _vault(home: Home) -> Path:
    vault = home.root / "vault"
    (vault / "team").mkdir(parents=True)
    notes = {
        "team/Shared.md": ("# Shared\n\nA group-writable note. See [[Private]].\n", 0o664),
        "team/Private.md": ("# Private\n\nGroup-readable only.\n", 0o640),
        "team/Linker.md": ("# Linker\n\nPoints at [[Private]] and [[Shared]].\n", 0o604),
        "team/Keep.md": ("---\ntype: insight\n---\n# Keep\n\nKeep prose.\n", 0o660),
        "team/Absorb.md": ("---\ntype: insight\n---\n# Absorb\n\nAbsorb prose.\n", 0o644),
    }
    for rel, (text, mode) in notes.items():
        (vault / rel).write_text(text)
        os.chmod(vault / rel, mode)
    return vault


@pytest.fixture(params=[0o022, 0o002], ids=["umask-022", "umask-002"])
def umask(request: pytest.FixtureRequest) -> int:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def started(home: Home, umask: int, typed_clients: TypedClients) -> Iterator[tuple[TypedClient, Path]]:
    vault = _vault(home)
    d = Daemon(home, umask=umask)
    c = typed_clients.open(home)
    c.call(VAULT_ADD, VaultAddParams(id="v", path=str(vault)))
    yield c, vault
    d.stop()


def test_every_write_keeps_existing_modes_and_gives_new_files_the_users_umask(
    started: tuple[TypedClient, Path], umask: int, home: Home
) -> None:
    c, vault = started
    new_file, new_folder = 0o666 & ~umask, 0o777 & ~umask
    c.call(CREATE, CreateParams(path="fresh/deeper/New", body="# New\n\nLinks [[Shared]].\n"))
    assert _mode(vault / "fresh") == new_folder
    assert _mode(vault / "fresh" / "deeper") == new_folder
    assert _mode(vault / "fresh" / "deeper" / "New.md") == new_file
    assert _mode(vault / "log.md") == new_file  # created by the first operation's log line

    c.call(PATCH, PatchParams(target="Shared", old="group-writable", new="shared"))
    c.call(APPEND, AppendParams(target="Private", section="More", markdown="- appended"))
    assert _mode(vault / "team" / "Shared.md") == 0o664
    assert _mode(vault / "team" / "Private.md") == 0o640

    _, moved = two_step(c, MOVE, MoveParams(target="Private", to="archive/Secret"))
    rewritten = {ch.path for ch in moved.changes if ch.action is ChangeAction.MODIFY}
    assert {"team/Shared.md", "team/Linker.md"} <= rewritten
    assert _mode(vault / "archive") == new_folder
    assert _mode(vault / "archive" / "Secret.md") == 0o640  # the moved file keeps its source's mode
    assert _mode(vault / "team" / "Shared.md") == 0o664
    assert _mode(vault / "team" / "Linker.md") == 0o604

    c.call(UNDO, UndoParams(op_id=moved.op_id))
    assert _mode(vault / "team" / "Private.md") == 0o640  # restored with the mode it had
    assert _mode(vault / "team" / "Shared.md") == 0o664
    assert _mode(vault / "team" / "Linker.md") == 0o604

    _, merged = two_step(c, MERGE, MergeParams(keep="Keep", absorb="Absorb"))
    assert {ch.path for ch in merged.changes} >= {"team/Keep.md", "team/Absorb.md"}
    assert _mode(vault / "team" / "Keep.md") == 0o660
    assert _mode(vault / "team" / "Absorb.md") == 0o644

    two_step(c, DELETE, DeleteParams(target="Shared", leave_broken_links=True))
    assert _mode(vault / ".trash") == new_folder
    assert _mode(vault / ".trash" / "team") == new_folder
    assert _mode(vault / ".trash" / "team" / "Shared.md") == 0o664

    # the daemon's own state stays private
    assert _mode(vault / ".vaultd") & 0o077 == 0
    for p in (vault / ".vaultd").rglob("*"):
        assert _mode(p) & 0o077 == 0, p
    for p in home.home.rglob("*"):
        if not p.is_symlink():
            assert _mode(p) & 0o077 == 0, p


def test_a_rolled_back_move_restores_the_source_with_its_mode(home: Home, umask: int, typed_clients: TypedClients) -> None:
    """Killed after the move's writes, before its commit: recovery brings the source back from the
    journal with the mode it had, not the daemon's 0600."""
    vault = _vault(home)
    d = Daemon(home, umask=umask)
    c = typed_clients.open(home)
    c.call(VAULT_ADD, VaultAddParams(id="v", path=str(vault)))
    params = MoveParams(target="Private", to="archive/Secret")
    preview = previewed(c.call(MOVE, params))
    d.stop()
    home.env["VAULTD_FAULTS"] = "crash=before-commit"
    d = Daemon(home, umask=umask)
    c = typed_clients.open(home)
    with pytest.raises(DaemonUnavailable):  # the connection breaks as the daemon dies
        c.call(MOVE, msgspec.structs.replace(params, confirm=True, fingerprint=preview.fingerprint))
    assert d.stop() == -signal.SIGKILL
    assert not (vault / "team" / "Private.md").exists()
    home.env.pop("VAULTD_FAULTS")
    d = Daemon(home, umask=umask)
    try:
        c = typed_clients.open(home)
        assert c.call(READ, ReadParams(target="team/Private.md", fresh=True)).body
        assert _mode(vault / "team" / "Private.md") == 0o640
        assert _mode(vault / "team" / "Shared.md") == 0o664
        assert _mode(vault / "team" / "Linker.md") == 0o604
        assert not (vault / "archive" / "Secret.md").exists()
    finally:
        d.stop()
