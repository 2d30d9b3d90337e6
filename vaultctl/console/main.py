"""The console process: an HTTP server on 127.0.0.1, and the daemon's control pipe on stdio.

The daemon starts it (``python -m vaultctl.console``) with ``VAULTD_SOCKET`` naming the socket to
call back on. It binds a free port on 127.0.0.1 (never another address), says where it listens
on stdout, then answers each token request from the daemon, and ends when its stdin closes: the
daemon stopped it, or the daemon is gone.

Its log goes to stderr, which the daemon points at ``$VAULTD_HOME/logs/console.log``: start,
stop, refusals and their reasons; never a token, a cookie, a query or a note's text.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from typing import TYPE_CHECKING
from urllib.parse import quote

import anyio
import msgspec
import uvicorn

from protocol.console_control import MAX_CONTROL_LINE, Mint, Minted, Ready, decode_to_console, encode_line
from protocol.location import resolve_home, resolve_socket
from vaultctl.console.daemon_connection import DaemonConnection
from vaultctl.console.sessions import Sessions
from vaultctl.console.web import Console

if TYPE_CHECKING:
    from typing import BinaryIO

log = logging.getLogger("vaultd.console")

LISTEN_HOST = "127.0.0.1"
SHUTDOWN_GRACE_S = 2  #: open pages' feeds are cut after this once the console is told to stop
MAX_HTTP_CONNECTIONS = 64


def bind_loopback() -> socket.socket:
    """A listening socket on 127.0.0.1 at a port the kernel picks (so, a free one)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((LISTEN_HOST, 0))
    sock.listen(64)
    sock.setblocking(False)
    return sock


def login_url(origin: str, token: str, vault: str | None) -> str:
    """The address with the token in its fragment: a browser never sends a fragment to a server."""
    fragment = f"token={token}" + (f"&vault={quote(vault, safe='')}" if vault else "")
    return f"{origin}/login#{fragment}"


def _send(out: BinaryIO, message: Ready | Minted) -> None:
    out.write(encode_line(message))
    out.flush()


async def _control(sessions: Sessions, origin: str, server: uvicorn.Server) -> None:
    """Answer the daemon's token requests until stdin closes, then stop the server."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    try:
        while True:
            line = await anyio.to_thread.run_sync(stdin.readline, MAX_CONTROL_LINE + 1, abandon_on_cancel=True)
            if not line:
                log.info("the daemon closed the control pipe; stopping")
                return
            try:
                mint: Mint = decode_to_console(line.rstrip(b"\n"))
            except msgspec.DecodeError:
                log.error("an unreadable control line; stopping")
                return
            _send(stdout, Minted(url=login_url(origin, sessions.grant(mint.ttl_s, mint.vault), mint.vault)))
    finally:
        server.should_exit = True


async def serve() -> int:
    socket_path = resolve_socket(resolve_home())
    sock = bind_loopback()
    origin = f"http://{LISTEN_HOST}:{sock.getsockname()[1]}"
    sessions = Sessions()
    daemon = DaemonConnection(socket_path)
    config = uvicorn.Config(
        Console(origin, sessions, daemon).app(),
        log_config=None,
        access_log=False,  # request lines are not logged at all
        server_header=False,
        date_header=False,
        proxy_headers=False,
        lifespan="off",
        ws="none",
        http="h11",
        limit_concurrency=MAX_HTTP_CONNECTIONS,
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
    )
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        while not server.started:
            if server.should_exit:
                return 1
            await anyio.sleep(0.01)
        _send(sys.stdout.buffer, Ready(origin=origin, pid=os.getpid()))
        log.info("listening on %s", origin)
        await _control(sessions, origin, server)
    await daemon.aclose()
    log.info("stopped")
    return 0


def main() -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return anyio.run(serve)
