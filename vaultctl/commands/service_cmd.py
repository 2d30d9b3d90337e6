"""vaultctl daemon install|uninstall: hand the daemon to systemd or launchd, reversibly."""

from __future__ import annotations

import json
import os
import time
from typing import Annotated, Any

import typer

from protocol.errors import ExitStatus
from protocol.methods import service, vaults
from protocol.methods.common import Empty
from protocol.methods.service import Activation
from vaultctl import render
from vaultctl.client import BadSetting, CallError, DaemonUnavailable, connect
from vaultctl.commands.common import JsonOpt, fail

STOP_WAIT_S = 15.0


def _show(plan: Any, as_json: bool, show_text: bool) -> None:
    """Print an install or uninstall plan (done or not), the files' text too when ``show_text``."""
    if as_json:
        print(json.dumps(plan.to_dict()))
        return
    verb = "did" if plan.applied else "would"
    lines = [f"{plan.action} vaultd as a {plan.manager} service (socket {plan.socket})"]
    for f in plan.files:
        lines.append(f"  {verb} {f.change.value}: {f.path}")
        if show_text and f.text is not None and f.change.value != "unchanged":
            lines += [f"    | {line}" for line in f.text.rstrip("\n").split("\n")]
    lines += [f"  {verb} run: {' '.join(c)}" for c in plan.commands]
    lines += [f"  note: {n}" for n in plan.notes]
    if not plan.applied:
        lines.append(f"  to apply: vaultctl daemon {plan.action}" + (f" --{plan.manager}" if plan.action == "install" else ""))
    render.say("\n".join(lines))


def _running() -> tuple[Any, list[str]] | None:
    """The daemon answering now (its status and vault paths), or None; never starts one."""
    try:
        with connect(autostart=False, timeout=10) as client:
            status = client.call(service.DAEMON_STATUS, Empty())
            paths = [v.entry.path for v in client.call(vaults.VAULT_LIST, Empty()).vaults]
    except (DaemonUnavailable, CallError, OSError):
        return None
    except BadSetting as exc:
        fail(str(exc), ExitStatus.USAGE)
    return status, paths


def _stop_own_daemon(status: Any) -> None:
    """Stop a daemon vaultctl started, so the manager can take its socket and home."""
    try:
        with connect(autostart=False, timeout=10) as client:
            client.call(service.DAEMON_STOP, Empty())
    except (DaemonUnavailable, CallError, OSError):
        return
    deadline = time.monotonic() + STOP_WAIT_S
    while time.monotonic() < deadline:
        try:
            os.kill(status.pid, 0)
        except ProcessLookupError:
            return
        except PermissionError:
            return
        time.sleep(0.05)
    fail(
        f"the running daemon (pid {status.pid}) did not stop within {STOP_WAIT_S:g} s; stop it, then install again", ExitStatus.UNAVAILABLE
    )


def install(
    systemd: Annotated[bool, typer.Option("--systemd", help="systemd user units (the default on Linux).")] = False,
    launchd: Annotated[bool, typer.Option("--launchd", help="a launchd user agent (the default on macOS).")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the files and commands; change nothing.")] = False,
    no_start: Annotated[bool, typer.Option("--no-start", help="Write the files only; start the service yourself later.")] = False,
    idle_exit: Annotated[
        float,
        typer.Option("--idle-exit", metavar="SECONDS", min=0, max=604800, help="Quiet seconds before the daemon exits; 0, never."),
    ] = 600.0,
    as_json: JsonOpt = False,
) -> None:
    """Run vaultd under systemd or launchd: socket-activated, exits when idle. Undo: daemon uninstall."""
    from vaultctl.service.install import apply_install, default_manager, plan_install
    from vaultctl.service.record import Manager
    from vaultctl.setup import SetupError

    if systemd and launchd:
        fail("--systemd and --launchd go alone", ExitStatus.USAGE)
    try:
        manager = Manager.SYSTEMD if systemd else Manager.LAUNCHD if launchd else default_manager()
        running = _running()
        paths = running[1] if running else []
        plan = plan_install(manager, env=os.environ, vaults=paths, idle_exit_s=idle_exit, start=not no_start)
        if running is None:
            plan.notes.append("no daemon answered, so vaults registered outside your home are not known here")
        if not dry_run:
            if running is not None and plan.commands and running[0].activation == Activation.SELF:
                _stop_own_daemon(running[0])
                plan.notes.append(f"stopped the daemon vaultctl had started (pid {running[0].pid}); {manager} starts it from now on")
            apply_install(plan, os.environ)
    except SetupError as exc:
        fail(exc.message, exc.code.exit_status)
    _show(plan, as_json, show_text=dry_run)


def uninstall(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would be removed or restored; change nothing.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Stop the managed service and put its files back as they were before install."""
    from vaultctl.service.install import apply_uninstall, plan_uninstall
    from vaultctl.setup import SetupError

    try:
        plan = plan_uninstall(env=os.environ)
        if not dry_run:
            apply_uninstall(plan, os.environ)
    except SetupError as exc:
        fail(exc.message, exc.code.exit_status)
    _show(plan, as_json, show_text=False)
