"""``vaultctl daemon install`` and ``uninstall``: the service files, written reversibly.

Like ``vaultctl setup``: a plan first (``--dry-run`` stops there), then the record, then the
files, then the service manager. The record is saved before any file changes, so a crash leaves
a record uninstall can judge, never a change without one; a manager that refuses to start the
service undoes the install (files back as they were, no record), so nothing is left half-done.
Uninstall acts only on files that still hold the bytes install wrote, and puts back what was
there before (or removes what install created).
"""

from __future__ import annotations

import enum
import hashlib
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from protocol.errors import ErrorCode
from protocol.location import resolve_home, resolve_socket
from vaultctl.service.launch import Launch, daemon_launch
from vaultctl.service.record import (
    BadRecord,
    Manager,
    ServiceRecord,
    WrittenFile,
    earlier_record_path,
    load_record,
    record_path,
    stamped,
)
from vaultctl.service.units import LABEL, SERVICE_UNIT, SOCKET_UNIT, BadPath, ServiceSpec, UnitSyntax, launchd_plist
from vaultctl.service.units import systemd_service as render_service
from vaultctl.service.units import systemd_socket as render_socket
from vaultctl.setup import files
from vaultctl.setup.errors import EntryChanged, MalformedConfig, NoRecord, SetupError, UsageError
from vaultctl.setup.homes import home_of

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

MANAGER_TIMEOUT_S = 30.0


class ManagerFailed(SetupError):
    """The service manager refused a command (or is not there); the install was undone."""

    code = ErrorCode.UNAVAILABLE


class Change(enum.StrEnum):
    CREATE = "create"
    REPLACE = "replace"
    UNCHANGED = "unchanged"
    REMOVE = "remove"
    RESTORE = "restore"


@dataclass(frozen=True, slots=True)
class FilePlan:
    path: Path
    change: Change
    text: str | None  #: what the file will hold; None when it is removed
    before: files.Snapshot | None = None
    prior: str | None = None  #: what the record keeps of the file before install


@dataclass
class ServicePlan:
    """What install or uninstall does: files, then commands; ``applied`` once done."""

    manager: Manager
    action: str  #: "install" or "uninstall"
    files: list[FilePlan]
    commands: list[list[str]]
    notes: list[str] = field(default_factory=list)
    socket: str = ""
    start_command: list[str] = field(default_factory=list)
    applied: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "manager": str(self.manager),
            "action": self.action,
            "applied": self.applied,
            "socket": self.socket,
            "files": [{"path": str(f.path), "change": str(f.change), "text": f.text} for f in self.files],
            "commands": self.commands,
            "notes": self.notes,
        }


def default_manager() -> Manager:
    """systemd on Linux, launchd on macOS.

    Raises:
        UsageError: INVALID_PARAMS on any other system.
    """
    if sys.platform.startswith("linux"):
        return Manager.SYSTEMD
    if sys.platform == "darwin":
        return Manager.LAUNCHD
    raise UsageError(f"no service manager vaultd knows on {sys.platform}; run 'vaultd' from your own service setup")


def _service_files(manager: Manager, env: Mapping[str, str]) -> list[Path]:
    if manager is Manager.SYSTEMD:
        config = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home_of(env) / ".config"
        folder = config / "systemd" / "user"
        return [folder / SOCKET_UNIT, folder / SERVICE_UNIT]
    return [home_of(env) / "Library" / "LaunchAgents" / f"{LABEL}.plist"]


def _systemd_socket_value(socket: Path, env: Mapping[str, str]) -> str:
    """``%t/vaultd/vaultd.sock`` when the client's socket is in the user manager's runtime folder."""
    runtimes = {Path(f"/run/user/{os.getuid()}")}
    if env.get("XDG_RUNTIME_DIR"):
        runtimes.add(Path(env["XDG_RUNTIME_DIR"]).absolute())
    for runtime in runtimes:
        if socket.parent.parent == runtime and socket.parent.name == "vaultd":
            return UnitSyntax("%t/vaultd/" + socket.name.replace("%", "%%"))
    return str(socket)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def build_spec(
    manager: Manager, env: Mapping[str, str], vaults: Sequence[str], idle_exit_s: float, launch: Launch | None = None
) -> tuple[ServiceSpec, list[str]]:
    """The spec for this machine: this installation's vaultd, the client's home and socket."""
    user = home_of(env).absolute()
    home = resolve_home(env)
    socket = resolve_socket(home, env)
    notes: list[str] = []
    writable = [str(user)]
    if not _inside(home, user):
        writable.append(str(home))
    outside = sorted({os.path.realpath(v) for v in vaults if not _inside(Path(os.path.realpath(v)), user)})
    if outside:
        notes.append(f"vaults outside your home stay writable for the service: {', '.join(outside)}")
    if manager is Manager.SYSTEMD:
        notes.append(
            "a vault added later outside your home is read-only to the sandboxed service: "
            "run 'vaultctl daemon install' again after adding it"
        )
    spec = ServiceSpec(
        launch=launch or daemon_launch(),
        home=str(home),
        socket=_systemd_socket_value(socket, env) if manager is Manager.SYSTEMD else str(socket),
        writable=tuple(writable),
        vaults=tuple(outside),
        logs=str(home / "logs"),
        idle_exit_s=idle_exit_s,
    )
    return spec, notes


def _commands(manager: Manager, env: Mapping[str, str], reinstall: bool, target: Path) -> tuple[list[list[str]], list[str]]:
    """The manager commands that (re)start the installed service, and the one that starts it by hand."""
    if manager is Manager.SYSTEMD:
        start = ["systemctl", "--user", "start", SOCKET_UNIT]
        steps = [["systemctl", "--user", "stop", SERVICE_UNIT, SOCKET_UNIT]] if reinstall else []
        steps += [["systemctl", "--user", "daemon-reload"], ["systemctl", "--user", "enable", "--now", SOCKET_UNIT]]
        return steps, start
    domain = f"gui/{os.getuid()}"
    steps = [["launchctl", "bootout", f"{domain}/{LABEL}"]] if reinstall else []
    steps.append(["launchctl", "bootstrap", domain, str(target)])
    return steps, ["launchctl", "bootstrap", domain, str(target)]


def _stop_commands(manager: Manager) -> list[list[str]]:
    if manager is Manager.SYSTEMD:
        return [["systemctl", "--user", "disable", "--now", SOCKET_UNIT, SERVICE_UNIT]]
    return [["launchctl", "bootout", f"gui/{os.getuid()}/{LABEL}"]]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _text(snap: files.Snapshot, path: Path) -> str:
    try:
        return snap.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedConfig(f"{path} is not UTF-8 text; move it away and install again", path=path) from exc


def _record(env: Mapping[str, str]) -> ServiceRecord | None:
    try:
        return load_record(resolve_home(env))
    except BadRecord as exc:
        raise MalformedConfig(str(exc)) from exc


def plan_install(
    manager: Manager,
    *,
    env: Mapping[str, str],
    vaults: Sequence[str] = (),
    idle_exit_s: float,
    start: bool = True,
    launch: Launch | None = None,
) -> ServicePlan:
    """What install would write and run; nothing is touched.

    Raises:
        UsageError: a path the unit files cannot carry; another manager's service is installed.
        SetupError: a service file is unsafe to replace (a symlink, not UTF-8, ...).
    """
    previous = _record(env)
    if previous is not None and previous.manager is not manager:
        raise UsageError(f"vaultd is installed for {previous.manager}; run 'vaultctl daemon uninstall' first")
    spec, notes = build_spec(manager, env, vaults, idle_exit_s, launch)
    targets = _service_files(manager, env)
    try:
        texts = [render_socket(spec), render_service(spec)] if manager is Manager.SYSTEMD else [launchd_plist(spec)]
    except BadPath as exc:
        raise UsageError(str(exc)) from exc
    ours = {Path(f.path): f for f in previous.files} if previous else {}
    plans = []
    for path, text in zip(targets, texts, strict=True):
        snap = files.read(path)
        if snap is None:
            plans.append(FilePlan(path, Change.CREATE, text, None, None))
            continue
        current = _text(snap, path)
        mine = ours.get(path)
        if mine is not None and mine.sha256 == _sha(current):
            prior = mine.prior  # our own file: uninstall still goes back to what was there first
        else:
            prior = current
            notes.append(f"{path} exists and is not one install wrote; it is kept in the record and put back by uninstall")
        change = Change.UNCHANGED if current == text else Change.REPLACE
        plans.append(FilePlan(path, change, text, snap, prior))
    commands, start_command = _commands(manager, env, previous is not None and previous.started, targets[-1])
    if not start:
        notes.append(f"not started (--no-start); start it with: {' && '.join(' '.join(c) for c in commands if 'stop' not in c)}")
        commands = []
    return ServicePlan(manager, "install", plans, commands, notes, socket=str(spec.socket), start_command=start_command)


def apply_install(plan: ServicePlan, env: Mapping[str, str]) -> ServicePlan:
    """Save the record, write the files, run the manager; on a manager's refusal, undo all of it.

    Raises:
        ManagerFailed: a command failed; the files and record are back as they were.
        SetupError: a file changed meanwhile or could not be written; nothing is half-done.
    """
    home = resolve_home(env)
    where = record_path(home)
    old_record = files.read(where)
    record = ServiceRecord(
        manager=plan.manager,
        socket=plan.socket,
        files=[WrittenFile(path=str(f.path), sha256=_sha(f.text or ""), prior=f.prior) for f in plan.files],
        started=bool(plan.commands),
        start_command=plan.start_command,
    )
    files.make_folder(where.parent)
    files.write(where, stamped(record), before=old_record)
    written: list[FilePlan] = []
    try:
        for f in plan.files:
            if f.change is Change.UNCHANGED:
                continue
            files.make_folder(f.path.parent)
            files.write(f.path, (f.text or "").encode("utf-8"), before=f.before)
            written.append(f)
        _run(plan.commands)
    except BaseException:
        _put_back(written)
        _restore_record(where, old_record)
        raise
    try:
        _drop_earlier_record(home)
    except SetupError:
        pass  # the current record speaks for the service; the earlier one is only read without it
    plan.applied = True
    return plan


def _put_back(written: Sequence[FilePlan]) -> None:
    """Best effort: each file back to what it was before this install (its error is the one to report)."""
    for f in reversed(written):
        try:
            now = files.read(f.path)
            if now is None:
                continue
            if f.before is None:
                files.remove(f.path, before=now)
            else:
                files.write(f.path, f.before.data, before=now)
        except SetupError:
            continue


def _restore_record(where: Path, old: files.Snapshot | None) -> None:
    try:
        now = files.read(where)
        if old is None and now is not None:
            files.remove(where, before=now)
        elif old is not None:
            files.write(where, old.data, before=now)
    except SetupError:
        pass


def plan_uninstall(*, env: Mapping[str, str]) -> ServicePlan:
    """What uninstall would do; nothing is touched.

    Raises:
        NoRecord: NOT_FOUND, nothing was installed for this home.
        EntryChanged: CONFLICT, a file changed since install wrote it (nothing is done).
    """
    record = _record(env)
    if record is None:
        raise NoRecord("no service is installed for this vaultd home ('vaultctl daemon install' writes one); nothing to undo")
    plans = []
    for f in record.files:
        path = Path(f.path)
        snap = files.read(path)
        if snap is None:
            plans.append(FilePlan(path, Change.UNCHANGED, None, None, f.prior))
            continue
        if _sha(_text(snap, path)) != f.sha256:
            raise EntryChanged(
                f"{path} changed since 'vaultctl daemon install' wrote it; uninstall would lose that change, so "
                "nothing was done. Move the file away (or put back what install wrote), then uninstall again.",
                path=path,
            )
        change = Change.REMOVE if f.prior is None else Change.RESTORE
        plans.append(FilePlan(path, change, f.prior, snap, f.prior))
    commands = _stop_commands(record.manager) if record.started else []
    after = [["systemctl", "--user", "daemon-reload"]] if record.started and record.manager is Manager.SYSTEMD else []
    plan = ServicePlan(record.manager, "uninstall", plans, commands + after, socket=record.socket)
    plan.notes.append("vaultctl starts the daemon itself again when a command needs it")
    return plan


def apply_uninstall(plan: ServicePlan, env: Mapping[str, str]) -> ServicePlan:
    """Stop the service, put the files back, drop the record (last, so a failure can be retried).

    Raises:
        ManagerFailed: the manager would not stop the service; no file was touched.
    """
    stop = [c for c in plan.commands if "daemon-reload" not in c]
    _run(stop)
    for f in plan.files:
        if f.change is Change.REMOVE and f.before is not None:
            files.remove(f.path, before=f.before)
        elif f.change is Change.RESTORE and f.before is not None:
            files.write(f.path, (f.prior or "").encode("utf-8"), before=f.before)
    _run([c for c in plan.commands if "daemon-reload" in c])
    _drop_earlier_record(resolve_home(env))
    where = record_path(resolve_home(env))
    snap = files.read(where)
    if snap is not None:
        files.remove(where, before=snap)
    plan.applied = True
    return plan


def _drop_earlier_record(home: Path) -> None:
    """Take away the record under its earlier name, once the current one speaks for the service."""
    where = earlier_record_path(home)
    snap = files.read(where)
    if snap is not None:
        files.remove(where, before=snap)


def _run(commands: Sequence[Sequence[str]]) -> None:
    for argv in commands:
        try:
            done = subprocess.run(list(argv), capture_output=True, text=True, timeout=MANAGER_TIMEOUT_S, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ManagerFailed(f"'{' '.join(argv)}' could not run ({exc}); install with --no-start and start it yourself") from exc
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip().splitlines()
            raise ManagerFailed(
                f"'{' '.join(argv)}' failed ({said[-1] if said else f'exit {done.returncode}'}); nothing was left changed. "
                "Without a running service manager, install with --no-start and start vaultd when one runs"
            )
