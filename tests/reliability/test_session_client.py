"""The reliability runs' own client: a daemon that dies between accepting a connection and
answering its hello (a crash point during recovery does exactly that) is Died to the run, and
the socket is closed, never left for the garbage collector to warn about."""

from __future__ import annotations

import gc
import socket
import threading
import warnings
from typing import TYPE_CHECKING

from reliability.session import Client, Died

if TYPE_CHECKING:
    from pathlib import Path


def test_a_daemon_that_closes_before_hello_is_died_and_leaks_no_socket(tmp_path: Path) -> None:
    path = tmp_path / "d.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen()

    def accept_and_drop() -> None:
        conn, _ = server.accept()
        conn.close()

    dropper = threading.Thread(target=accept_and_drop)
    dropper.start()
    died = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            Client(path, timeout=30)
        except Died:
            died = True
        gc.collect()
    dropper.join(30)
    server.close()
    assert died
    leaked = [w for w in caught if issubclass(w.category, ResourceWarning)]
    assert not leaked, [str(w.message) for w in leaked]
