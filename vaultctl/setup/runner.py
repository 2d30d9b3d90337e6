"""Plan, apply and undo the vaultd entry in one host's file, or in every installed host's.

The order of writes is chosen for reversibility: on apply the receipt is saved before the host
file changes (a crash between them leaves a receipt undo can judge, never a change without one);
on undo the host file is restored before its receipt is dropped.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import msgspec

from vaultctl.setup import files
from vaultctl.setup.edits import Format
from vaultctl.setup.errors import (
    CannotEditFaithfully,
    EntryChanged,
    FileTooLarge,
    FolderNotFound,
    MalformedConfig,
    NoReceipt,
    SetupError,
    UnsafeFile,
    UsageError,
)
from vaultctl.setup.hosts import ENTRY_NAME, HOSTS, PORTABLE_COMMAND, FileFormat, Host, launch_env
from vaultctl.setup.plan import Action, HostOutcome, Mode, SetupPlan, Status, make_plan
from vaultctl.setup.receipts import Receipt, ReceiptStore
from vaultctl.setup.scopes import claude_shadows

_MANUAL = (MalformedConfig, CannotEditFaithfully, UnsafeFile, FileTooLarge)
"""Refusals about the file itself: the user can still add the entry by hand."""


def plan_setup(host: str, command: str, *, project: Path | None = None, env: Mapping[str, str] | None = None) -> SetupPlan:
    """Show what ``apply_setup`` would do; write nothing.

    Raises:
        SetupError: see :mod:`vaultctl.setup.errors`; the file is never touched.
    """
    return _Target.resolve(host, project, env).setup(command, Mode.PLAN).plan


def apply_setup(host: str, command: str, *, project: Path | None = None, env: Mapping[str, str] | None = None) -> SetupPlan:
    """Write the entry (``command`` must be absolute) and a receipt; a no-op if already there.

    Raises:
        SetupError: see :mod:`vaultctl.setup.errors`; on a refusal nothing is written.
    """
    return _Target.resolve(host, project, env).setup(command, Mode.APPLY).commit()


def undo_setup(
    host: str,
    *,
    project: Path | None = None,
    env: Mapping[str, str] | None = None,
    dry_run: bool = False,
) -> SetupPlan:
    """Put back what the receipt says the entry was, if the entry is still the one setup wrote.

    Raises:
        NoReceipt: NOT_FOUND, setup never applied to this file (or it was undone already).
        EntryChanged: CONFLICT, the entry changed since setup wrote it.
        SetupError: the file is malformed or unsafe now; nothing is written.
    """
    change = _Target.resolve(host, project, env).undo()
    return change.plan if dry_run else change.commit()


def run(
    host: str,
    mode: Mode,
    command: str,
    *,
    project: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> SetupPlan:
    """``vaultctl setup HOST [--apply | --undo]`` in one call (``command`` unused for undo)."""
    if mode is Mode.UNDO:
        return undo_setup(host, project=project, env=env)
    if mode is Mode.APPLY:
        return apply_setup(host, command, project=project, env=env)
    return plan_setup(host, command, project=project, env=env)


def setup_all(mode: Mode, command: str, *, env: Mapping[str, str] | None = None) -> list[HostOutcome]:
    """Every host in turn; one host's refusal does not stop the others.

    A host that does not seem installed is skipped (setup would otherwise create, say,
    ``~/.cursor`` for someone who never ran Cursor); naming the host alone sets it up anyway.
    Under undo, a host with no receipt is skipped.
    """
    env = os.environ if env is None else env
    store = ReceiptStore.for_env(env)
    outcomes: list[HostOutcome] = []
    for name, host in HOSTS.items():
        try:
            if mode is Mode.UNDO:
                path = Path(os.path.abspath(host.config_path(env)))
                if store.load(name, path) is None:
                    note = f"setup has not changed {path}; nothing to undo."
                    outcomes.append(HostOutcome(name, Status.SKIPPED, note=note))
                    continue
            elif not host.installed(env):
                note = (
                    f"{host.title} does not seem to be installed ({host.markers(env)[0]} not found); "
                    f"run `vaultctl setup {name} --apply` to set it up anyway."
                )
                outcomes.append(HostOutcome(name, Status.SKIPPED, note=note))
                continue
            plan = run(name, mode, command, env=env)
        except SetupError as exc:
            outcomes.append(HostOutcome(name, Status.FAILED, error=exc))
        else:
            outcomes.append(HostOutcome(name, Status.DONE, plan=plan))
    return outcomes


@dataclass(frozen=True, slots=True)
class _Change:
    """A computed change and what committing it takes."""

    target: _Target
    plan: SetupPlan
    before: files.Snapshot | None
    new_text: str | None  #: None: the file is deleted (undo of a created file)
    receipt: Receipt | None  #: to save before writing (apply)
    drop_receipt: bool  #: to drop after writing (undo)

    def commit(self) -> SetupPlan:
        target, plan = self.target, self.plan
        if plan.action is Action.NONE:
            if self.drop_receipt:
                target.store.drop(target.host.name, target.path)
            return plan
        receipt_path = target.store.path_for(target.host.name, target.path)
        if self.receipt is not None:
            previous = target.store.load(target.host.name, target.path)
            target.store.save(self.receipt)
            try:
                self._write()
            except BaseException:
                # The file did not change: the receipt must not claim it did. The write's own
                # error is the one to report, so a failed rollback stays quiet.
                with contextlib.suppress(SetupError):
                    if previous is not None:
                        target.store.save(previous)
                    else:
                        target.store.drop(target.host.name, target.path)
                raise
        else:
            self._write()
        if self.drop_receipt:
            target.store.drop(target.host.name, target.path)
        return replace(plan, applied=True, receipt=receipt_path)

    def _write(self) -> None:
        path = self.target.path
        if self.new_text is None:
            assert self.before is not None
            files.remove(path, before=self.before)
            return
        if self.before is None:
            files.make_folder(path.parent)
        files.write(path, self.new_text.encode("utf-8"), before=self.before)


@dataclass(frozen=True, slots=True)
class _Target:
    """One host file: where it is, how it is written, where its receipt lives."""

    host: Host
    path: Path
    fmt: Format
    store: ReceiptStore
    env: Mapping[str, str]
    project: Path | None = None  #: set for a per-project file, which is shared through its repository

    @classmethod
    def resolve(cls, name: str, project: Path | None, env: Mapping[str, str] | None) -> _Target:
        env = os.environ if env is None else env
        host = HOSTS.get(name)
        if host is None:
            raise UsageError(f"Unknown host {name!r}; choose one of: {', '.join(HOSTS)}, or all.")
        if project is not None:
            if not host.projects:
                raise UsageError(f"{host.title} has no per-project file setup knows; drop the project option.")
            project = Path(os.path.abspath(project))
            if not project.is_dir():
                raise FolderNotFound(f"The project folder {project} does not exist.", path=project)
        path = Path(os.path.abspath(host.config_path(env, project)))
        return cls(host, path, format_for(host), ReceiptStore.for_env(env), env, project)

    def setup(self, command: str, mode: Mode) -> _Change:
        _check_command(command)
        entry, notes = self._entry(command)
        try:
            change = self._setup(entry, mode)
        except _MANUAL as exc:
            exc.manual = self.fmt.manual(entry, self._text_or_none())
            raise
        if self.host.name == "claude":
            notes += tuple(s.advice() for s in claude_shadows(self.env, Path.cwd(), self.project))
        if notes:
            change = replace(change, plan=replace(change.plan, notes=(*notes, *change.plan.notes)))
        return change

    def _text_or_none(self) -> str | None:
        try:
            snap = files.read(self.path)
            return None if snap is None else snap.data.decode("utf-8")
        except (SetupError, UnicodeDecodeError):
            return None

    def _entry(self, command: str) -> tuple[dict[str, Any], tuple[str, ...]]:
        """The entry for this file, and what the user should know about it.

        A user's own file names this machine's ``vaultctl`` and carries the vaultd locations set
        here, so the host reaches this daemon whatever environment it starts servers with. A
        project file is shared through the repository: it names ``vaultctl`` as found on each
        user's PATH, and no path of this machine.
        """
        locations = launch_env(self.env)
        shown = ", ".join(f"{k}={v}" for k, v in locations.items())
        notes: tuple[str, ...] = ()
        if self.project is None:
            if locations:
                notes = (
                    f"The entry sets {shown} for the server, so {self.host.title} reaches this daemon "
                    "even when it starts servers with an environment of its own.",
                )
            return self.host.entry(command, locations), notes
        found = shutil.which(PORTABLE_COMMAND, path=self.env.get("PATH", os.defpath))
        notes = (
            f"{self.path.name} is shared through the project's repository, so the entry runs "
            f"`{PORTABLE_COMMAND}` from each user's PATH"
            + (
                f" (here: {found})."
                if found
                else f"; it is not on PATH here: put {os.path.dirname(command)} on PATH, or install vaultd so that `{PORTABLE_COMMAND}` is."
            ),
        )
        if locations:
            notes += (
                f"{shown} is set here but is not written into a shared file; set it in the environment "
                f"{self.host.title} starts from, or use the user-scope entry (setup without a project).",
            )
        return self.host.entry(PORTABLE_COMMAND), notes

    def _setup(self, entry: dict[str, Any], mode: Mode) -> _Change:
        snap = files.read(self.path)
        if snap is None:
            new = self.fmt.fresh(entry)
            receipt = Receipt(
                host=self.host.name,
                path=str(self.path),
                file_existed=False,
                created_sha256=_sha(new.encode("utf-8")),
                written=entry,
                container_existed=False,
                spacing="",
            )
            plan = self._plan(mode, Action.CREATE_FILE, old=None, new=new, before=None, after=entry)
            return _Change(self, plan, None, new, receipt, drop_receipt=False)
        text = _decode(snap.data, self.path)
        doc = self.fmt.parse(text, self.path)
        found = doc.entry()
        if found is not None and found.value == entry:
            plan = self._plan(mode, Action.NONE, old=text, new=text, before=entry, after=entry)
            return _Change(self, plan, snap, None, None, drop_receipt=False)
        put = doc.put(entry)
        new = put.splice.apply(text)
        previous = self.store.load(self.host.name, self.path)
        if previous is not None and found is not None and found.value == previous.written:
            # Re-applying over our own entry (vaultctl moved): undo still goes back to before setup.
            created = previous.created_sha256
            if not previous.file_existed and created == _sha(snap.data):
                created = _sha(new.encode("utf-8"))
            receipt = msgspec.structs.replace(previous, written=entry, created_sha256=created)
        else:
            receipt = Receipt(
                host=self.host.name,
                path=str(self.path),
                file_existed=True,
                prior_text=put.prior_text,
                written=entry,
                container_existed=put.container_existed,
                spacing=put.spacing,
            )
        action = Action.ADD if found is None else Action.REPLACE
        before = None if found is None else found.value
        plan = self._plan(mode, action, old=text, new=new, before=before, after=entry)
        return _Change(self, plan, snap, new, receipt, drop_receipt=False)

    def undo(self) -> _Change:
        receipt = self.store.load(self.host.name, self.path)
        if receipt is None:
            raise NoReceipt(
                f"setup has no record of adding vaultd to {self.path}, so there is nothing to undo "
                "(it undoes only what it applied). Edit the file by hand if needed.",
                path=self.path,
            )
        snap = files.read(self.path)
        text = None if snap is None else _decode(snap.data, self.path)
        found = None if text is None else self.fmt.parse(text, self.path).entry()
        prior = None if receipt.prior_text is None else self.fmt.value_of(receipt.prior_text)
        if found is None:
            if receipt.prior_text is not None:
                raise EntryChanged(
                    f"The vaultd entry in {self.path} was removed since setup wrote it; undo will not "
                    "bring back the earlier one over that change, so nothing was written.",
                    path=self.path,
                )
            notes = ("The vaultd entry is already gone; the receipt was dropped.",)
            plan = self._plan(Mode.UNDO, Action.NONE, old=text, new=text, before=None, after=None, notes=notes)
            return _Change(self, plan, snap, text, None, drop_receipt=True)
        assert snap is not None and text is not None
        if found.value != receipt.written:
            raise EntryChanged(
                f"The vaultd entry in {self.path} was changed since setup wrote it; undo would overwrite "
                "that change, so nothing was written. Edit the entry by hand, or run setup with apply "
                "to take it over.",
                path=self.path,
            )
        if not receipt.file_existed and receipt.created_sha256 == _sha(snap.data):
            plan = self._plan(Mode.UNDO, Action.DELETE_FILE, old=text, new=None, before=found.value, after=None)
            return _Change(self, plan, snap, None, None, drop_receipt=True)
        doc = self.fmt.parse(text, self.path)
        splice = doc.revert(receipt.prior_text, receipt.container_existed, receipt.spacing)
        new = splice.apply(text)
        action = Action.REMOVE if receipt.prior_text is None else Action.RESTORE
        plan = self._plan(Mode.UNDO, action, old=text, new=new, before=found.value, after=prior)
        return _Change(self, plan, snap, new, None, drop_receipt=True)

    def _plan(
        self,
        mode: Mode,
        action: Action,
        *,
        old: str | None,
        new: str | None,
        before: Any,
        after: Any,
        notes: tuple[str, ...] = (),
    ) -> SetupPlan:
        if action is Action.CREATE_FILE and not self.path.parent.exists():
            notes = (*notes, f"{self.path.parent} will be created (mode 0700).")
        return make_plan(self.host.name, self.path, mode, action, old=old, new=new, before=before, after=after, notes=notes)


def format_for(host: Host) -> Format:
    # Imported here so that the CLI loads only the editor (and TOML libraries) it needs.
    if host.format is FileFormat.TOML:
        from vaultctl.setup.tomlfile import TomlFormat

        return TomlFormat(host.container, ENTRY_NAME)
    from vaultctl.setup.jsonfile import JsonFormat

    return JsonFormat(host.container, ENTRY_NAME)


def _check_command(command: str) -> None:
    if not os.path.isabs(command) or any(c in command for c in "\0\r\n"):
        raise UsageError("The vaultctl command must be given as an absolute path.")
    try:
        command.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError("The vaultctl command's path is not valid UTF-8; hosts could not read it.") from exc


def _decode(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedConfig(f"{path} is not UTF-8 text (byte {exc.start}); fix its encoding and run setup again.", path=path) from exc


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
