"""hello, daemon.status, daemon.stop and doctor."""

from __future__ import annotations

import os
import stat
import time
from typing import TYPE_CHECKING

import anyio
import msgspec
import structlog

from protocol import extras
from protocol.config_format import CONFIG_VERSION
from protocol.issue_codes import IssueCode
from protocol.methods import service
from protocol.methods.common import SUPPORTED_PROTOCOLS, Channel, Empty
from protocol.methods.reads import StatsParams
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
from protocol.methods.specs import source_gone
from protocol.methods.vaults import VaultHealth, VaultState, WritePolicy
from protocol.methods.work import WorkState
from protocol.table import METHODS
from vaultd.api.handlers import CallContext, handles
from vaultd.errors import Unavailable, VaultError
from vaultd.vault_work import VAULT_WORK

log = structlog.get_logger("vaultd.doctor")

if TYPE_CHECKING:
    from vaultd.api.host import Host
    from vaultd.ops.tidy import TidyPlan
    from vaultd.runtime import VaultRuntime


MAX_STATUS_WORK = 10  #: running work documents status lists per vault


@handles(service.HELLO)
async def hello(ctx: CallContext, params: HelloParams) -> HelloResult:
    """Agree on a protocol version (the highest both sides speak) and learn who the caller is,
    before any other call.

    Raises:
        Unavailable: UNAVAILABLE, the client's protocol is older than any this daemon supports;
            upgrade the client.
        Conflict: CONFLICT, an agent's session id differs from a recorded session's only in
            letter case (the connection stays unopened).
    """
    usable = [v for v in SUPPORTED_PROTOCOLS if v <= params.protocol]
    if not usable:
        raise Unavailable(
            f"protocol {params.protocol} is older than this daemon supports ({min(SUPPORTED_PROTOCOLS)}..."
            f"{max(SUPPORTED_PROTOCOLS)}); upgrade the client"
        )
    if params.channel == Channel.MCP and params.session is not None:
        ctx.host.sessions.opened(params.session, params.client)  # a new record, or one resumed by its id
    ctx.channel, ctx.client, ctx.session, ctx.opened = params.channel, params.client, params.session, True
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
        vaults=[await _with_pending(v) for v in host.vaults.values()],
        activation=host.activation,
        idle_exit_s=host.idle_exit_s,
        config_problem=_config_problem(host),
    )


def _config_problem(host: Host) -> str | None:
    """Read afresh, so status names the file a daemon started with, and one edited since."""
    try:
        host.config.load()
    except VaultError as exc:
        return exc.message
    return None


async def _proposal_findings(runtime: VaultRuntime) -> list[Finding]:
    from vaultd.gate.store import store_for  # a vault's: the daemon loads it with a vault's first call

    check = f"proposals:{runtime.entry.id}"
    try:
        kept, refused = await anyio.to_thread.run_sync(store_for(runtime.root).entries)
    except VaultError as exc:
        return [Finding(level=Level.FAIL, check=check, finding=exc.message)]
    found = [
        Finding(level=Level.WARN, check=check, finding=f".vaultd/proposals/{bad.name} is never applied: {bad.reason}; move it away")
        for bad in refused
    ]
    pending = sum(1 for p in kept if p.state == "pending")
    if pending:
        found.append(Finding(level=Level.OK, check=check, finding=f"{pending} pending; review with 'vaultctl proposals'"))
    return found


async def _health_findings(ctx: CallContext, vault: str) -> list[Finding]:
    """What a ready vault's notes need: links that do not resolve, notes the index could not read."""
    from vaultd.api import stats_methods  # a vault's: loaded with a vault's first call

    s = await stats_methods.vault_stats(ctx, StatsParams(vault=vault))
    broken = s.dead_links + s.ambiguous_links
    links = Finding(
        level=Level.WARN if broken else Level.OK,
        check=f"links:{vault}",
        finding=(
            f"{s.dead_links} dead and {s.ambiguous_links} ambiguous of {s.links} links; 'vaultctl stats --vault {vault}' counts them, "
            "'vaultctl links NOTE' shows a note's"
            if broken
            else f"all {s.links} links resolve"
        ),
    )
    index = Finding(
        level=Level.WARN if s.issues else Level.OK,
        check=f"index:{vault}",
        finding=(
            f"{s.issues - s.skipped} note issue(s) and {s.skipped} skipped file(s) in {s.notes} notes; "
            f"'vaultctl issues --vault {vault}' lists them"
            if s.issues
            else f"{s.notes} notes indexed, none with issues"
        ),
    )
    return [links, index]


async def _with_pending(runtime: VaultRuntime) -> VaultHealth:
    """The vault's health and what waits for a person there, so ``vaultctl status`` shows both."""
    health = runtime.health()
    if health.state not in (VaultState.READY, VaultState.INDEXING):
        return health
    # A vault's, loaded with a vault's first call: a status of a daemon serving none stays small.
    from vaultd.gate.store import store_for
    from vaultd.ops.view_refresh import edited_views
    from vaultd.sessions.work import work_for

    try:
        kept = work_for(runtime.root, runtime.entry.id).all()
    except VaultError:  # a work folder that is not vaultd's own is a doctor finding, not a status failure
        kept = []
    running = [f"{w.id} {w.what}" + (f" ({w.progress})" if w.progress else "") for w in kept if w.state is WorkState.RUNNING][
        :MAX_STATUS_WORK
    ]
    edited = await anyio.to_thread.run_sync(edited_views, runtime) if runtime.entry.views else []
    health = msgspec.structs.replace(health, running_work=running, edited_views=edited)
    try:
        pending = await anyio.to_thread.run_sync(store_for(runtime.root).pending_count)
    except VaultError:
        return health  # an unusable proposals folder is a doctor finding, not a status failure
    return msgspec.structs.replace(health, pending_proposals=pending)


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
        count = f"{len(config.vaults)} vault(s) registered"
        if config.version > CONFIG_VERSION:
            newer = f"{count}; format {config.version} is newer than this vaultd's {CONFIG_VERSION}: keys it does not know are kept"
            findings.append(Finding(level=Level.WARN, check="config", finding=newer))
        else:
            findings.append(Finding(level=Level.OK, check="config", finding=count))
    except VaultError as exc:
        findings.append(Finding(level=Level.FAIL, check="config", finding=exc.message))
    findings += extras.findings()  # what this daemon's interpreter has: the console and graph need theirs
    vaults = [host.vault(params.vault)] if params.vault else list(host.vaults.values())
    for runtime in vaults:
        health = runtime.health()
        level = {VaultState.READY: Level.OK, VaultState.INDEXING: Level.WARN}.get(health.state, Level.FAIL)
        text = f"{health.path}: {health.state}" + (f" ({health.message})" if health.message else "")
        findings.append(Finding(level=level, check=f"vault:{health.id}", finding=text))
        findings.extend(_runtime_findings(runtime))
        findings.extend(_spec_findings(health))
        if health.state is VaultState.READY:
            findings.extend(await _health_findings(ctx, health.id))
            findings.extend(await _tidy_findings(ctx, runtime))
        if health.state in (VaultState.READY, VaultState.INDEXING):
            findings.extend(await _proposal_findings(runtime))
            from vaultd.git import doctor as git_doctor  # a vault's: loaded with its first doctor

            findings.extend(await anyio.to_thread.run_sync(git_doctor.findings, runtime.git))
    verdict = max((f.level for f in findings), key=[Level.OK, Level.WARN, Level.FAIL].index, default=Level.OK)
    return DoctorResult(verdict=verdict, findings=findings)


#: Paths a doctor row names at most; the rest are counted.
MAX_TIDY_PATHS_SHOWN = 10


async def _tidy_findings(ctx: CallContext, runtime: VaultRuntime) -> list[Finding]:
    """What ``vaultctl tidy`` would change in a writable vault, by rule, and the notes it cannot
    edit: the tidy planner run as a preview would run it, but nothing is validated, journaled or
    written, taken in turn as vault-wide work. A vault nobody may write gets no row (its tidy could
    not be applied). A planner that fails is a failed check: the tidy itself would fail the same way."""
    if runtime.entry.write is WritePolicy.NONE:
        return []
    check = f"tidy:{runtime.entry.id}"
    from vaultd.ops.tidy import TidyPlan, plan_pending  # a vault's: loaded with its first doctor

    try:
        async with VAULT_WORK.admitted(ctx, "daemon.doctor"), VAULT_WORK.turn():
            plan = await plan_pending(runtime, ctx.channel)
    except VaultError as exc:
        return [Finding(level=Level.FAIL, check=check, finding=f"planning the tidy failed: {exc.message}")]
    except Exception as exc:  # a planner's defect is reported, never a failed doctor
        log.exception("tidy planning failed in doctor", vault=runtime.entry.id)
        return [Finding(level=Level.FAIL, check=check, finding=f"planning the tidy failed: {type(exc).__name__}")]
    assert isinstance(plan, TidyPlan)
    return [_tidy_finding(check, runtime.entry.id, plan)]


def _tidy_finding(check: str, vault: str, plan: TidyPlan) -> Finding:
    counts: dict[str, int] = {}
    for record in plan.records:
        counts[record.code] = counts.get(record.code, 0) + 1
    unparsable = sorted({r.path for r in plan.reported if r.code is IssueCode.V01})
    log_left = [r for r in plan.reported if r.code is IssueCode.T08]
    notes = len(plan.changes) + plan.left
    if not counts and not unparsable and not log_left:
        return Finding(level=Level.OK, check=check, finding="nothing to tidy")
    parts = []
    if counts:
        by_rule = ", ".join(f"{code} {n}" for code, n in sorted(counts.items()))
        parts.append(f"pending in {notes} file(s): {by_rule}")
    if unparsable:
        shown = ", ".join(unparsable[:MAX_TIDY_PATHS_SHOWN])
        more = f" and {len(unparsable) - MAX_TIDY_PATHS_SHOWN} more" if len(unparsable) > MAX_TIDY_PATHS_SHOWN else ""
        parts.append(f"{len(unparsable)} note(s) it cannot edit: {shown}{more}")
    parts += [f"{r.path}: {r.what}" for r in log_left[:1]]
    return Finding(level=Level.WARN, check=check, finding="; ".join(parts) + f"; preview with 'vaultctl tidy --vault {vault}'")


def _spec_findings(health: VaultHealth) -> list[Finding]:
    """A registered spec source whose folder is gone: every spec read of it fails until it is back."""
    return [
        Finding(
            level=Level.WARN,
            check=f"spec:{health.id}:{s.id}",
            finding=source_gone(health.id, s.id, s.path),
        )
        for s in health.specs
        if s.missing
    ]


def _runtime_findings(runtime: VaultRuntime) -> list[Finding]:
    """What taking the vault found: operations recovered or refused, a watcher that cannot run."""
    findings: list[Finding] = []
    r = runtime.recovery
    if r is not None and (r.rolled_back or r.discarded or r.temp_files):
        left = [p for rb in r.rolled_back for p in rb.left]
        findings.append(
            Finding(
                level=Level.WARN if left else Level.OK,
                check=f"recovery:{runtime.entry.id}",
                finding=f"rolled back {len(r.rolled_back)} unfinished operation(s), removed {r.temp_files} temp "
                f"file(s)" + (f"; changed by others and left as found: {', '.join(left)}" if left else ""),
            )
        )
    if r is not None and r.remarked:
        findings.append(
            Finding(
                level=Level.WARN,
                check=f"recovery:{runtime.entry.id}",
                finding=f"{len(r.remarked)} committed operation(s) had lost their commit marker and were "
                f"finished, not rolled back: {', '.join(r.remarked)}",
            )
        )
    if runtime.live is not None and runtime.live.watch_problem is not None:
        findings.append(
            Finding(
                level=Level.WARN,
                check=f"watcher:{runtime.entry.id}",
                finding=f"the watcher cannot run: {runtime.live.watch_problem}; until it can, changes are found "
                "by a stat walk after each retry (at most 10 s apart) and by every fresh read or write",
            )
        )
    for refused in r.refused if r is not None else []:
        findings.append(
            Finding(
                level=Level.WARN,
                check=f"journal:{runtime.entry.id}",
                finding=f"{runtime.root / refused.name}: {refused.reason}; not written by this daemon, so never "
                "applied, undone or deleted: check it, then move it out of the vault",
            )
        )
    return findings
