"""A promotion writes two vaults (the org copy, the source's ``promoted_to``) as one operation.

A real daemon is held or killed between the two vaults' writes through the fault seam: an
editor's save of the source note there makes the promotion answer CONFLICT (``vaultctl`` exit 75)
with neither vault changed, and the retry the message asks for works; a SIGKILL anywhere leaves,
after a restart, both sides applied or neither, and no journal half-decided.
"""

from __future__ import annotations

import signal
import subprocess
from typing import TYPE_CHECKING

import pytest

from protocol.errors import ErrorCode
from protocol.methods.git import PROMOTE, PromoteParams
from protocol.methods.reads import LIST, ListParams
from protocol.methods.vaults import VAULT_ADD, Kind, VaultAddParams
from tests.support.harness import VAULTCTL, Daemon, Home, snapshot
from tests.support.typed import TypedClient, TypedClients, applied, previewed, refused
from tests.support.wait import wait_until
from vaultctl.client import CallError, DaemonUnavailable

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

SOURCE = "ideas/Method.md"
SOURCE_TEXT = "# Method\n\nHow we review, see [[Glossary]].\n"


@pytest.fixture
def vaults(home: Home, typed_clients: TypedClients) -> Iterator[tuple[Path, Path]]:
    """'me' (personal) and 'team' (org), registered by a daemon that is stopped again."""
    me, team = home.root / "me", home.root / "team"
    (me / "ideas").mkdir(parents=True)
    (me / SOURCE).write_text(SOURCE_TEXT)
    team.mkdir()
    (team / "Glossary.md").write_text("# Glossary\n\nTerms.\n")
    d = Daemon(home)
    c = typed_clients.open(home, timeout=60.0)
    c.call(VAULT_ADD, VaultAddParams(id="me", path=str(me)))
    c.call(VAULT_ADD, VaultAddParams(id="team", path=str(team), kind=Kind.ORG))
    c.close()
    d.stop()
    yield me, team


def _start(home: Home, faults: str | None = None) -> Daemon:
    if faults:
        home.env["VAULTD_FAULTS"] = faults
    else:
        home.env.pop("VAULTD_FAULTS", None)
    return Daemon(home)


METHOD = PromoteParams(vault="me", target="Method", to="team")


def _preview(c: TypedClient) -> str:
    return previewed(c.call(PROMOTE, METHOD)).fingerprint


def _confirmed(fingerprint: str) -> PromoteParams:
    return PromoteParams(vault="me", target="Method", to="team", confirm=True, fingerprint=fingerprint)


def _pending(vault: Path) -> list[str]:
    """Journals without a commit marker, and temp files: what a whole operation never leaves."""
    journal = vault / ".vaultd" / "journal"
    pending = [p.name for p in journal.iterdir() if not (p / "committed").exists()] if journal.is_dir() else []
    return pending + [str(p) for p in vault.rglob(".vaultd-*.tmp")]


def _state(me: Path, team: Path) -> tuple[bool, bool]:
    """(the org copy exists, the source says it was promoted)."""
    return (team / SOURCE).exists(), "promoted_to:" in (me / SOURCE).read_text()


def _notes(vault: Path) -> dict[str, bytes]:
    return {p: b for p, b in snapshot(vault).items() if not p.startswith(".vaultd/") and p != "log.md"}


def test_an_editors_save_between_the_two_vaults_leaves_neither_and_a_retry_works(
    home: Home, typed_clients: TypedClients, vaults: tuple[Path, Path]
) -> None:
    me, team = vaults
    team_before = _notes(team)
    gate = home.root / "gate"
    d = _start(home, f"pause=after-rename@1:{gate}")  # the first target written: the org copy
    try:
        c = typed_clients.open(home, timeout=60.0)
        fp = _preview(c)
        confirm = subprocess.Popen(
            [*VAULTCTL, "promote", "Method", "--to", "team", "--vault", "me", "--confirm", "--fingerprint", fp, "--json"],
            env=home.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

        def at_gate() -> bool:
            if confirm.poll() is not None:
                raise AssertionError(f"the promotion finished before the gate: {confirm.communicate()}")
            return gate.exists()

        wait_until(at_gate, 60.0, "the daemon to hold between the two vaults", poll=0.01)
        assert (team / SOURCE).exists(), "held after the org copy was written"
        edited = SOURCE_TEXT + "\nSaved in the editor meanwhile.\n"
        (me / SOURCE).write_text(edited)  # the person's editor saves the source note
        gate.unlink()
        out, err = confirm.communicate(timeout=60)
        assert confirm.returncode == 75, (confirm.returncode, out, err)
        assert "retry" in err
        assert _state(me, team) == (False, False), "neither vault keeps a share of a promotion that answered CONFLICT"
        assert (me / SOURCE).read_text() == edited, "the editor's bytes stay"
        assert _notes(team) == team_before
        assert not _pending(me)
        assert not _pending(team)
        assert "promote" not in ((team / "log.md").read_text() if (team / "log.md").exists() else "")

        retry = applied(c.call(PROMOTE, _confirmed(_preview(c))))  # the retry CONFLICT asks for works
        assert _state(me, team) == (True, True)
        assert "Saved in the editor meanwhile." in (me / SOURCE).read_text()
        assert f"promoted_to: team:{SOURCE} (op {retry.op_id})" in (me / SOURCE).read_text()
        c.close()
    finally:
        d.stop()


#: Where the promotion is killed, and whether it must be found whole (True) or absent (False).
KILLS = [
    ("after-journal", False),  # both journals durable, nothing written
    ("after-rename@1", False),  # the org copy written
    ("between-vaults", False),  # the same instant, named
    ("after-rename@2", False),  # the source note written too, nothing committed
    ("before-commit", False),
    ("between-commit-markers", True),  # the org journal committed, the source's marker not yet written
    ("after-commit", True),
]


@pytest.mark.parametrize(("point", "whole"), KILLS)
def test_a_kill_anywhere_leaves_both_vaults_promoted_or_neither(
    home: Home, typed_clients: TypedClients, vaults: tuple[Path, Path], point: str, whole: bool
) -> None:
    me, team = vaults
    before = (_notes(me), _notes(team))
    d = _start(home)
    fp = _preview(typed_clients.open(home, timeout=60.0))
    d.stop()
    d = _start(home, f"crash={point}")
    try:
        typed_clients.open(home, timeout=60.0).call(PROMOTE, _confirmed(fp))
        acknowledged = True
    except (CallError, DaemonUnavailable):  # refused, or the connection broke as the daemon died
        acknowledged = False
    assert d.stop() == -signal.SIGKILL, "the crash point must fire before the reply"
    assert not acknowledged, "the crash point must fire before the reply"

    d = _start(home)
    try:
        c = typed_clients.open(home, timeout=60.0)
        for vid in ("me", "team"):
            c.call(LIST, ListParams(vault=vid, fresh=True))  # served once recovered and indexed
        assert not _pending(me), "recovery decides every journal of the operation"
        assert not _pending(team), "recovery decides every journal of the operation"
        assert _state(me, team) == (whole, whole)
        if not whole:
            assert (_notes(me), _notes(team)) == before, "a promotion that never committed is absent from both vaults"
            applied(c.call(PROMOTE, _confirmed(_preview(c))))
            assert _state(me, team) == (True, True)
        c.close()
    finally:
        d.stop()


def test_a_failed_journal_in_the_second_vault_leaves_neither_journal_nor_change(
    home: Home, typed_clients: TypedClients, vaults: tuple[Path, Path]
) -> None:
    """The org journal is written, the source's fails: the org journal goes too, nothing changed."""
    me, team = vaults
    before = (_notes(me), _notes(team))
    d = _start(home, "error=rename:EIO@2")  # rename 1: the org journal into place; 2: the source's
    try:
        c = typed_clients.open(home, timeout=60.0)
        with refused(ErrorCode.UNAVAILABLE):
            c.call(PROMOTE, _confirmed(_preview(c)))
        assert (_notes(me), _notes(team)) == before
        for vault in (me, team):
            journal = vault / ".vaultd" / "journal"
            assert not (list(journal.iterdir()) if journal.is_dir() else []), "no journal of an operation that wrote nothing"
        applied(c.call(PROMOTE, _confirmed(_preview(c))))
        assert _state(me, team) == (True, True)
        c.close()
    finally:
        d.stop()
