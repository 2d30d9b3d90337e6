"""The guard's hooks in one host file: plan appending vaultd's matcher groups, and plan taking them
out again.

For each event the host row names (:class:`hosts.GuardHooks`), setup appends one matcher group
running ``<vaultctl> guard`` after the user's own groups. Applying again is a no-op while the
groups are there; a group setup wrote with a command that has since moved is updated in place.
Undo takes out exactly what setup added, and only while it is still what setup wrote: a group the
user changed since is left alone (CONFLICT), as is a group setup did not write. Committing a
planned change is :mod:`commit`'s.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from vaultctl.setup.commit import Change, FileState, sha
from vaultctl.setup.entry import MANUAL, check_command
from vaultctl.setup.errors import EntryChanged, SetupError
from vaultctl.setup.hooksfile import HOOKS_KEY, HooksDocument
from vaultctl.setup.hostnotes import host_notes
from vaultctl.setup.hosts import GUARD_ARGS, PORTABLE_COMMAND, GuardHooks, Host, launch_env
from vaultctl.setup.plan import Action, Mode, make_plan
from vaultctl.setup.records import GuardRecord, GuardStep, RecordStore

if TYPE_CHECKING:
    from collections.abc import Mapping

ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_EMPTY = "{}\n"
"""What a file setup creates starts as, so that a created file's groups go in by the same splices."""


def guard_command(vaultctl: str, locations: Mapping[str, str]) -> str:
    """The command line a host runs for the guard.

    Hosts run a hook's command through a shell, so the path is quoted for one. The vaultd
    locations set here (the MCP entry carries them as its ``env``) go in front as assignments:
    hooks have no ``env`` of their own, and without them the guard would ask another daemon.
    """
    words = [f"{key}={shlex.quote(value)}" for key, value in sorted(locations.items())]
    return " ".join([*words, shlex.quote(vaultctl), *GUARD_ARGS])


def is_guard_hook(hook: Any) -> bool:
    """Does this hook run ``vaultctl guard`` (any vaultctl, any locations in front)?"""
    if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
        return False
    try:
        words = shlex.split(hook["command"])
    except ValueError:
        return False
    while words and ASSIGNMENT.match(words[0]):
        words = words[1:]
    return len(words) == 2 and os.path.basename(words[0]) == PORTABLE_COMMAND and words[1] == GUARD_ARGS[0]


@dataclass(frozen=True, slots=True)
class GuardTarget:
    """One host file's guard hooks: where they go, and where their record lives."""

    host: Host
    hooks: GuardHooks
    path: Path
    store: RecordStore
    env: Mapping[str, str]
    project: Path | None = None

    ours: ClassVar[bool] = True  #: its plans show the hook groups setup wrote as they are

    @classmethod
    def resolve(cls, host: Host, project: Path | None, env: Mapping[str, str]) -> GuardTarget | None:
        """The host's hooks file, or None for a host without a guard hook."""
        if host.guard is None:
            return None
        path = Path(os.path.abspath(host.guard.path(env, project)))
        return cls(host, host.guard, path, RecordStore.for_env(env), env, project)

    @property
    def record_path(self) -> Path:
        return self.store.path_for(self.host.name, self.path, GuardRecord)

    def has_record(self) -> bool:
        return self.store.load_guard(self.host.name, self.path) is not None

    def command(self, vaultctl: str) -> str:
        """A user's own file runs this machine's vaultctl; a project's runs each user's PATH's."""
        if self.project is not None:
            return guard_command(PORTABLE_COMMAND, {})
        check_command(vaultctl)
        return guard_command(vaultctl, launch_env(self.env))

    def manual(self, groups: dict[str, dict[str, Any]]) -> str:
        """What to add by hand: each group goes at the end of the array of its event."""
        return json.dumps({HOOKS_KEY: {event: [group] for event, group in groups.items()}}, indent=2, ensure_ascii=False) + "\n"

    def manual_with(self, entry_manual: str, vaultctl: str) -> str:
        """The entry's by-hand text for the same file, with the guard's groups added to it."""
        try:
            data = json.loads(entry_manual)
            groups = self.hooks.groups(self.command(vaultctl))
        except (ValueError, SetupError):
            return entry_manual
        data[HOOKS_KEY] = {event: [group] for event, group in groups.items()}
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    def setup(self, vaultctl: str, mode: Mode, state: FileState | None = None) -> Change:
        """Plan appending the guard's groups on ``state`` (read from disk when None)."""
        groups = self.hooks.groups(self.command(vaultctl))
        try:
            state = state or FileState.read(self.path)
            change = self._setup(groups, mode, state)
        except MANUAL as exc:
            exc.manual = self.manual(groups)
            raise
        return change

    def _setup(self, groups: dict[str, dict[str, Any]], mode: Mode, state: FileState) -> Change:
        text = state.text if state.text is not None else _EMPTY
        doc = HooksDocument(text, self.path)
        previous = self.store.load_guard(self.host.name, self.path)
        stale_groups = {} if previous is None else previous.written
        commands = {h.get("command") for g in (*groups.values(), *stale_groups.values()) for h in g["hooks"]}
        before: dict[str, Any] = {}  #: event -> setup's group found there (current or stale)
        steps: list[GuardStep] = []
        for event, group in groups.items():
            present = doc.groups(event)
            stale = stale_groups.get(event)
            if group in present:
                before[event] = group
                continue
            if stale is not None and stale in present:
                splice = doc.replace(event, stale, group)
                before[event] = stale
            elif any(_runs(g, commands) for g in present):
                raise EntryChanged(
                    f"The guard's {event} hook group in {self.path} was changed since setup wrote it; setup will not "
                    "add a second one, so nothing was written. Edit it by hand, or remove it and run setup again.",
                    path=self.path,
                )
            else:
                added = doc.add(event, group)
                steps.append(GuardStep(event=event, created=added.created, spacing=added.spacing))
                splice = added.splice
            text = splice.apply(text)
            doc = HooksDocument(text, self.path)
        old = state.text
        notes = host_notes(self.host, self.path, doc.data, self.env, self.project, changed=text != old)
        if old is not None and text == old:
            plan = make_plan(self, mode, Action.NONE, old=old, new=old, before=before or None, after=groups, notes=notes)
            return Change(state, plan, old)
        record = self._record(previous, state, text, groups, list(before), steps)
        action = Action.CREATE_FILE if old is None else Action.ADD if steps else Action.REPLACE
        plan = make_plan(self, mode, action, old=old, new=text, before=before or None, after=groups, notes=notes)
        return Change(state, plan, text, saves=(record,), record=self.record_path)

    def _record(
        self,
        previous: GuardRecord | None,
        state: FileState,
        new: str,
        groups: dict[str, dict[str, Any]],
        kept: list[str],
        steps: list[GuardStep],
    ) -> GuardRecord:
        """A fresh record, or the earlier one carried on (undo still goes back to before setup)."""
        if state.text is None:
            return GuardRecord(
                host=self.host.name,
                path=str(self.path),
                file_existed=False,
                created_sha256=sha(new.encode("utf-8")),
                written=groups,
                steps=steps,
            )
        if previous is None or not kept:
            return GuardRecord(host=self.host.name, path=str(self.path), file_existed=True, written=groups, steps=steps)
        created = previous.created_sha256
        if not previous.file_existed and created == state.sha():
            created = sha(new.encode("utf-8"))
        carried = [s for s in previous.steps if s.event in kept]
        return msgspec.structs.replace(previous, written=groups, steps=[*carried, *steps], created_sha256=created)

    def undo(self, state: FileState | None = None) -> Change | None:
        """Plan taking out what the record says setup added, or None when there is no record.

        Raises:
            EntryChanged: CONFLICT, a group setup wrote was changed since; nothing is planned.
        """
        record = self.store.load_guard(self.host.name, self.path)
        if record is None:
            return None
        state = state or FileState.read(self.path)
        text, drops = state.text, (self.record_path,)
        if text is None:
            note = "The guard's hooks file is gone; the record was dropped."
            plan = make_plan(self, Mode.UNDO, Action.NONE, old=None, new=None, before=None, after=None, notes=(note,))
            return Change(state, plan, None, drops=drops, record=self.record_path)
        doc = HooksDocument(text, self.path)
        written = record.written
        present = {e: g for e, g in written.items() if g in doc.groups(e)}
        commands = {h.get("command") for g in written.values() for h in g.get("hooks", [])}
        changed = [e for e in written if e not in present and any(_runs(g, commands) for g in doc.groups(e))]
        if changed:
            raise EntryChanged(
                f"The guard's {', '.join(changed)} hook group in {self.path} was changed since setup wrote it; undo "
                "would remove your change, so nothing was written. Remove the group by hand if you no longer want it.",
                path=self.path,
            )
        if not present:
            note = "The guard's hook groups are already gone; the record was dropped."
            plan = make_plan(self, Mode.UNDO, Action.NONE, old=text, new=text, before=None, after=None, notes=(note,))
            return Change(state, plan, text, drops=drops, record=self.record_path)
        if not record.file_existed and (record.created_sha256 == state.sha() or text == self._fresh(written)):
            plan = make_plan(self, Mode.UNDO, Action.DELETE_FILE, old=text, new=None, before=present, after=None)
            return Change(state, plan, None, drops=drops, record=self.record_path)
        new = text
        for step in reversed(record.steps):
            if step.event in present:
                new = doc.remove(step.event, written[step.event], step.created, step.spacing).apply(new)
                doc = HooksDocument(new, self.path)
        plan = make_plan(self, Mode.UNDO, Action.REMOVE, old=text, new=new, before=present, after=None)
        return Change(state, plan, new, drops=drops, record=self.record_path)

    def _fresh(self, groups: dict[str, dict[str, Any]]) -> str:
        """The text of a file setup creates holding only ``groups``."""
        text = _EMPTY
        for event, group in groups.items():
            text = HooksDocument(text, self.path).add(event, group).splice.apply(text)
        return text


def _runs(group: Any, commands: set[Any]) -> bool:
    """Is ``group`` a changed copy of one of setup's (one of its hooks runs a command setup wrote)?"""
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(isinstance(h, dict) and h.get("command") in commands for h in hooks)
