"""Session and daemon methods: hello, daemon.status, daemon.stop, doctor."""

from __future__ import annotations

import enum
from typing import Annotated

import msgspec

from protocol.methods.common import PROTOCOL_VERSION, Channel, OptionalVault, Params, Result
from protocol.methods.vaults import VaultHealth

ShortText = Annotated[str, msgspec.Meta(min_length=1, max_length=128)]


class HelloParams(Params):
    client: ShortText
    version: ShortText
    channel: Channel
    protocol: Annotated[int, msgspec.Meta(ge=1, le=1000)] = PROTOCOL_VERSION


class HelloResult(Result):
    server: str
    version: str
    protocol: int
    methods: list[str]


class DaemonStatus(Result):
    pid: int
    uptime_s: float
    version: str
    socket: str
    home: str
    vaults: list[VaultHealth]


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
    vault: OptionalVault = None


class DoctorResult(Result):
    verdict: Level
    findings: list[Finding]
