"""The vaultd MCP entry in one host file: plan setting it, and plan putting back what it replaced.

Only the ``vaultd`` entry is ever touched; a file setup cannot edit faithfully is refused, not
rewritten, with the entry to add by hand. Committing a planned change is :mod:`commit`'s.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from vaultctl.setup.commit import Change, FileState, sha
from vaultctl.setup.errors import (
    CannotEditFaithfully,
    EntryChanged,
    FileTooLarge,
    FolderNotFound,
    MalformedConfig,
    NoRecord,
    UnsafeFile,
    UsageError,
)
from vaultctl.setup.hosts import ENTRY_NAME, HOSTS, MCP_TOOLS, PORTABLE_COMMAND, FileFormat, Host, launch_env
from vaultctl.setup.plan import Action, Mode, make_plan
from vaultctl.setup.records import EntryRecord, RecordStore
from vaultctl.setup.scopes import claude_shadows

if TYPE_CHECKING:
    from collections.abc import Mapping

    from vaultctl.setup.edits import Format

MANUAL = (MalformedConfig, CannotEditFaithfully, UnsafeFile, FileTooLarge)
"""Refusals about the file itself: the user can still make the change by hand."""


def resolve_host(name: str, project: Path | None) -> tuple[Host, Path | None]:
    """The host named ``name`` and the absolute project folder, checked.

    Raises:
        UsageError: INVALID_PARAMS, an unknown host, or a project for a host without one.
        FolderNotFound: NOT_FOUND, the project folder does not exist.
    """
    host = HOSTS.get(name)
    if host is None:
        raise UsageError(f"Unknown host {name!r}; choose one of: {', '.join(HOSTS)}, or all.")
    if project is not None:
        if not host.projects:
            raise UsageError(f"{host.title} has no per-project file setup knows; drop the project option.")
        project = Path(os.path.abspath(project))
        if not project.is_dir():
            raise FolderNotFound(f"The project folder {project} does not exist.", path=project)
    return host, project


@dataclass(frozen=True, slots=True)
class EntryTarget:
    """One host file's MCP entry: where it is, how it is written, where its record lives."""

    host: Host
    path: Path
    fmt: Format
    store: RecordStore
    env: Mapping[str, str]
    project: Path | None = None  #: set for a per-project file, which is shared through its repository
    tools: str = MCP_TOOLS  #: the entry's ``--tools``

    ours: ClassVar[bool] = False  #: the entry may hold the user's secrets: its plans mask them

    @classmethod
    def resolve(cls, name: str, project: Path | None, env: Mapping[str, str], tools: str = MCP_TOOLS) -> EntryTarget:
        host, project = resolve_host(name, project)
        path = Path(os.path.abspath(host.config_path(env, project)))
        return cls(host, path, format_for(host), RecordStore.for_env(env), env, project, tools)

    @property
    def record_path(self) -> Path:
        return self.store.path_for(self.host.name, self.path)

    def setup(self, command: str, mode: Mode, state: FileState | None = None) -> Change:
        """Plan setting the entry on ``state`` (read from disk when None)."""
        check_command(command)
        entry, notes = self._entry(command)
        try:
            state = state or FileState.read(self.path)
            change = self._setup(entry, mode, state)
        except MANUAL as exc:
            exc.manual = self.fmt.manual(entry, None if state is None else state.text)
            raise
        if self.host.name == "claude":
            notes += tuple(s.advice() for s in claude_shadows(self.env, Path.cwd(), self.project))
        if notes:
            change = replace(change, plan=replace(change.plan, notes=(*notes, *change.plan.notes)))
        return change

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
            return self.host.entry(command, locations, self.tools), notes
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
        return self.host.entry(PORTABLE_COMMAND, tools=self.tools), notes

    def _setup(self, entry: dict[str, Any], mode: Mode, state: FileState) -> Change:
        if state.text is None:
            new = self.fmt.fresh(entry)
            record = EntryRecord(
                host=self.host.name,
                path=str(self.path),
                file_existed=False,
                created_sha256=sha(new.encode("utf-8")),
                written=entry,
                container_existed=False,
                spacing="",
            )
            plan = make_plan(self, mode, Action.CREATE_FILE, old=None, new=new, before=None, after=entry)
            return Change(state, plan, new, saves=(record,), record=self.record_path)
        text = state.text
        doc = self.fmt.parse(text, self.path)
        found = doc.entry()
        if found is not None and found.value == entry:
            plan = make_plan(self, mode, Action.NONE, old=text, new=text, before=entry, after=entry)
            return Change(state, plan, text)
        put = doc.put(entry)
        new = put.splice.apply(text)
        previous = self.store.load(self.host.name, self.path)
        if previous is not None and found is not None and found.value == previous.written:
            # Re-applying over our own entry (vaultctl moved): undo still goes back to before setup.
            created = previous.created_sha256
            if not previous.file_existed and created == state.sha():
                created = sha(new.encode("utf-8"))
            record = msgspec.structs.replace(previous, written=entry, created_sha256=created)
        else:
            record = EntryRecord(
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
        plan = make_plan(self, mode, action, old=text, new=new, before=before, after=entry)
        return Change(state, plan, new, saves=(record,), record=self.record_path)

    def has_record(self) -> bool:
        return self.store.load(self.host.name, self.path) is not None

    def undo(self, state: FileState | None = None) -> Change:
        """Plan putting back what the record says the entry was, on ``state`` (read when None).

        Raises:
            NoRecord: NOT_FOUND, setup never applied to this file (or it was undone already).
            EntryChanged: CONFLICT, the entry changed since setup wrote it.
        """
        record = self.store.load(self.host.name, self.path)
        if record is None:
            raise NoRecord(
                f"setup has no record of adding vaultd to {self.path}, so there is nothing to undo "
                "(it undoes only what it applied). Edit the file by hand if needed.",
                path=self.path,
            )
        state = state or FileState.read(self.path)
        text = state.text
        found = None if text is None else self.fmt.parse(text, self.path).entry()
        prior = None if record.prior_text is None else self.fmt.value_of(record.prior_text)
        drops = (self.record_path,)
        if found is None:
            if record.prior_text is not None:
                raise EntryChanged(
                    f"The vaultd entry in {self.path} was removed since setup wrote it; undo will not "
                    "bring back the earlier one over that change, so nothing was written.",
                    path=self.path,
                )
            notes = ("The vaultd entry is already gone; the record was dropped.",)
            plan = make_plan(self, Mode.UNDO, Action.NONE, old=text, new=text, before=None, after=None, notes=notes)
            return Change(state, plan, text, drops=drops, record=self.record_path)
        assert text is not None
        if found.value != record.written:
            raise EntryChanged(
                f"The vaultd entry in {self.path} was changed since setup wrote it; undo would overwrite "
                "that change, so nothing was written. Edit the entry by hand, or run setup with apply "
                "to take it over.",
                path=self.path,
            )
        if not record.file_existed and (record.created_sha256 == state.sha() or text == self.fmt.fresh(found.value)):
            # Setup created the file and it still holds nothing else (the second test covers an
            # entry updated since in a file that another change of setup's shares).
            plan = make_plan(self, Mode.UNDO, Action.DELETE_FILE, old=text, new=None, before=found.value, after=None)
            return Change(state, plan, None, drops=drops, record=self.record_path)
        doc = self.fmt.parse(text, self.path)
        splice = doc.revert(record.prior_text, record.container_existed, record.spacing)
        new = splice.apply(text)
        action = Action.REMOVE if record.prior_text is None else Action.RESTORE
        plan = make_plan(self, Mode.UNDO, action, old=text, new=new, before=found.value, after=prior)
        return Change(state, plan, new, drops=drops, record=self.record_path)

    def untouched(self, state: FileState | None = None) -> Change:
        """Undo's answer when setup has no record of the entry (the guard alone is undone)."""
        state = state or FileState.read(self.path)
        note = f"setup has no record of adding vaultd's MCP entry to {self.path}; it was left alone."
        plan = make_plan(self, Mode.UNDO, Action.NONE, old=state.text, new=state.text, before=None, after=None, notes=(note,))
        return Change(state, plan, state.text)


def format_for(host: Host) -> Format:
    # Imported here so that the CLI loads only the editor (and TOML libraries) it needs.
    if host.format is FileFormat.TOML:
        from vaultctl.setup.tomlfile import TomlFormat

        return TomlFormat(host.container, ENTRY_NAME)
    from vaultctl.setup.jsonfile import JsonFormat

    return JsonFormat(host.container, ENTRY_NAME)


def check_command(command: str) -> None:
    if not os.path.isabs(command) or any(c in command for c in "\0\r\n"):
        raise UsageError("The vaultctl command must be given as an absolute path.")
    try:
        command.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError("The vaultctl command's path is not valid UTF-8; hosts could not read it.") from exc
