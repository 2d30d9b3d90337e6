"""``vaultd``: run the daemon in the foreground (``vaultctl`` starts it detached when needed)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

import anyio
import anyio.abc

from protocol.location import resolve_home, resolve_socket
from vaultd import __version__


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="vaultd", description="The vaultd daemon (runs in the foreground).")
    parser.add_argument("--home", type=Path, help="the daemon's home (default: $VAULTD_HOME or XDG data dir)")
    parser.add_argument("--socket", type=Path, help="the socket path (default: $VAULTD_SOCKET, XDG runtime dir, ...)")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    parser.add_argument("--version", action="version", version=f"vaultd {__version__}")
    return parser.parse_args(argv)


async def _run(home: Path, socket_path: Path) -> int:
    from vaultd.daemon import Daemon
    from vaultd.server.listener import bind_socket, inherited_socket

    daemon = Daemon(home, socket_path)

    async def on_signals(*, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            task_status.started()
            async for _ in signals:
                daemon.stop_requested.set()
                return

    async with anyio.create_task_group() as tg:
        # Handlers first, socket second: a SIGTERM that arrives as soon as the socket exists
        # must already mean a graceful stop.
        await tg.start(on_signals)
        inherited = inherited_socket()
        sock = inherited if inherited is not None else bind_socket(socket_path)
        try:
            await daemon.serve(sock)
        finally:
            if inherited is None:
                socket_path.unlink(missing_ok=True)
        tg.cancel_scope.cancel()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    home = (args.home or resolve_home()).absolute()
    socket_path = (args.socket or resolve_socket(home)).absolute()
    from vaultd.content_mode import record_user_umask
    from vaultd.log import configure
    from vaultd.server.listener import StartupError, acquire_home_lock

    record_user_umask(os.umask(0o077))  # private state; vault content keeps the user's umask
    try:
        home_lock = acquire_home_lock(home)
    except StartupError as exc:
        print(f"vaultd: {exc}", file=sys.stderr)
        return 1
    configure(home, args.log_level)
    spec = os.environ.get("VAULTD_FAULTS")
    if spec:
        from vaultd.txn import faults

        try:
            faults.configure(spec)
        except ValueError as exc:
            print(f"vaultd: VAULTD_FAULTS: {exc}", file=sys.stderr)
            return 2
        import structlog

        structlog.get_logger("vaultd").warning("fault injection is on", faults=spec)
    try:
        return anyio.run(_run, home, socket_path)
    except StartupError as exc:
        print(f"vaultd: {exc}", file=sys.stderr)
        return 1
    finally:
        os.close(home_lock)


if __name__ == "__main__":
    sys.exit(main())
