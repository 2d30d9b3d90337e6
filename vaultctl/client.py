"""A blocking JSON-RPC client for the daemon's socket, with autostart.

Blocking sockets and no anyio: ``vaultctl`` is started per command, so its import path must stay
light. Errors from the daemon arrive as :class:`CallError` carrying the stable error name; every
way of not getting an answer is a :class:`DaemonUnavailable`::

    DaemonUnavailable     no daemon answered, or the connection broke
    ├── UnsafeSocket      the socket's folder or the process behind it is not the user's
    └── ReplyTimeout      no reply within the client timeout (a write may still be applied)

Nothing is sent, not even ``hello``, before :mod:`vaultctl.peer` has approved the socket's folder
and the uid of the process listening on it.
"""

from __future__ import annotations

import itertools
import os
import socket
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from protocol.envelope import ErrorObject, Incoming, Request, decode_incoming, encode
from protocol.errors import ErrorCode, ErrorData
from protocol.framing import MAX_FRAME_BYTES, LineBuffer, OversizedFrame
from protocol.limits import MAX_NOTE_BYTES, MAX_REPLY_FRAME_BYTES, describe
from protocol.location import resolve_home, resolve_socket
from protocol.methods.common import PROTOCOL_VERSION, Channel, Params
from protocol.methods.service import HELLO, HelloParams, HelloResult
from protocol.version import VERSION
from vaultctl import peer

if TYPE_CHECKING:
    from pathlib import Path

    from protocol.methods.spec import MethodSpec

P = TypeVar("P", bound=Params)
R = TypeVar("R")

AUTOSTART_WAIT_S = 5.0
CLIENT_VERSION = VERSION
TIMEOUT_ENV = "VAULTD_CLIENT_TIMEOUT"
DEFAULT_TIMEOUT_S = 60.0
MAX_TIMEOUT_S = 86400.0

#: Told each notification that arrives while a call waits for its reply: (method, raw params).
OnNotification = Callable[[str, bytes], None]


class CallError(Exception):
    """The daemon answered the call with an error; ``data.code`` is the stable error name (its
    ``exit_status`` is the command's), ``data.issues`` the rules behind it. Raised by
    :meth:`Client.call` and :meth:`Client.call_raw`, and by the client itself for a request over
    the frame bound (LIMIT, nothing sent). The connection stays usable: the CLI prints the refusal
    and exits with its status, the MCP shim hands it to the agent as a tool error."""

    def __init__(self, data: ErrorData) -> None:
        super().__init__(data.message)
        self.data = data


class DaemonUnavailable(Exception):
    """No daemon answered (and autostart was off or did not bring one up), or it stopped answering:
    the socket is absent or refused, the connection broke, or the daemon sent something that is
    not a JSON-RPC frame. Raised by :func:`connect` and by a call on a broken connection. The CLI
    exits 69 (EX_UNAVAILABLE) with the message; start the daemon (``vaultctl daemon start``) or
    see its log, then retry."""


class UnsafeSocket(DaemonUnavailable):
    """The socket is not provably the user's own daemon; nothing was sent to it. Raised by
    :func:`connect` when :mod:`vaultctl.peer` refuses the socket's folder or the uid listening on
    it; the message says which places are safe. Move the socket (or the process squatting on it)
    away; retrying as is never helps."""


class ReplyTimeout(DaemonUnavailable):
    """The daemon did not reply within the client timeout (``$VAULTD_CLIENT_TIMEOUT``). Raised by
    a call. A write may still be applied after the client gave up (``maybe_applied``): check
    ``vaultctl ops`` before retrying it; a read can be retried, with more time if need be."""

    def __init__(self, method: str, timeout: float | None, maybe_applied: bool) -> None:
        waited = f" within {timeout:g} s" if timeout is not None else ""
        if maybe_applied:
            advice = "the operation may still have been applied; check with 'vaultctl ops' before retrying"
        else:
            advice = f"try again, or allow more time with {TIMEOUT_ENV}=SECONDS"
        super().__init__(f"the daemon did not answer {method}{waited}; {advice}")
        self.maybe_applied = maybe_applied


class BadSetting(Exception):
    """A client setting in the environment is not usable; the message names it and its bounds.
    Raised by :func:`client_timeout` (and so by :func:`connect`) before any connection is made;
    the CLI exits 2 (usage). Fix or unset the variable."""


def client_timeout(environ: dict[str, str] | None = None) -> float:
    """Seconds to wait for each reply: ``$VAULTD_CLIENT_TIMEOUT``, else 60.

    Raises:
        BadSetting: the value is not a number of seconds in (0, 86400].
    """
    raw = (os.environ if environ is None else environ).get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value <= MAX_TIMEOUT_S:  # also false for nan
        raise BadSetting(f"{TIMEOUT_ENV} must be a number of seconds above 0 and at most {MAX_TIMEOUT_S:g}, not {raw!r}")
    return value


class Client:
    def __init__(self, sock: socket.socket, channel: Channel, client_name: str, session: str | None = None) -> None:
        self._sock = sock
        self._buffer = LineBuffer(MAX_REPLY_FRAME_BYTES)
        self._ids = itertools.count(1)
        self._pending: list[bytes] = []
        self.hello: HelloResult = self.call(
            HELLO,
            HelloParams(client=client_name, version=CLIENT_VERSION, channel=channel, protocol=PROTOCOL_VERSION, session=session),
        )

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, spec: MethodSpec[P, R], params: P, on_notification: OnNotification | None = None) -> R:
        """Call ``spec``'s method and return its result decoded into the spec's result type.

        Raises:
            CallError, ReplyTimeout, DaemonUnavailable: as :meth:`call_raw`.
        """
        result: R = msgspec.json.decode(self.call_raw(spec.name, params, on_notification), type=spec.result)
        return result

    def call_raw(self, method: str, params: Params | dict[str, Any] | None = None, on_notification: OnNotification | None = None) -> bytes:
        """Send one request and wait for its reply; notifications that come first go to ``on_notification``.

        Raises:
            CallError: the daemon refused or failed the call.
            ReplyTimeout: no reply within the socket's timeout.
            DaemonUnavailable: the connection broke or the daemon sent garbage.
        """
        request_id = next(self._ids)
        payload = msgspec.Raw(msgspec.json.encode(params if params is not None else {}))
        frame = encode(Request(jsonrpc="2.0", method=method, params=payload, id=request_id))
        if len(frame) - 1 > MAX_FRAME_BYTES:  # the daemon would discard it unread (the newline is not counted)
            raise CallError(ErrorData(code=ErrorCode.LIMIT, message=_over_frame(method, len(frame) - 1)))
        try:
            self._sock.sendall(frame)
            return self._reply(request_id, on_notification)
        except TimeoutError as exc:
            raise ReplyTimeout(method, self._sock.gettimeout(), _maybe_applied(method)) from exc
        except OSError as exc:
            tail = "; the operation may have been applied: check with 'vaultctl ops'" if _maybe_applied(method) else ""
            raise DaemonUnavailable(f"the connection to the daemon broke during {method}: {exc.strerror or exc}{tail}") from exc

    def _next_incoming(self) -> Incoming:
        """The next frame, decoded as a reply or a notification.

        Raises:
            DaemonUnavailable: the connection closed, or the frame is oversized or not JSON-RPC.
        """
        frame = self._next_frame()
        try:
            return decode_incoming(frame)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise DaemonUnavailable(f"the daemon sent a frame that is not JSON-RPC: {exc}") from exc

    def _reply(self, request_id: int, on_notification: OnNotification | None = None) -> bytes:
        """The result of request ``request_id``, passing notifications on and skipping stale replies.

        Raises:
            CallError: the daemon answered this request (or a frame it could not read) with an error.
        """
        while True:
            response = self._next_incoming()
            if response.is_notification and on_notification is not None:
                on_notification(response.method or "", bytes(response.params))
                continue
            if response.id is None and response.error is not None:
                # An error the daemon could not give an id (a frame it discarded unread): with one
                # request outstanding, it is this request's answer.
                raise CallError(_error_data(response.error))
            if response.id != request_id:
                continue  # a notification or a stale reply
            if response.error is not None:
                raise CallError(_error_data(response.error))
            return bytes(response.result)

    def notifications(self) -> Iterator[tuple[str, bytes]]:
        """Every notification from now on, as (method, raw params), waiting as long as it takes.

        Raises:
            DaemonUnavailable: the daemon closed the connection or sent something not JSON-RPC.
        """
        self._sock.settimeout(None)
        while True:
            incoming = self._next_incoming()
            if incoming.is_notification:
                yield incoming.method or "", bytes(incoming.params)

    def _next_frame(self) -> bytes:
        """One whole frame, reading the socket only when none is buffered: a read may carry several.

        Raises:
            DaemonUnavailable: the daemon closed the connection, or sent a frame over the bound.
        """
        while not self._pending:
            chunk = self._sock.recv(1 << 16)
            if not chunk:
                raise DaemonUnavailable("the daemon closed the connection")
            for frame in self._buffer.feed(chunk):
                if isinstance(frame, OversizedFrame):
                    raise DaemonUnavailable("the daemon sent an oversized frame")
                self._pending.append(frame)
        return self._pending.pop(0)


def _error_data(error: ErrorObject) -> ErrorData:
    return error.data or ErrorData(code=ErrorCode.from_rpc_code(error.code), message=error.message)


def _over_frame(method: str, size: int) -> str:
    bound, note = describe(MAX_FRAME_BYTES), describe(MAX_NOTE_BYTES)
    return (
        f"the {method} request is {size} bytes as JSON, over the {bound} bound on one request; nothing was sent (a note is at most {note})"
    )


def _maybe_applied(method: str) -> bool:
    """Could a call of ``method`` that got no answer have changed something?"""
    from protocol.table import METHODS  # the whole table: only when a call went wrong

    spec = METHODS.get(method)
    return spec is None or not spec.read_only


def _connect(path: Path, timeout: float) -> socket.socket | None:
    """A connection to the user's own daemon at ``path``, or None when nothing listens there.

    Raises:
        UnsafeSocket: the folder or the listener is not the user's; nothing was sent.
    """
    if problem := peer.check_folder(path):
        raise UnsafeSocket(f"refusing the daemon socket: {problem}; {_SAFE_PLACES}")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    except BaseException:
        sock.close()
        raise
    if problem := peer.check_peer(sock, path):
        sock.close()
        raise UnsafeSocket(f"refusing the daemon socket: {problem}; {_SAFE_PLACES}")
    return sock


_SAFE_PLACES = "keep it in a folder only you can write to (unset VAULTD_SOCKET and XDG_RUNTIME_DIR to use the default in your vaultd home)"


def _spawn_daemon(home: Path, socket_path: Path) -> None:
    """Start this installation's vaultd detached, unless a service manager owns the home's daemon.

    Raises:
        DaemonUnavailable: ``vaultctl daemon install`` gave the daemon to systemd or launchd; a
            second daemon beside it would take its home or its socket. The message says how to
            start the managed one.
    """
    import subprocess

    from vaultctl.service.launch import daemon_launch
    from vaultctl.service.record import managed_refusal

    if refusal := managed_refusal(home, socket_path):
        raise DaemonUnavailable(refusal)
    launch = daemon_launch()
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    logs = home / "logs"
    logs.mkdir(exist_ok=True, mode=0o700)
    with open(logs / "vaultd.stdout", "ab") as out:
        subprocess.Popen(
            [*launch.argv, "--home", str(home), "--socket", str(socket_path)],
            env={**os.environ, **dict(launch.env)},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
            close_fds=True,
        )


AGENT_MARKERS = (
    ("CLAUDECODE", "Claude Code"),
    ("CODEX_SANDBOX", "Codex"),
    ("CODEX_THREAD_ID", "Codex"),
    ("GEMINI_CLI", "Gemini CLI"),
    ("CURSOR_AGENT", "Cursor"),
)
"""Variables agent hosts set for the processes their tools start (Claude Code ``CLAUDECODE=1``,
Codex ``CODEX_SANDBOX``/``CODEX_THREAD_ID``, Gemini CLI ``GEMINI_CLI=1``, Cursor
``CURSOR_AGENT=1``)."""


def agent_host(environ: Mapping[str, str] | None = None) -> str | None:
    """The agent host this process was started under, from its markers, or None.

    A ``vaultctl`` an agent runs through its host's shell tool is the agent speaking, whatever
    command it typed: it says so in ``hello`` (the agent's channel) and the daemon attributes
    and gates it as the agent's. This is an honest default, not a boundary: a process can clear
    its environment. The host's sandbox, which keeps the socket out of reach, is what enforces.
    """
    env = os.environ if environ is None else environ
    return next((title for key, title in AGENT_MARKERS if env.get(key, "") not in ("", "0")), None)


def connect(
    channel: Channel = Channel.CLI,
    *,
    client_name: str = "vaultctl",
    autostart: bool | None = None,
    timeout: float | None = None,
    session: str | None = None,
) -> Client:
    """Open a session with the daemon, starting it detached when none answers.

    ``timeout`` bounds the wait for each reply (default: :func:`client_timeout`).

    Raises:
        DaemonUnavailable: no daemon could be reached (:class:`UnsafeSocket` when the socket is
            not the user's own: then autostart is refused too).
        BadSetting: ``$VAULTD_CLIENT_TIMEOUT`` is not usable.
    """
    if timeout is None:
        timeout = client_timeout()
    home = resolve_home()
    socket_path = resolve_socket(home)
    sock = _connect(socket_path, timeout)
    if sock is None:
        if autostart is None:
            autostart = os.environ.get("VAULTD_NO_AUTOSTART", "") not in ("1", "true", "yes")
        if not autostart:
            raise DaemonUnavailable(
                f"no daemon answers on {socket_path}; start it with 'vaultctl daemon start' (autostart is off: VAULTD_NO_AUTOSTART is set)"
            )
        _spawn_daemon(home, socket_path)
        deadline = time.monotonic() + AUTOSTART_WAIT_S
        while sock is None and time.monotonic() < deadline:
            time.sleep(0.02)
            sock = _connect(socket_path, timeout)
        if sock is None:
            raise DaemonUnavailable(
                f"started vaultd, but it did not answer on {socket_path} within {AUTOSTART_WAIT_S:.0f} s; "
                f"see {home / 'logs' / 'vaultd.stdout'}"
            )
    host = agent_host() if channel is Channel.CLI else None
    if host is not None:
        channel, client_name = Channel.MCP, f"{client_name} (in {host})"
    return Client(sock, channel, client_name, session)
