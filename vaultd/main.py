"""``vaultd``: run the daemon in the foreground (``vaultctl`` starts it detached when needed).

Before the event loop starts, the process is made ready here: the user's umask recorded, the home
locked, logging configured (JSON lines to ``$VAULTD_HOME/logs/vaultd.log``, rotated and bounded;
human lines in the foreground; callers log event names and ids, never note bodies, frontmatter
values or queries), and the descriptor limit raised.
"""

from __future__ import annotations

import argparse
import logging
import logging.handlers
import os
import resource
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.abc

from protocol.location import resolve_home, resolve_socket
from vaultd import __version__

if TYPE_CHECKING:
    from vaultd.server.listener import StartupError


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="vaultd", description="The vaultd daemon (runs in the foreground).")
    parser.add_argument("--home", type=Path, help="the daemon's home (default: $VAULTD_HOME or XDG data dir)")
    parser.add_argument("--socket", type=Path, help="the socket path (default: $VAULTD_SOCKET, XDG runtime dir, ...)")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    parser.add_argument(
        "--idle-exit",
        type=_idle_exit,
        default=0.0,
        metavar="SECONDS",
        help="when a service manager passed the socket (systemd, launchd): exit after this many quiet seconds; 0, never (default)",
    )
    parser.add_argument("--version", action="version", version=f"vaultd {__version__}")
    return parser.parse_args(argv)


def _idle_exit(text: str) -> float:
    from vaultd.server.idle import parse_idle_exit

    try:
        return parse_idle_exit(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


#: The daemon never draws for a terminal: its log is JSON lines and its tracebacks plain text. But
#: structlog imports rich whenever it can, to offer pretty tracebacks, and that import was a
#: quarter of the daemon's start (80 ms of 310). Marked absent before structlog is first imported,
#: in the daemon's process only; vaultctl, which draws with rich, is another process. Likewise
#: greenlet, which structlog's deprecated thread-local context imports whenever it is installed
#: (a test tool brings it); the daemon runs no greenlets.
NOT_IN_THE_DAEMON = ("rich", "greenlet")

#: How long a thread may keep the GIL while another waits for it. Vault-wide work (a lint's rules,
#: a link snapshot of every note) runs in a worker thread in pure Python, and each time the event
#: loop wants the GIL back (every reply, every hop of a write to and from its worker thread) it
#: waits up to this long: at the interpreter's 5 ms, a write beside a 20,000-note lint waited
#: p95 677 ms on a busy 2-core machine, at 1 ms 404 ms (docs/performance.md). The cost is more
#: switches between two busy threads, which the daemon rarely has.
SWITCH_INTERVAL_S = 0.001


def _leave_out_terminal_drawing() -> None:
    for name in NOT_IN_THE_DAEMON:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]  # None: "import rich" raises ImportError


async def _run(home: Path, socket_path: Path, idle_exit_s: float) -> int:
    import structlog

    from protocol.methods.service import Activation
    from vaultd.daemon import Daemon
    from vaultd.server.activation import inherited
    from vaultd.server.listener import bind_socket
    from vaultd.server.notify import Notifier

    # Both read (and remove) their variables before anything can start a child process.
    notifier = Notifier.from_environment()
    passed = inherited()
    if passed is not None and passed.path is not None:
        socket_path = Path(passed.path)  # the socket the manager listens on is the one to report
    if passed is None and idle_exit_s:
        structlog.get_logger("vaultd").info("--idle-exit applies only to a socket-activated daemon; staying")
    daemon = Daemon(
        home,
        socket_path,
        activation=passed.manager if passed is not None else Activation.SELF,
        idle_exit_s=idle_exit_s,
        notifier=notifier,
    )

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
        sock = passed.sock if passed is not None else bind_socket(socket_path)
        try:
            await daemon.serve(sock)
        finally:
            if passed is None:  # an inherited socket is the manager's: it stays, listening
                socket_path.unlink(missing_ok=True)  # no await: a cancelled one would leave the file
        tg.cancel_scope.cancel()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    home = (args.home or resolve_home()).absolute()
    socket_path = (args.socket or resolve_socket(home)).absolute()
    _leave_out_terminal_drawing()
    import structlog

    from vaultd.content_mode import record_user_umask
    from vaultd.server.listener import StartupError, acquire_home_lock

    record_user_umask(os.umask(0o077))  # private state; vault content keeps the user's umask
    try:
        home_lock = acquire_home_lock(home)
    except StartupError as exc:
        print(f"vaultd: {exc}", file=sys.stderr)
        return exc.status
    configure_logging(home, args.log_level)
    spec = os.environ.get("VAULTD_FAULTS")
    if spec:
        from vaultd import faults

        try:
            faults.configure(spec)
        except ValueError as exc:
            print(f"vaultd: VAULTD_FAULTS: {exc}", file=sys.stderr)
            return 2
        structlog.get_logger("vaultd").warning("fault injection is on", faults=spec)
    soft, hard = raise_fd_limit()
    structlog.get_logger("vaultd").info("descriptor limit", soft=soft, hard=hard)
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        return anyio.run(_run, home, socket_path, args.idle_exit)
    except BaseException as exc:  # only a StartupError is unwrapped; the rest re-raised
        startup = find_startup_error(exc)
        if startup is None:
            raise
        print(f"vaultd: {startup}", file=sys.stderr)
        return startup.status
    finally:
        os.close(home_lock)


LOG_MAX_BYTES = 5 * 1024 * 1024
LOG_BACKUPS = 3


def configure_logging(home: Path, level: str = "info", *, foreground: bool = True) -> Path:
    """Send the daemon's log to ``<home>/logs/vaultd.log`` as JSON lines, and to a terminal in the
    foreground; the log file's path. structlog is imported here, after
    :func:`_leave_out_terminal_drawing`, never at the module's top."""
    import structlog

    logs = home / "logs"
    logs.mkdir(parents=True, exist_ok=True, mode=0o700)
    log_file = logs / "vaultd.log"
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    file_handler = logging.handlers.RotatingFileHandler(log_file, maxBytes=LOG_MAX_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8")
    file_handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                structlog.processors.JSONRenderer(),
            ],
            foreign_pre_chain=shared,
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [file_handler]
    if foreground and sys.stderr.isatty():
        console = logging.StreamHandler(sys.stderr)
        console.setFormatter(
            structlog.stdlib.ProcessorFormatter(
                processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, structlog.dev.ConsoleRenderer(colors=False)],
                foreign_pre_chain=shared,
            )
        )
        root.addHandler(console)
    root.setLevel(level.upper())
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    return log_file


#: where the hard limit is "unlimited" (the kernel still caps descriptors at nr_open)
UNLIMITED_TARGET = 1 << 20


def raise_fd_limit() -> tuple[int, int]:
    """Raise the soft RLIMIT_NOFILE to the hard one where the system allows; the limits after.

    Each connection costs a descriptor, and so do the vault watchers, index caches and journal
    files. Login sessions often start with a soft limit of 1024 under a much higher hard one; the
    daemon may raise its own soft limit to the hard one without privileges, so it does, and the
    connection cap (``max_connections``) is what bounds clients, not an accident of the session.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = UNLIMITED_TARGET if hard == resource.RLIM_INFINITY else hard
    for candidate in (target, 65536, 10240):  # macOS refuses more than OPEN_MAX
        if candidate <= soft:
            break
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (candidate, hard))
            break
        except (ValueError, OSError):
            continue
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def find_startup_error(exc: BaseException) -> StartupError | None:
    """The StartupError that ended the start, at any depth of (nested) exception groups.

    Task groups wrap what their tasks raise, so a StartupError raised inside the event loop
    arrives as an ExceptionGroup; the user should see its one line, not the group's traceback.
    """
    from vaultd.server.listener import StartupError  # imported late to keep --version fast

    if isinstance(exc, StartupError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := find_startup_error(inner)) is not None:
                return found
    return None


if __name__ == "__main__":
    sys.exit(main())
