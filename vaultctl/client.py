"""A blocking JSON-RPC client for the daemon's socket, with autostart.

Blocking sockets and no anyio: ``vaultctl`` is started per command, so its import path must stay
light. Errors from the daemon arrive as :class:`CallError` carrying the stable error name.
"""

from __future__ import annotations

import itertools
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from protocol.envelope import Request, decode_response, encode
from protocol.errors import ErrorCode, ErrorData
from protocol.framing import MAX_FRAME_BYTES, LineBuffer, OversizedFrame
from protocol.location import resolve_home, resolve_socket
from protocol.methods.common import PROTOCOL_VERSION, Channel, Params
from protocol.methods.daemon import HelloParams, HelloResult
from protocol.table import METHODS

T = TypeVar("T")

AUTOSTART_WAIT_S = 5.0
CLIENT_VERSION = "0.1.0"


class CallError(Exception):
    """The daemon refused or failed a call; ``data.code`` is the stable error name."""

    def __init__(self, data: ErrorData) -> None:
        super().__init__(data.message)
        self.data = data


class DaemonUnavailable(Exception):
    """No daemon answered (and autostart was off or did not bring one up)."""


class Client:
    def __init__(self, sock: socket.socket, channel: Channel, client_name: str) -> None:
        self._sock = sock
        self._buffer = LineBuffer(MAX_FRAME_BYTES * 64)  # results may exceed the request bound
        self._ids = itertools.count(1)
        self._pending: list[bytes] = []
        self.hello: HelloResult = self.call("hello", HelloParams(
            client=client_name, version=CLIENT_VERSION, channel=channel, protocol=PROTOCOL_VERSION))

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, method: str, params: Params | dict[str, Any] | None = None) -> Any:
        """Call ``method`` and return its result decoded into the table's result Struct."""
        spec = METHODS[method]
        raw = self.call_raw(method, params)
        return msgspec.json.decode(raw, type=spec.result)

    def call_raw(self, method: str, params: Params | dict[str, Any] | None = None) -> bytes:
        request_id = next(self._ids)
        payload = msgspec.Raw(msgspec.json.encode(params if params is not None else {}))
        self._sock.sendall(encode(Request(jsonrpc="2.0", method=method, params=payload, id=request_id)))
        while True:
            frame = self._next_frame()
            response = decode_response(frame)
            if response.id != request_id:
                continue  # a notification or a stale reply
            if response.error is not None:
                data = response.error.data or ErrorData(
                    code=ErrorCode.from_rpc_code(response.error.code), message=response.error.message)
                raise CallError(data)
            return bytes(response.result)

    def _next_frame(self) -> bytes:
        while not self._pending:
            chunk = self._sock.recv(1 << 16)
            if not chunk:
                raise DaemonUnavailable("the daemon closed the connection")
            for frame in self._buffer.feed(chunk):
                if isinstance(frame, OversizedFrame):
                    raise DaemonUnavailable("the daemon sent an oversized frame")
                self._pending.append(frame)
        return self._pending.pop(0)


def _connect(path: Path, timeout: float | None) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    return sock


def _spawn_daemon(home: Path, socket_path: Path) -> None:
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    logs = home / "logs"
    logs.mkdir(exist_ok=True, mode=0o700)
    with open(logs / "vaultd.stdout", "ab") as out:
        subprocess.Popen(
            [sys.executable, "-m", "vaultd.main", "--home", str(home), "--socket", str(socket_path)],
            stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True, close_fds=True,
        )


def connect(channel: Channel = Channel.CLI, *, client_name: str = "vaultctl", autostart: bool | None = None,
            timeout: float | None = 60.0) -> Client:
    """Open a session with the daemon, starting it detached when none answers."""
    home = resolve_home()
    socket_path = resolve_socket(home)
    sock = _connect(socket_path, timeout)
    if sock is None:
        if autostart is None:
            autostart = os.environ.get("VAULTD_NO_AUTOSTART", "") not in ("1", "true", "yes")
        if not autostart:
            raise DaemonUnavailable(
                f"no daemon answers on {socket_path}; start it with 'vaultctl daemon start' "
                "(autostart is off: VAULTD_NO_AUTOSTART is set)")
        _spawn_daemon(home, socket_path)
        deadline = time.monotonic() + AUTOSTART_WAIT_S
        while sock is None and time.monotonic() < deadline:
            time.sleep(0.02)
            sock = _connect(socket_path, timeout)
        if sock is None:
            raise DaemonUnavailable(
                f"started vaultd, but it did not answer on {socket_path} within {AUTOSTART_WAIT_S:.0f} s; "
                f"see {home / 'logs' / 'vaultd.stdout'}")
    return Client(sock, channel, client_name)
