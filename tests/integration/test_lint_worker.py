"""A large vault's lint runs in a worker process of a real daemon, and the daemon outlives it.

The lint is held at a fault gate (``pause=lint-rules``) so what the tests show is where the work
runs and an order of replies, never a duration: while the rules are held, a worker process of the
daemon is running ``vaultd.lint.worker``, and another client's search and writes are answered;
a worker killed at that point (``crash=lint-rules``) is an UNAVAILABLE answer, and the next lint,
write and search of the same daemon are answered as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tests.support.harness import Daemon, RawClient, assert_alive, paused_daemon, wait_at_gate
from vaultd.lint.worker import WORKER_MIN_NOTES

if TYPE_CHECKING:
    from tests.support.harness import Home

NOTES = WORKER_MIN_NOTES + 60  #: whole rings of 20
LINT = {"vault": "big", "as_of": "2026-01-01", "limit": 50}


def _vault(root: Path, notes: int) -> Path:
    """``notes`` notes in rings of 20, each linking the next; every 100th also links a note that
    is not there (a finding per ring of five)."""
    root.mkdir()
    for i in range(notes):
        ring, k = divmod(i, 20)
        nxt = ring * 20 + (k + 1) % 20
        dead = f" and [[Missing {i}]]" if i % 100 == 0 else ""
        (root / f"n{i:05d}.md").write_text(f"# Note {i}\n\nSee [[n{nxt:05d}]]{dead}; alpha word {i}.\n")
    return root


def _workers_of(pid: int) -> list[str]:
    """The command lines of the daemon's child processes running a lint worker."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            command = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        if parent == pid and "vaultd.lint.worker" in command:
            found.append(command)
    return found


def _setup(home: Home, daemon: Daemon) -> tuple[Path, Path]:
    big, side = _vault(home.root / "big", NOTES), _vault(home.root / "side", 3)
    setup = RawClient.session(home.socket)
    setup.call("vault.add", {"id": "big", "path": str(big)})
    setup.call("vault.add", {"id": "side", "path": str(side)})
    setup.close()
    return big, side


def test_a_large_vaults_lint_runs_in_a_worker_process_while_others_are_answered(home: Home) -> None:
    daemon, gate = paused_daemon(home, "lint-rules", 1)
    try:
        _big, side = _setup(home, daemon)
        linter = RawClient.session(home.socket)
        linter.send(1, "vault.lint", LINT)
        wait_at_gate(gate, daemon, "the lint to reach its rules")
        assert _workers_of(daemon.proc.pid), "the rules are held in a worker process of the daemon, not in the daemon"

        other = RawClient.session(home.socket)
        assert other.call("note.search", {"vault": "big", "query": "alpha"})["hits"]
        made = other.call("note.create", {"vault": "side", "path": "Fresh.md", "body": "written while the lint runs\n"})
        assert made["outcome"] == "applied", made

        gate.unlink()
        held = linter.reply_to(1)["result"]
        assert held["checked"] == NOTES and held["counts"]["L01"] == NOTES // 100 + 1, held
        linter.send(1, "vault.lint", LINT)
        assert linter.reply_to(1)["result"] == held, "a second lint of the unchanged vault answers the same"
        assert not _workers_of(daemon.proc.pid), "no worker outlives its lint"
    finally:
        gate.unlink(missing_ok=True)
        daemon.stop()


def test_a_lint_worker_that_dies_is_unavailable_and_the_daemon_goes_on(home: Home) -> None:
    home.env["VAULTD_FAULTS"] = "crash=lint-rules@1"  # the first lint's worker is killed at its rules
    daemon = Daemon(home)
    try:
        _big, side = _setup(home, daemon)
        client = RawClient.session(home.socket)
        client.send(1, "vault.lint", LINT)
        error = client.reply_to(1)["error"]
        assert error["data"]["code"] == "UNAVAILABLE", error
        assert "lint worker ended with status -9" in error["message"] and "retry" in error["message"], error

        assert_alive(home, daemon)
        assert client.call("note.search", {"vault": "big", "query": "alpha"})["hits"]
        made = client.call("note.create", {"vault": "side", "path": "After.md", "body": "written after the worker died\n"})
        assert made["outcome"] == "applied", made
        client.send(1, "vault.lint", LINT)
        again = client.reply_to(1)["result"]  # the retry the answer asked for
        assert again["checked"] == NOTES and again["counts"]["L01"] == NOTES // 100 + 1, again
        assert not _workers_of(daemon.proc.pid)
    finally:
        daemon.stop()
