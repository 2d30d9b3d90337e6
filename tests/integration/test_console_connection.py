"""The console's connections to the daemon fail as ``vaultctl``'s do: one error pair
(:class:`~vaultctl.client.CallError` for a refusal, :class:`~vaultctl.client.DaemonUnavailable`
for no answer), whichever client a person is using."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from protocol.errors import ErrorCode
from protocol.methods.common import Empty
from vaultctl.client import CallError, DaemonUnavailable, UnsafeSocket
from vaultctl.console.daemon_connection import DaemonConnection

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.support.harness import Daemon


async def test_a_refusal_is_a_call_error(daemon: Daemon) -> None:
    connection = DaemonConnection(daemon.home.socket)
    try:
        with pytest.raises(CallError) as refused:
            await connection.call("no.such.method", Empty())
        assert refused.value.data.code is ErrorCode.METHOD_NOT_FOUND
        assert (await connection.call("daemon.status", Empty())).startswith(b"{")  # the connection served on
    finally:
        await connection.aclose()


@pytest.fixture
def folder() -> Iterator[Path]:
    """Mode 700 and the user's own: a safe place for a socket (nothing listens in it)."""
    made = Path(tempfile.mkdtemp(prefix="vcl"))
    yield made
    os.chmod(made, 0o700)
    shutil.rmtree(made, ignore_errors=True)


async def test_no_daemon_is_daemon_unavailable(folder: Path) -> None:
    with pytest.raises(DaemonUnavailable) as gone:
        await DaemonConnection(folder / "v.sock").call("daemon.status", Empty())
    assert not isinstance(gone.value, UnsafeSocket) and "no daemon answers" in str(gone.value)
    os.chmod(folder, 0o777)  # anyone could have put a socket here: refused before connecting
    with pytest.raises(UnsafeSocket):
        await DaemonConnection(folder / "v.sock").call("daemon.status", Empty())
