"""The service files: systemd's user socket and service units, launchd's user agent.

Rendered from one :class:`ServiceSpec`, for the files ``vaultctl daemon install`` writes (the
paths of this machine) and for the copies shipped in ``systemd/`` and ``launchd/`` (the paths a
``pipx`` or ``uv tool`` install gives, with systemd's ``%h`` and ``%t``), which ``make docs``
writes from here and ``make check`` keeps current.

Why these settings:

- Socket activation. The manager owns the socket (``%t/vaultd/vaultd.sock``, mode 0600 in a
  0700 folder) and starts the daemon on the first connection; the daemon exits after
  ``--idle-exit`` quiet seconds and the next connection starts it again (see
  ``vaultd/server/idle.py``), so an unused daemon costs nothing.
- ``Type=notify``: the start is done when the daemon has read its registry and taken its
  vaults' locks (``READY=1``); a daemon that cannot (another one holds the home) is a failed
  start that ``systemctl --user status`` shows, not a service that seemed to start.
- Restarts only after a failure (``Restart=on-failure``; launchd's ``KeepAlive`` with
  ``SuccessfulExit`` false): an idle exit or ``vaultctl daemon stop`` exits 0 and the socket
  brings the daemon back on demand, where an unconditional keep-alive would defeat the idle exit.
- Hardening: the system is read-only (``ProtectSystem=strict``) except the user's home, the
  vaultd home and the vaults registered outside the home (``ReadWritePaths=``, each vault
  optional with ``-`` so a vault folder that went away does not stop the service); its own
  ``/tmp``; no privilege gain; Unix sockets only (all it serves and all ``sd_notify`` needs).
"""

from __future__ import annotations

import plistlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vaultctl.service.launch import Launch

if TYPE_CHECKING:
    from collections.abc import Callable

LABEL = "org.vaultd"
"""launchd's job label, and the plist's file name."""
SOCKET_NAME = "vaultd"
"""``FileDescriptorName=`` and the ``Sockets`` key: the name the daemon asks its manager for."""
SOCKET_UNIT = "vaultd.socket"
SERVICE_UNIT = "vaultd.service"
DEFAULT_IDLE_EXIT_S = 600.0


class UnitSyntax(str):
    """Text already in unit-file syntax (with specifiers such as ``%h``): written as it is."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class ServiceSpec:
    """What the service files say: how to start vaultd, where its home and socket are."""

    launch: Launch
    home: str
    socket: str
    writable: tuple[str, ...]  #: must exist (the user's home, the vaultd home)
    vaults: tuple[str, ...]  #: writable when present (vaults outside the user's home)
    logs: str  #: launchd's output files go here (systemd keeps the journal)
    idle_exit_s: float = DEFAULT_IDLE_EXIT_S


class BadPath(ValueError):
    """A path that a unit file cannot carry (a newline, a NUL): the message names it."""


def _plain(value: str) -> str:
    if isinstance(value, UnitSyntax):
        return str(value)
    if any(c in value for c in "\0\n\r"):
        raise BadPath(f"{value!r} holds a line break or NUL, which a unit file cannot carry; use another path")
    return value.replace("%", "%%")


def _word(value: str) -> str:
    """One word of ExecStart= or a path list: specifiers and variables escaped, quoted if needed."""
    if isinstance(value, UnitSyntax):
        return str(value)
    text = _plain(value).replace("$", "$$")
    if text and not any(c in text for c in " \t\"'\\;"):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _seconds(value: float) -> str:
    return f"{value:g}"


def systemd_socket(spec: ServiceSpec) -> str:
    return "\n".join(
        [
            "# vaultd's socket: systemd listens here and starts vaultd.service on the first connection.",
            "# Written by 'vaultctl daemon install' (undo: 'vaultctl daemon uninstall').",
            "[Unit]",
            "Description=vaultd socket (Markdown vaults for agents and people)",
            "",
            "[Socket]",
            f"ListenStream={_plain(spec.socket)}",
            f"FileDescriptorName={SOCKET_NAME}",
            "SocketMode=0600",
            "DirectoryMode=0700",
            "RemoveOnStop=yes",
            "",
            "[Install]",
            "WantedBy=sockets.target",
            "",
        ]
    )


def systemd_service(spec: ServiceSpec) -> str:
    command = [*spec.launch.argv, "--home", spec.home, "--idle-exit", _seconds(spec.idle_exit_s)]
    environment = [f"Environment={_word(f'{k}={v}')}" for k, v in spec.launch.env]
    writable = [f"ReadWritePaths={_word(p)}" for p in spec.writable]
    writable += [f"ReadWritePaths={_word('-' + p)}" for p in spec.vaults]
    return "\n".join(
        [
            "# vaultd, started by vaultd.socket on demand; it exits after --idle-exit quiet seconds.",
            "# Written by 'vaultctl daemon install' (undo: 'vaultctl daemon uninstall').",
            "[Unit]",
            "Description=vaultd (Markdown vaults for agents and people)",
            f"Requires={SOCKET_UNIT}",
            f"After={SOCKET_UNIT}",
            "",
            "[Service]",
            "Type=notify",
            "NotifyAccess=main",
            f"ExecStart={' '.join(_word(a) for a in command)}",
            *environment,
            "Restart=on-failure",
            "RestartSec=2",
            "TimeoutStopSec=20",
            "ProtectSystem=strict",
            *writable,
            "PrivateTmp=yes",
            "NoNewPrivileges=yes",
            "RestrictAddressFamilies=AF_UNIX",
            "RestrictRealtime=yes",
            "RestrictSUIDSGID=yes",
            "LockPersonality=yes",
            "SystemCallArchitectures=native",
            "",
            "[Install]",
            f"Also={SOCKET_UNIT}",
            "",
        ]
    )


def launchd_plist(spec: ServiceSpec) -> str:
    """The user agent; launchd expands nothing, so every path is absolute."""
    agent: dict[str, object] = {
        "Label": LABEL,
        "ProgramArguments": [*spec.launch.argv, "--home", spec.home, "--idle-exit", _seconds(spec.idle_exit_s)],
        "Sockets": {
            SOCKET_NAME: {
                "SockPathName": spec.socket,
                "SockPathMode": 0o600,
                "SockType": "stream",
                "SockFamily": "Unix",
            }
        },
        "KeepAlive": {"SuccessfulExit": False},
        "ProcessType": "Adaptive",
        "StandardOutPath": f"{spec.logs}/launchd.out",
        "StandardErrorPath": f"{spec.logs}/launchd.out",
    }
    if spec.launch.env:
        agent["EnvironmentVariables"] = dict(spec.launch.env)
    return plistlib.dumps(agent, sort_keys=True).decode("utf-8")


# -- the shipped copies -------------------------------------------------------------------------

SHIPPED_HOME_MAC = "/Users/USERNAME"
"""launchd expands neither ``~`` nor variables: the shipped plist names a placeholder home that
``vaultctl daemon install --launchd`` replaces with the real one."""


def shipped_systemd_spec() -> ServiceSpec:
    """The units in ``systemd/``: for a ``pipx`` / ``uv tool`` install (``~/.local/bin/vaultd``)."""
    return ServiceSpec(
        launch=Launch((UnitSyntax("%h/.local/bin/vaultd"),)),
        home=UnitSyntax("%h/.local/share/vaultd"),
        socket=UnitSyntax("%t/vaultd/vaultd.sock"),
        writable=(UnitSyntax("%h"),),
        vaults=(),
        logs=UnitSyntax("%h/.local/share/vaultd/logs"),
    )


def shipped_launchd_spec() -> ServiceSpec:
    """The plist in ``launchd/``: the same install on macOS, where no runtime folder exists, so the
    socket is the vaultd home's ``run/vaultd.sock`` (as ``protocol.location`` resolves it there)."""
    home = f"{SHIPPED_HOME_MAC}/.local/share/vaultd"
    return ServiceSpec(
        launch=Launch((f"{SHIPPED_HOME_MAC}/.local/bin/vaultd",)),
        home=home,
        socket=f"{home}/run/vaultd.sock",
        writable=(),
        vaults=(),
        logs=f"{home}/logs",
    )


SHIPPED: dict[str, Callable[[], str]] = {
    "systemd/vaultd.socket": lambda: systemd_socket(shipped_systemd_spec()),
    "systemd/vaultd.service": lambda: systemd_service(shipped_systemd_spec()),
    "launchd/org.vaultd.plist": lambda: launchd_plist(shipped_launchd_spec()),
}
"""The files shipped in the repository, by path, and how each is rendered."""
