"""The service's own methods: open a session (hello), the daemon's status and stop, doctor.

Named for the service rather than "daemon" so it is not mistaken for ``vaultd.daemon``, the
process that answers them.
"""

from __future__ import annotations

import enum
from typing import Annotated

import msgspec

from protocol.methods.common import PROTOCOL_VERSION, Channel, Empty, Params, Result, VaultId
from protocol.methods.spec import Effect, Trait, spec
from protocol.methods.vaults import VaultHealth

ShortText = Annotated[str, msgspec.Meta(min_length=1, max_length=128)]


class HelloParams(Params):
    client: Annotated[ShortText, msgspec.Meta(description="The client's name, for the daemon's log (e.g. vaultctl).")]
    version: Annotated[ShortText, msgspec.Meta(description="The client's version, for the daemon's log.")]
    channel: Annotated[
        Channel, msgspec.Meta(description="Who is calling: cli, mcp (an agent) or editor; each vault's write policy is per channel.")
    ]
    protocol: Annotated[
        int, msgspec.Meta(ge=1, le=1000, description="The newest protocol version the client speaks; the daemon answers the one used.")
    ] = PROTOCOL_VERSION
    session: (
        Annotated[
            str,
            msgspec.Meta(
                pattern=r"^[A-Za-z0-9_.:-]{1,64}$",
                description="An agent session id (the MCP shim sends one per host session); what one session did undoes as a unit.",
            ),
        ]
        | None
    ) = None


class HelloResult(Result):
    server: str
    version: str
    protocol: int
    methods: list[str]


class Activation(enum.StrEnum):
    """Who opened the daemon's listening socket."""

    SELF = "self"  #: the daemon bound it (started by vaultctl or by hand) and removes it at exit
    SYSTEMD = "systemd"  #: vaultd.socket; the daemon was started on a connection and may exit when idle
    LAUNCHD = "launchd"  #: the Sockets entry of org.vaultd.plist; likewise


class DaemonStatus(Result):
    pid: int
    uptime_s: float
    version: str
    socket: str
    home: str
    vaults: list[VaultHealth]
    activation: Activation = Activation.SELF
    idle_exit_s: float | None = None  #: exits after this many quiet seconds (socket-activated only)
    config_problem: Annotated[
        str | None,
        msgspec.Meta(description="Why config.json cannot be used (then no vault is served), naming the file; null when it can."),
    ] = None


class StopResult(Result):
    stopping: bool


class Level(enum.StrEnum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


class Finding(msgspec.Struct, kw_only=True):
    level: Level
    check: str
    finding: str


class DoctorParams(Params):
    vault: Annotated[VaultId | None, msgspec.Meta(description="Check only this vault; omitted, every vault.")] = None


class DoctorResult(Result):
    verdict: Level
    findings: list[Finding]


HELLO = spec(
    "hello",
    HelloParams,
    HelloResult,
    "Open a session: name the client and channel, negotiate the protocol version.",
    Effect.READ,
    Trait.OPENS_SESSION,
)
DAEMON_STATUS = spec(
    "daemon.status",
    Empty,
    DaemonStatus,
    "The daemon's version, uptime and each vault's health. Also its pid, socket and home.",
    Effect.READ,
    Trait.MCP,
)
DAEMON_STOP = spec("daemon.stop", Empty, StopResult, "Stop the daemon gracefully.", Effect.IDEMPOTENT_WRITE)
DOCTOR = spec(
    "doctor",
    DoctorParams,
    DoctorResult,
    "Check the home, the socket, the config and every vault; a verdict and findings.",
    Effect.READ,
)
SPECS = (HELLO, DAEMON_STATUS, DAEMON_STOP, DOCTOR)
