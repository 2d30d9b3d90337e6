"""The perimeter's edges at start and on disk: undecodable file names, the socket's folder, start-up errors.

A file name that is not UTF-8 must cost only itself (an S07 issue), never the reply or the
session that lists it; an existing socket folder is checked and left as it is; a start-up
error, wherever it is raised, is one line on stderr.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest

from protocol.issue_codes import IssueCode
from protocol.methods.common import Empty
from protocol.methods.reads import ISSUES, LIST, SEARCH, STATS, IssuesParams, ListParams, SearchParams, StatsParams
from protocol.methods.service import DAEMON_STATUS
from protocol.methods.vaults import VAULT_ADD, VaultAddParams
from tests.support.harness import Daemon, Home, RawClient
from tests.support.wait import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.typed import TypedClient

BAD_NAME = b"bad\xff.md"
BAD_SHOWN = "bad\\xff.md"


def _make_bad_file(vault: Path) -> None:
    fd = os.open(os.fsencode(str(vault)) + b"/" + BAD_NAME, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, b"# bad\n\nhello from a bad name\n")
    finally:
        os.close(fd)


def _vault(home: Home) -> Path:
    v = home.root / "vault"
    (v / "notes").mkdir(parents=True)
    (v / "notes" / "Good.md").write_text("# Good\n\nhello word\n")
    return v


def _assert_every_read_answers(typed: TypedClient) -> None:
    """One connection: every reply arrives, the session stays open, the good note is listed."""
    listed = typed.call(LIST, ListParams())
    assert [n.path for n in listed.notes] == ["notes/Good.md"], listed
    hits = typed.call(SEARCH, SearchParams(query="hello", fresh=True)).hits
    assert [h.path for h in hits] == ["notes/Good.md"], hits
    stats = typed.call(STATS, StatsParams(fresh=True))
    assert stats.notes == 1, stats
    assert stats.skipped == 1, stats
    issues = typed.call(ISSUES, IssuesParams()).issues
    assert [(i.path, i.code) for i in issues] == [(BAD_SHOWN, IssueCode.S07)], issues
    assert BAD_SHOWN in issues[0].message
    assert typed.call(DAEMON_STATUS, Empty()).pid > 0  # the same session still answers


def test_a_non_utf8_name_present_at_add_costs_only_itself(daemon: Daemon, typed: TypedClient, home: Home) -> None:
    vault = _vault(home)
    _make_bad_file(vault)
    typed.call(VAULT_ADD, VaultAddParams(id="p", path=str(vault)))
    _assert_every_read_answers(typed)


def test_a_non_utf8_name_appearing_while_watched_costs_only_itself(daemon: Daemon, typed: TypedClient, home: Home) -> None:
    vault = _vault(home)
    typed.call(VAULT_ADD, VaultAddParams(id="p", path=str(vault)))
    assert typed.call(ISSUES, IssuesParams()).issues == []
    _make_bad_file(vault)

    def reported() -> list[Any]:  # the watcher reports it a moment later
        typed.call(SEARCH, SearchParams(query="hello", fresh=True))
        return list(typed.call(ISSUES, IssuesParams()).issues)

    wait_until(reported, 30, "the watcher to report the non-UTF-8 name", poll=0.1)
    _assert_every_read_answers(typed)


# -- the socket's folder ----------------------------------------------------------------------------


def _socket_in(home: Home, folder: Path) -> None:
    home.socket = folder / "v.sock"
    home.env["VAULTD_SOCKET"] = str(home.socket)


@pytest.mark.parametrize("mode", [0o755, 0o1777], ids=["0755", "sticky-1777"])
def test_an_existing_socket_folder_keeps_its_mode(home: Home, mode: int) -> None:
    """Regression: the daemon chmodded any socket folder to 0700, /tmp included."""
    folder = home.root / "sockdir"
    folder.mkdir()
    os.chmod(folder, mode)
    _socket_in(home, folder)
    daemon = Daemon(home)
    try:
        client = RawClient(home.socket)
        client.hello()
        assert client.call("daemon.status")["pid"] == daemon.proc.pid
        assert stat.S_IMODE(folder.lstat().st_mode) == mode
    finally:
        daemon.stop()
    assert stat.S_IMODE(folder.lstat().st_mode) == mode


def _start_failing(home: Home) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vaultd.main"], env=home.env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
    )


def _assert_one_line_error(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    assert proc.returncode != 0, proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("vaultd: "), proc.stderr
    assert "Traceback" not in proc.stderr
    for word in words:
        assert word in lines[0], proc.stderr


def test_a_world_writable_socket_folder_without_sticky_bit_is_refused_in_one_line(home: Home) -> None:
    folder = home.root / "open"
    folder.mkdir()
    os.chmod(folder, 0o777)
    _socket_in(home, folder)
    proc = _start_failing(home)
    _assert_one_line_error(proc, str(folder), "0777")
    assert stat.S_IMODE(folder.lstat().st_mode) == 0o777
    assert not home.socket.exists()


def test_a_start_up_error_inside_the_event_loop_is_one_line(home: Home) -> None:
    """Regression: a StartupError raised in the task group reached the user as a traceback."""
    home.socket.parent.mkdir(parents=True, mode=0o700)
    home.socket.write_text("not a socket\n")
    proc = _start_failing(home)
    _assert_one_line_error(proc, str(home.socket), "not a socket")
    assert home.socket.read_text() == "not a socket\n"
