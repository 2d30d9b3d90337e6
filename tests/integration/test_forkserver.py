"""The suite's daemons are forked from a process that has already imported vaultd
(tests/support/forkserver.py): each must still be the daemon a new ``python -m vaultd.main``
would be in its test, and what a fork cannot reproduce must start a new interpreter."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from tests.support import forkserver
from tests.support.harness import Daemon, Home, RawClient

pytestmark = pytest.mark.skipif(
    forkserver.FRESH or not sys.platform.startswith("linux"), reason="daemons start as new interpreters in this run"
)


def _status(home: Home) -> dict[str, object]:
    c = RawClient(home.socket)
    c.hello()
    status: dict[str, object] = c.call("daemon.status")
    c.close()
    return status


def _cwd_and_umask(pid: int) -> tuple[str, int]:
    status = Path(f"/proc/{pid}/status").read_text()
    umask = int(next(line.split()[1] for line in status.splitlines() if line.startswith("Umask:")), 8)
    return os.readlink(f"/proc/{pid}/cwd"), umask


def test_a_forked_daemon_serves_its_own_home_and_socket(home: Home) -> None:
    daemon = Daemon(home, umask=0o027)
    try:
        assert isinstance(daemon.proc, forkserver.ForkedProcess)
        status = _status(home)
        assert status["pid"] == daemon.pid
        assert status["socket"] == str(home.socket) and status["home"] == str(home.home)
        cwd, umask = _cwd_and_umask(daemon.pid)
        assert cwd == os.getcwd()
        assert umask == 0o077, "vaultd keeps its own state private whatever umask it was given"
        assert (home.home / "logs" / "vaultd.log").is_file(), "it logs in its own home"
    finally:
        assert daemon.stop() == 0, daemon.output()


def test_two_forked_daemons_share_nothing(home: Home) -> None:
    other = Home.create()
    first, second = Daemon(home), Daemon(other)
    try:
        assert first.pid != second.pid
        assert _status(home)["pid"] == first.pid and _status(other)["pid"] == second.pid
    finally:
        assert first.stop() == 0 and second.stop() == 0
        other.cleanup()


def test_a_killed_daemon_reports_its_signal_and_a_stopped_one_is_not_signalled(home: Home) -> None:
    daemon = Daemon(home)
    assert daemon.proc.poll() is None
    daemon.proc.send_signal(signal.SIGKILL)
    assert daemon.proc.wait(30) == -signal.SIGKILL
    assert daemon.proc.poll() == -signal.SIGKILL
    daemon.proc.send_signal(signal.SIGTERM)  # exited: nothing is sent, as Popen does
    assert daemon.stop() == -signal.SIGKILL


def test_a_daemon_that_cannot_start_exits_with_its_status_and_message(home: Home) -> None:
    running = Daemon(home)
    try:
        second = Daemon(home, wait=False)  # the same home: its lock is held
        assert isinstance(second.proc, forkserver.ForkedProcess)
        assert second.proc.wait(60) == 1
        assert second.stop() == 1
        assert f"another vaultd (pid {running.pid}) holds the home" in (home.root / "daemon.out").read_text()
        assert _status(home)["pid"] == running.pid, "the running one is untouched"
    finally:
        assert running.stop() == 0


@pytest.mark.parametrize("variable", ["VAULTD_JOURNAL_KEEP", "PYTHONHASHSEED"])
def test_a_variable_read_at_import_or_interpreter_start_gets_a_new_interpreter(home: Home, variable: str) -> None:
    home.env[variable] = "3"
    daemon = Daemon(home)
    try:
        assert not isinstance(daemon.proc, forkserver.ForkedProcess)
        assert _status(home)["pid"] == daemon.pid
    finally:
        daemon.stop()
