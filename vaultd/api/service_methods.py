"""hello, daemon.status, daemon.stop and doctor."""

from __future__ import annotations

import os
import stat
import time

from protocol.methods import service
from protocol.methods.common import SUPPORTED_PROTOCOLS, Empty
from protocol.methods.service import (
    DaemonStatus,
    DoctorParams,
    DoctorResult,
    Finding,
    HelloParams,
    HelloResult,
    Level,
    StopResult,
)
from protocol.methods.vaults import VaultState
from protocol.table import METHODS
from vaultd.api.handlers import CallContext, handles
from vaultd.errors import InvalidParams, VaultError


@handles(service.HELLO)
async def hello(ctx: CallContext, params: HelloParams) -> HelloResult:
    usable = [v for v in SUPPORTED_PROTOCOLS if v <= params.protocol]
    if not usable:
        raise InvalidParams(
            f"protocol {params.protocol} is older than this daemon supports ({min(SUPPORTED_PROTOCOLS)}..."
            f"{max(SUPPORTED_PROTOCOLS)}); upgrade the client"
        )
    ctx.channel, ctx.client, ctx.opened = params.channel, params.client, True
    return HelloResult(server="vaultd", version=ctx.host.version, protocol=max(usable), methods=list(METHODS))


@handles(service.DAEMON_STATUS)
async def status(ctx: CallContext, params: Empty) -> DaemonStatus:
    host = ctx.host
    return DaemonStatus(
        pid=os.getpid(),
        uptime_s=round(time.monotonic() - host.started, 3),
        version=host.version,
        socket=str(host.socket_path),
        home=str(host.home),
        vaults=[v.health() for v in host.vaults.values()],
    )


@handles(service.DAEMON_STOP)
async def stop(ctx: CallContext, params: Empty) -> StopResult:
    ctx.host.stop_requested.set()
    return StopResult(stopping=True)


def _mode_finding(check: str, path: os.PathLike[str] | str, want: int) -> Finding:
    try:
        st = os.lstat(path)
    except OSError as exc:
        return Finding(level=Level.FAIL, check=check, finding=f"{path}: {exc.strerror}")
    mode = stat.S_IMODE(st.st_mode)
    if mode & ~want:
        return Finding(level=Level.WARN, check=check, finding=f"{path} has mode {mode:o}, expected {want:o}")
    return Finding(level=Level.OK, check=check, finding=f"{path} ({mode:o})")


@handles(service.DOCTOR)
async def doctor(ctx: CallContext, params: DoctorParams) -> DoctorResult:
    host = ctx.host
    findings = [
        _mode_finding("home", host.home, 0o700),
        _mode_finding("socket", host.socket_path, 0o600),
        _mode_finding("socket-folder", host.socket_path.parent, 0o700),
    ]
    try:
        config = host.config.load()
        findings.append(Finding(level=Level.OK, check="config", finding=f"{len(config.vaults)} vault(s) registered"))
    except VaultError as exc:
        findings.append(Finding(level=Level.FAIL, check="config", finding=exc.message))
    vaults = [host.vault(params.vault)] if params.vault else list(host.vaults.values())
    for runtime in vaults:
        health = runtime.health()
        level = {VaultState.READY: Level.OK, VaultState.INDEXING: Level.WARN}.get(health.state, Level.FAIL)
        text = f"{health.path}: {health.state}" + (f" ({health.message})" if health.message else "")
        findings.append(Finding(level=level, check=f"vault:{health.id}", finding=text))
        findings.extend(runtime.doctor_findings())
    verdict = max((f.level for f in findings), key=[Level.OK, Level.WARN, Level.FAIL].index, default=Level.OK)
    return DoctorResult(verdict=verdict, findings=findings)
