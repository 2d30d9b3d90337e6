"""A reply slower than the client's timeout: exit 69 with what to check, never a traceback.

The daemon is slowed at ``before-commit`` with the fault seam (``VAULTD_FAULTS=sleep=...``), so
the write is applied after the client has given up; the message must say it may have been and
point at ``vaultctl ops``, which then does list it.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.support.harness import REPO, Daemon, Home, Result, copy_sample_vault, register, vaultctl
from tests.support.wait import wait_until

if TYPE_CHECKING:
    from collections.abc import Iterator

PAUSE_S = 4  # the write's pause; the client waits a small fraction of it
SHORT = {"VAULTD_CLIENT_TIMEOUT": "0.5"}


@pytest.fixture
def slow_daemon(home: Home) -> Iterator[Daemon]:
    home.env["VAULTD_FAULTS"] = f"sleep=before-commit:{PAUSE_S}"
    d = Daemon(home)
    copy_sample_vault(home.root / "vault")
    register(home, home.root / "vault", "p")
    yield d
    d.stop()


def _wait_for_op(home: Home, op: str) -> list[dict[str, object]]:
    """The vault's kept operations once one named ``op`` is among them (the paused write ends)."""

    def kept() -> list[dict[str, object]]:
        ops: list[dict[str, object]] = vaultctl(home, "ops", "--vault", "p", "--json").json()["ops"]
        return ops if any(o["op"] == op for o in ops) else []

    return wait_until(kept, 60, f"{op} among the kept operations", poll=0.1)


def _timed_out(r: Result) -> None:
    assert r.code == 69, (r.code, r.out, r.err)
    assert "Traceback" not in r.err and r.out == ""
    assert "did not answer note.create within 0.5 s" in r.err, r.err
    assert "may still have been applied" in r.err and "'vaultctl ops'" in r.err, r.err
    assert len(r.err.strip().splitlines()) == 1


def test_a_slow_write_times_out_with_advice_and_lands_later(slow_daemon: Daemon, home: Home) -> None:
    _timed_out(vaultctl(home, "new", "slow-note", "--vault", "p", env=SHORT))
    ops = _wait_for_op(home, "note.create")
    assert [o["op"] for o in ops].count("note.create") == 1, ops
    assert (home.root / "vault" / "slow-note.md").exists()
    assert slow_daemon.proc.poll() is None


async def test_the_shim_says_a_slow_write_may_have_been_applied(slow_daemon: Daemon, home: Home) -> None:
    server = StdioServerParameters(command=sys.executable, args=["-m", "vaultctl.main", "mcp"], env={**home.env, **SHORT}, cwd=str(REPO))
    async with Client(server, mode="legacy", read_timeout_seconds=60) as client:
        result = await client.call_tool("note_create", {"vault": "p", "path": "slow-mcp"})
    assert result.is_error
    text = result.content[0]
    assert text.type == "text" and "did not answer in time" in text.text and "may have been applied" in text.text
    assert [o["op"] for o in _wait_for_op(home, "note.create")].count("note.create") == 1


@pytest.mark.parametrize("value", ["0", "-1", "86400.5", "nan", "inf", "soon"])
def test_a_client_timeout_out_of_bounds_is_a_usage_error(home: Home, value: str) -> None:
    r = vaultctl(home, "status", env={"VAULTD_CLIENT_TIMEOUT": value, "VAULTD_NO_AUTOSTART": "1"})
    assert r.code == 2, (r.code, r.err)
    assert "VAULTD_CLIENT_TIMEOUT must be a number of seconds above 0 and at most 86400" in r.err
    assert "Traceback" not in r.err


def test_a_client_timeout_at_its_upper_bound_is_accepted(daemon: Daemon, home: Home) -> None:
    r = vaultctl(home, "status", "--json", env={"VAULTD_CLIENT_TIMEOUT": "86400"})
    assert r.code == 0, r.err
    assert r.json()["pid"] == daemon.proc.pid
