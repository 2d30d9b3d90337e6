"""status, daemon start|stop|status|logs, vault add|list|remove, doctor, schema."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import msgspec
import typer

from protocol.errors import ExitStatus
from protocol.location import resolve_home
from protocol.methods import indexing, service, vaults
from protocol.methods.common import Empty, Params
from protocol.methods.git_settings import DEFAULT_QUIET_S, GitMode
from protocol.methods.indexing import VaultRebuildParams, VaultRebuildResult
from protocol.methods.service import DaemonStatus, DoctorParams, DoctorResult, Finding, Level
from protocol.methods.vaults import (
    BUILTIN_DOMAINS,
    FolderRoles,
    Kind,
    SchemaProfile,
    SourcesSettings,
    VaultAddParams,
    VaultHealth,
    VaultInfo,
    VaultListResult,
    VaultRemoveParams,
    VaultRemovePreview,
    VaultRemoveResult,
    WritePolicy,
)
from protocol.schema import field_help as doc
from vaultctl import render
from vaultctl.client import BadSetting, DaemonUnavailable, UnsafeSocket, connect
from vaultctl.commands.common import JsonOpt, call, emit, fail, session
from vaultctl.commands.vault_options import (
    CanonTableOpt,
    DeadLinksOpt,
    DenyPathOpt,
    DomainOpt,
    GitRawOpt,
    ParentKeyOpt,
    PiiOpt,
    PrivateOpt,
    ProjectOpt,
    QuietOpt,
    RoleOpt,
    StampKeyOpt,
    canon_tables,
    folder_roles,
    pii_setting,
    stamp_keys,
)
from vaultctl.completion import Complete
from vaultctl.terminal import Escaped, command_line

if TYPE_CHECKING:
    from collections.abc import Iterable

    from protocol.methods.spec import MethodSpec

P = TypeVar("P", bound=Params)
R = TypeVar("R")

daemon_app = typer.Typer(help="Start, stop and inspect the daemon.", no_args_is_help=True)
vault_app = typer.Typer(help="Register, list and unregister vaults.", no_args_is_help=True)


def _status_text(s: DaemonStatus) -> str:
    head = render.fields(
        "vaultd",
        [
            ("pid", s.pid),
            ("version", s.version),
            ("uptime", f"{s.uptime_s:.1f} s"),
            ("socket", s.socket),
            ("home", s.home),
        ],
    )
    vaults = s.vaults
    if s.config_problem:
        head += f"\n\nthe registry cannot be used, so no vault is served: {s.config_problem}"
    if not vaults:
        return head if s.config_problem else head + "\n\nno vaults registered; add one with 'vaultctl vault add ID PATH'"
    rows = [(v.id, _state(v), v.notes, v.pending_proposals, v.path, v.message or "") for v in vaults]
    text = head + "\n\n" + render.table(["id", "state", "notes", "waiting", "path", "message"], rows)
    text += _declared((v.id, v.domains, v.roles) for v in vaults)
    sources = [f"  {v.id}: spec source {s.id} {s.path}" + (" (gone)" if s.missing else "") for v in vaults for s in v.specs]
    text += "\n\n" + "\n".join(sources) if sources else ""
    waiting = sum(v.pending_proposals for v in vaults)
    if waiting:
        text += f"\n\n{waiting} agent proposal(s) wait for you: 'vaultctl proposals' lists them"
    for v in vaults:
        for work in v.running_work:
            text += f"\nagent work running in {v.id}: {work}"  # escaped as the text it is added to is
        for view in v.edited_views:
            text += f"\nview {view} in {v.id} was edited by hand: vaultd leaves it as it is (delete it to have it generated again)"
    return text


def _meaning(v: VaultHealth) -> str:
    """The meaning model's cover, once it runs: ``; meaning 1,200/8,346 passages, about 35 min left``."""
    m = v.meaning
    if m is None:
        return ""
    text = f"; meaning {m.covered:,}/{m.total:,} passages"
    if m.eta_s is not None:
        text += f", about {max(1, round(m.eta_s / 60)):,} min left" if m.eta_s >= 60 else f", about {round(m.eta_s)} s left"
    if m.note:
        text += f" ({m.note})"
    return text


def _state(v: VaultHealth) -> str:
    """The state, with a build's progress when one runs: ``indexing 1,234/5,000``."""
    p = v.progress
    if p is None:
        return str(v.state) + _meaning(v)
    doing = f"{v.state}, rebuilding" if p.rebuild else str(v.state)
    if p.total is None:
        return f"{doing} (listing files)"
    percent = f" {100 * p.parsed // p.total}%" if p.total else ""
    return f"{doing} {p.parsed:,}/{p.total:,}{percent}"


def with_build_bar(vault_id: str, label: str, spec: MethodSpec[P, R], params: P, *, any_vault: bool = False) -> R:
    """Call ``spec`` with a progress bar of ``vault_id``'s build on stderr when it is a terminal.

    The bar is drawn from the ``index.progress`` events of a subscription made on the same
    connection first; ``any_vault`` subscribes to every vault (the one being added is not
    registered yet, so it cannot be named).
    """
    from protocol.methods import subscriptions
    from protocol.methods.events import EventKind
    from protocol.methods.subscriptions import SubscribeParams
    from vaultctl.progress import ProgressBar, on_terminal

    if not on_terminal(sys.stderr):
        return call(spec, params)
    bar = ProgressBar(vault_id, label)
    client = session()
    try:
        kinds = [EventKind.INDEX_PROGRESS]
        call(subscriptions.SUBSCRIBE, SubscribeParams(vaults=None if any_vault else [vault_id], kinds=kinds), client=client)
        return call(spec, params, client=client, on_notification=bar.notification)
    finally:
        bar.close()
        client.close()


def status(as_json: JsonOpt = False) -> None:
    """Show the daemon and every vault's health (starts the daemon if needed); exits 1 when config.json cannot be used."""
    result = call(service.DAEMON_STATUS, Empty())
    emit(result, as_json, _status_text)
    if result.config_problem:
        raise typer.Exit(int(ExitStatus.REFUSED))


@daemon_app.command("status")
def daemon_status(as_json: JsonOpt = False) -> None:
    """Show the daemon's pid, uptime, socket and vaults."""
    status(as_json)


@daemon_app.command("start")
def daemon_start(as_json: JsonOpt = False) -> None:
    """Start the daemon detached (no-op when it is already running)."""
    try:
        with connect(autostart=True) as client:
            result = call(service.DAEMON_STATUS, Empty(), client=client)
    except (DaemonUnavailable, OSError) as exc:
        fail(str(exc), ExitStatus.UNAVAILABLE)
    except BadSetting as exc:
        fail(str(exc), ExitStatus.USAGE)
    emit(result, as_json, lambda s: f"vaultd is running (pid {s.pid}) on {s.socket}")


@daemon_app.command("stop")
def daemon_stop(as_json: JsonOpt = False) -> None:
    """Stop the daemon gracefully and wait until its process has exited; one that does not exit in
    time (stuck in a request) gets SIGTERM, then SIGKILL (a service manager's socket stays)."""
    try:
        client = connect(autostart=False)
    except UnsafeSocket as exc:
        fail(str(exc), ExitStatus.UNAVAILABLE)
    except BadSetting as exc:
        fail(str(exc), ExitStatus.USAGE)
    except DaemonUnavailable:
        emit({"stopping": False}, as_json, lambda _: "vaultd is not running")
        return
    with client:
        before = call(service.DAEMON_STATUS, Empty(), client=client)
        result = call(service.DAEMON_STOP, Empty(), client=client)
    pid = before.pid
    from vaultctl import daemon_exit

    try:
        sent = daemon_exit.wait_for_exit(pid, Path(before.home) / "vaultd.lock")
    except daemon_exit.StillRunning as exc:
        fail(str(exc), ExitStatus.UNAVAILABLE)
    report = {"stopping": result.stopping, "pid": pid, "exited": True, "signals": sent}
    emit(report, as_json, lambda _: daemon_exit.stopped_text(pid, sent))


@daemon_app.command("logs")
def daemon_logs(
    lines: Annotated[int, typer.Option("--lines", "-n", min=1, max=10000, help="How many of the last lines to print.")] = 40,
) -> None:
    """Print the last lines of the daemon's log."""
    log_file = resolve_home() / "logs" / "vaultd.log"
    try:
        with open(log_file, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - lines * 400))
            tail = fh.read().decode("utf-8", "replace").splitlines()[-lines:]
    except FileNotFoundError:
        fail(f"no log yet at {log_file}", ExitStatus.REFUSED)
    render.say("\n".join(tail))


def domains_text(declared: list[str]) -> str:
    """``built-ins`` or ``built-ins + finance, health``: the effective set without repeating the six."""
    own = sorted(set(declared) - set(BUILTIN_DOMAINS))
    return "built-ins" + (f" + {', '.join(own)}" if own else "")


def roles_text(roles: FolderRoles | None) -> str:
    """``intake=inbox raw=.raw journal=journals``: the folders with a role, or ``none``."""
    if roles is None:
        return "none"
    parts = []
    for name in FolderRoles.__struct_fields__:
        value = getattr(roles, name)
        parts += [f"{name}={f}" for f in value] if isinstance(value, list) else ([f"{name}={value}"] if value else [])
    return " ".join(parts) or "none"


def _declared(vaults: Iterable[tuple[str, list[str], FolderRoles | None]]) -> str:
    """Each vault's own domains and folder roles, under the table: only for a vault that has any."""
    lines = []
    for vault_id, domains, roles in vaults:
        if set(domains) - set(BUILTIN_DOMAINS):
            lines.append(f"  {vault_id}: domains {domains_text(domains)}")
        if roles:
            lines.append(f"  {vault_id}: folder roles {roles_text(roles)}")
    return "\n\n" + "\n".join(lines) if lines else ""


def vault_text(info: VaultInfo) -> str:
    e, h = info.entry, info.health
    return render.fields(
        f"vault {e.id}",
        [
            ("path", e.path),
            ("kind", e.kind),
            ("write", e.write),
            ("schema", e.schema),
            ("dead links", e.dead_link_rule()),
            ("pii", e.pii if isinstance(e.pii, (str, type(None))) else "policy"),
            ("deny paths", e.deny_paths),
            *([("git", e.git)] if e.git != "off" else []),
            *([("remote", e.remote)] if e.remote else []),
            *([("sync every", f"{e.sync_interval_s} s")] if e.sync_interval_s else []),
            ("domains", domains_text(e.domains)),
            *([("roles", roles_text(e.roles))] if e.roles else []),
            *([("git raw", "on: checkpoints commit raw copies")] if e.git_raw else []),
            ("state", h.state),
            ("notes", h.notes),
            *([("message", h.message)] if h.message else []),
        ],
    ) + "".join(f"\nwarning {w.code}: {w.message}" for w in info.warnings)


@vault_app.command("add")
def vault_add(
    vault_id: Annotated[str, typer.Argument(metavar="ID", help=doc(VaultAddParams, "id"))],
    path: Annotated[Path, typer.Argument(help="The vault folder (made absolute from the working folder)."), Complete.DIR],
    kind: Annotated[Kind, typer.Option(help=doc(VaultAddParams, "kind"))] = Kind.PERSONAL,
    write: Annotated[WritePolicy, typer.Option(help=doc(VaultAddParams, "write"))] = WritePolicy.MCP,
    schema: Annotated[SchemaProfile, typer.Option(help=doc(VaultAddParams, "schema"))] = SchemaProfile.OPEN,
    pii: PiiOpt = None,
    deny_path: DenyPathOpt = None,
    private: PrivateOpt = None,
    log_path: Annotated[
        str | None, typer.Option("--log-path", help=doc(VaultAddParams, "log_path") + " Needed when log.md is a note of yours.")
    ] = None,
    stamp_key: StampKeyOpt = None,
    parent_key: ParentKeyOpt = None,
    dead_links: DeadLinksOpt = None,
    sources_folder: Annotated[
        str | None, typer.Option("--sources-folder", metavar="FOLDER", help="Where source notes go (default: sources).")
    ] = None,
    claims_folder: Annotated[
        str | None, typer.Option("--claims-folder", metavar="FOLDER", help="Where claim notes go (default: claims).")
    ] = None,
    git: Annotated[GitMode, typer.Option("--git", help=doc(VaultAddParams, "git"))] = GitMode.OFF,
    remote: Annotated[str | None, typer.Option("--remote", help=doc(VaultAddParams, "remote"))] = None,
    quiet: QuietOpt = None,
    interval: Annotated[int | None, typer.Option("--sync-interval", help=doc(VaultAddParams, "sync_interval_s"))] = None,
    domain: DomainOpt = None,
    role: RoleOpt = None,
    git_raw: GitRawOpt = None,
    project: ProjectOpt = None,
    canon_table: CanonTableOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Register an existing folder as a vault and index it. Never writes a note."""
    pii_value, _ = pii_setting(pii)  # "default" is what an omitted --pii gives a new vault
    ledgers = None
    if sources_folder is not None or claims_folder is not None:
        default = SourcesSettings()
        ledgers = SourcesSettings(
            folder=default.folder if sources_folder is None else sources_folder,
            claims=default.claims if claims_folder is None else claims_folder,
        )
    params = VaultAddParams(
        id=vault_id,
        path=os.path.abspath(path),
        kind=kind,
        write=write,
        schema=schema,
        pii=pii_value,
        deny_paths=list(deny_path or []),
        private_paths=list(private or []),
        log_path=log_path,
        stamp_keys=stamp_keys(stamp_key),
        parent_keys=parent_key or None,
        dead_links=dead_links,
        sources=ledgers,
        git=git,
        remote=remote,
        snapshot_quiet_s=DEFAULT_QUIET_S if quiet is None else quiet,
        sync_interval_s=interval,
        domains=list(domain or []),
        roles=folder_roles(role),
        git_raw=bool(git_raw),
        projects=list(project or []),
        canon_tables=canon_tables(canon_table) or [],
    )
    emit(with_build_bar(vault_id, f"indexing {vault_id}", vaults.VAULT_ADD, params, any_vault=True), as_json, vault_text)


@vault_app.command("rebuild")
def vault_rebuild(
    vault_id: Annotated[str, typer.Argument(metavar="ID", help="The vault to rebuild.")],
    as_json: JsonOpt = False,
) -> None:
    """Re-read and re-parse every note of a vault (a progress bar on a terminal). Never writes a note."""

    def text(r: VaultRebuildResult) -> str:
        return f"rebuilt vault {r.vault}: {r.notes:,} notes, {r.parsed:,} parsed, {r.changed:,} changed, in {r.seconds:.2f} s"

    result = with_build_bar(vault_id, f"rebuilding {vault_id}", indexing.VAULT_REBUILD, VaultRebuildParams(vault=vault_id))
    emit(result, as_json, text)


@vault_app.command("list")
def vault_list(as_json: JsonOpt = False) -> None:
    """List the registered vaults with their policies and health."""

    def text(r: VaultListResult) -> str:
        rows = [(v.entry.id, v.entry.kind, v.entry.write, v.entry.schema, v.health.state, v.health.notes, v.entry.path) for v in r.vaults]
        text = render.table(["id", "kind", "write", "schema", "state", "notes", "path"], rows) if rows else "no vaults registered"
        return text + _declared((v.entry.id, v.entry.domains, v.entry.roles) for v in r.vaults)

    emit(call(vaults.VAULT_LIST, Empty()), as_json, text)


@vault_app.command("remove")
def vault_remove(
    vault_id: Annotated[str, typer.Argument(metavar="ID", help=doc(VaultRemoveParams, "id")), Complete.VAULT],
    confirm: Annotated[bool, typer.Option("--confirm", help=doc(VaultRemoveParams, "confirm"))] = False,
    fingerprint: Annotated[str | None, typer.Option(help=doc(VaultRemoveParams, "fingerprint"))] = None,
    as_json: JsonOpt = False,
) -> None:
    """Unregister a vault: a preview first, then --confirm --fingerprint F. Never deletes files."""
    result = call(vaults.VAULT_REMOVE, VaultRemoveParams(id=vault_id, confirm=confirm, fingerprint=fingerprint))

    def text(r: VaultRemoveResult) -> str:
        if not isinstance(r, VaultRemovePreview):
            return f"removed vault {vault_id}; its files at {r.entry.path} are untouched"
        cmd = command_line(["vaultctl", "vault", "remove", vault_id, "--confirm", "--fingerprint", r.fingerprint])
        head = f"would remove vault {vault_id} at {r.entry.path} (files are never deleted)"
        return render.compose([head, Escaped(f"to confirm, run:\n  {cmd}")])

    emit(result, as_json, text)


def doctor(
    vault: Annotated[str | None, typer.Option("--vault", help=doc(DoctorParams, "vault")), Complete.VAULT] = None,
    as_json: JsonOpt = False,
) -> None:
    """Check the home, socket, config and vaults (links, index issues, proposals); exits 1 when the verdict is fail.

    When no daemon answers, vaultctl checks what it can itself: the home, the socket's folder,
    config.json, each vault's folder and which process holds its lock, the daemon's last error."""
    try:
        client = connect()
    except BadSetting as exc:
        fail(str(exc), ExitStatus.USAGE)
    except (DaemonUnavailable, OSError) as exc:
        from vaultctl import local_checks

        found = local_checks.findings(str(exc))
        result = DoctorResult(verdict=_verdict(found, Level.OK), findings=found)
    else:
        with client:
            result = call(service.DOCTOR, DoctorParams(vault=vault), client=client)
    result = with_host_rows(result)
    emit(result, as_json, lambda r: render.checks(r.findings, r.verdict))
    if result.verdict == "fail":
        raise typer.Exit(int(ExitStatus.REFUSED))


def _verdict(findings: list[Finding], floor: Level) -> Level:
    order = [Level.OK, Level.WARN, Level.FAIL]
    return max((f.level for f in findings), key=order.index, default=floor)


def with_host_rows(result: DoctorResult) -> DoctorResult:
    """The daemon's findings and one row per agent host, as that host would start vaultd."""
    from vaultctl.setup.probe import host_rows

    rows = [Finding(level=Level(r.level), check=r.check, finding=r.finding) for r in host_rows(os.environ, Path.cwd())]
    findings = [*result.findings, *rows]
    verdict = max(_verdict(findings, result.verdict), result.verdict, key=[Level.OK, Level.WARN, Level.FAIL].index)
    return msgspec.structs.replace(result, findings=findings, verdict=verdict)


def schema() -> None:
    """Print the JSON Schema of every method, generated from the protocol table."""
    from protocol.schema import all_schemas

    print(json.dumps(all_schemas(), indent=2, ensure_ascii=False))
