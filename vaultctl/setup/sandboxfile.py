"""The host's own sandbox settings in its settings file: plan merging vaultd's rules in, and plan
taking them out again, byte for byte.

The rules are :mod:`sandbox`'s. They are merged, never swapped in: a value setup needs is set
(``sandbox.enabled``), a path it needs is appended to the person's own array (``denyWrite``,
``permissions.deny``), and everything else of theirs stays where it is. Each edit is one splice,
proven by re-parsing the result, and recorded as a step of the record; undo reverses the steps
in the opposite order, each only while it still holds what setup wrote, so the file gets back the
bytes it had. A value the person had set otherwise (``sandbox.enabled: false``) is replaced, the
plan says so, and undo puts their text back.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from vaultctl.setup.commit import Change, FileState, sha
from vaultctl.setup.entry import MANUAL
from vaultctl.setup.homes import home_of
from vaultctl.setup.hosts import HOSTS, Host
from vaultctl.setup.plan import Action, Mode, SetupPlan, make_plan
from vaultctl.setup.records import RecordStore, SandboxRecord, SandboxStep
from vaultctl.setup.sandbox import claude_settings, protected
from vaultctl.setup.sandboxtext import CODEX_MODE, SandboxJson, SandboxToml, Want, value_at

if TYPE_CHECKING:
    from collections.abc import Mapping

_EMPTY = "{}\n"
#: What each host enforces once its sandbox is on, and what it cannot; said in every plan.
LIMITS = {
    "claude": (
        "Claude Code's sandbox runs every Bash command under the operating system's rules (bubblewrap and socat on Linux, "
        "Seatbelt on macOS); its hooks and MCP servers, and a command a person lets out, run outside it."
    ),
    "codex": (
        "Codex's sandbox lets its shell write only the session's folder, the temp folders and writable_roots; it has no "
        "per-path deny inside them, so a session started inside a vault can still write it."
    ),
    "gemini": "Gemini CLI's sandbox runs its tools in a container that mounts the project folder only.",
}


def _runtime(env: Mapping[str, str]) -> str | None:
    """Gemini CLI's container runtime on this machine's PATH (docker or podman), if any."""
    path = env.get("PATH", os.defpath)
    return next((name for name in ("docker", "podman") if shutil.which(name, path=path)), None)


@dataclass(frozen=True, slots=True)
class SandboxTarget:
    """One host's sandbox settings file, and where its record lives."""

    host: Host
    path: Path
    store: RecordStore
    env: Mapping[str, str]

    ours: ClassVar[bool] = True  #: its plans show the rules setup writes (paths, no secrets) as they are

    @classmethod
    def resolve(cls, name: str, env: Mapping[str, str]) -> SandboxTarget | None:
        """The host's settings file for its sandbox (a person's own, never a project's), or None
        for a host without a sandbox setup can turn on."""
        home = str(home_of(env))
        if name == "claude":
            folder = env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
            path = os.path.join(folder, "settings.json")
        elif name == "codex":
            path = os.path.join(env.get("CODEX_HOME") or os.path.join(home, ".codex"), "config.toml")
        elif name == "gemini":
            path = os.path.join(home, ".gemini", "settings.json")
        else:
            return None
        return cls(HOSTS[name], Path(os.path.abspath(path)), RecordStore.for_env(env), env)

    @property
    def record_path(self) -> Path:
        return self.store.path_for(self.host.name, self.path, SandboxRecord)

    def has_record(self) -> bool:
        return self.store.load_sandbox(self.host.name, self.path) is not None

    def _wants(self) -> list[Want]:
        rules = claude_settings(self.env)
        fs = rules["sandbox"]["filesystem"]
        return [
            Want(("sandbox", "enabled"), True),
            Want(("sandbox", "allowUnsandboxedCommands"), False),
            Want(("sandbox", "filesystem", "denyWrite"), items=tuple(fs["denyWrite"])),
            Want(("sandbox", "filesystem", "denyRead"), items=tuple(fs["denyRead"])),
            Want(("permissions", "deny"), items=tuple(rules["permissions"]["deny"])),
        ]

    def manual(self) -> str:
        """What to merge by hand when setup refuses to edit the file."""
        if self.host.name == "codex":
            return f'sandbox_mode = "{CODEX_MODE}"\n'
        if self.host.name == "gemini":
            return json.dumps({"tools": {"sandbox": True}}, indent=2) + "\n"
        return json.dumps(claude_settings(self.env), indent=2) + "\n"

    def setup(self, mode: Mode, state: FileState | None = None) -> Change | SetupPlan:
        """Plan merging the rules in on ``state`` (read from disk when None); a plan alone (no
        change) when this host has no sandbox on this machine."""
        try:
            return self._setup(mode, state or FileState.read(self.path))
        except MANUAL as exc:
            exc.manual = self.manual()
            raise

    def _setup(self, mode: Mode, state: FileState) -> Change | SetupPlan:
        name, notes = self.host.name, [LIMITS[self.host.name]]
        old = state.text
        text = old if old is not None else _EMPTY
        steps: list[SandboxStep] = []
        after: Any
        if name == "codex":
            toml = SandboxToml(old or "", self.path)
            mode_was = toml.data.get("sandbox_mode")
            if mode_was not in (None, CODEX_MODE, "read-only"):
                notes.append(f"{self.path} sets sandbox_mode = {mode_was!r}; setup sets {CODEX_MODE!r} (undo puts yours back).")
            toml, steps = toml.want()
            text = toml.text if steps else (old or "")
            notes += self._codex_roots(toml.data)
            before, after = {"sandbox_mode": mode_was}, {"sandbox_mode": toml.data.get("sandbox_mode")}
        else:
            doc = SandboxJson(text, self.path)
            if name == "gemini":
                tools = doc.data.get("tools")
                current = tools.get("sandbox") if isinstance(tools, dict) else None
                before = {"tools.sandbox": current}
                runtime = _runtime(self.env)
                if current or doc.data.get("sandbox"):
                    wants: list[Want] = []
                elif runtime is None:
                    note = (
                        "Gemini CLI's sandbox needs docker or podman, and neither is on PATH: it is left off, so Gemini CLI's "
                        "shell is kept off the vaults only by the guard's reading of each line."
                    )
                    plan = make_plan(self, mode, Action.NONE, old=old, new=old, before=before, after=None, notes=(note,))
                    return plan
                else:
                    wants = [Want(("tools", "sandbox"), True)]
                    notes.append(f"Gemini CLI will run its tools in a {runtime} container.")
            else:
                sandbox = doc.data.get("sandbox")
                if isinstance(sandbox, dict) and sandbox.get("enabled") is False:
                    notes.append(f"{self.path} sets sandbox.enabled to false; setup turns it on (undo puts false back).")
                wants = self._wants()
                before = {".".join(w.path): value_at(doc.data, w.path)[1] for w in wants}
            for want in wants:
                doc, done = doc.want(want)
                steps += done
            text = doc.text
            after = {".".join(w.path): w.value if w.items is None else list(w.items) for w in wants} or before
        if not steps:
            plan = make_plan(self, mode, Action.NONE, old=old, new=old, before=before, after=after, notes=tuple(notes))
            return Change(state, plan, old)
        previous = self.store.load_sandbox(name, self.path)
        record = self._record(previous, state, text, steps)
        action = Action.CREATE_FILE if old is None else Action.ADD if any(s.kind != "replace" for s in steps) else Action.REPLACE
        notes.append(f"{self.host.title} reads its sandbox settings when a session starts: restart open sessions.")
        plan = make_plan(self, mode, action, old=old, new=text, before=before, after=after, notes=tuple(notes))
        return Change(state, plan, text, saves=(record,), record=self.record_path)

    def _codex_roots(self, data: dict[str, Any]) -> list[str]:
        table = data.get("sandbox_workspace_write")
        roots = table.get("writable_roots") if isinstance(table, dict) else None
        write, _ = protected(self.env)
        exposed = [r for r in roots or [] if isinstance(r, str) and any(p == r or p.startswith(r.rstrip("/") + "/") for p in write)]
        if not exposed:
            return []
        return [
            f"[sandbox_workspace_write] writable_roots {', '.join(exposed)} hold a vault or vaultd's home, so Codex's shell can "
            "write there; setup leaves your roots alone: take those out by hand."
        ]

    def _record(self, previous: SandboxRecord | None, state: FileState, new: str, steps: list[SandboxStep]) -> SandboxRecord:
        """A fresh record, or the earlier one carried on (undo still goes back to before setup)."""
        if previous is None:
            created = sha(new.encode("utf-8")) if state.text is None else None
            return SandboxRecord(
                host=self.host.name, path=str(self.path), file_existed=state.text is not None, created_sha256=created, steps=steps
            )
        created = previous.created_sha256
        if not previous.file_existed and created == state.sha():
            created = sha(new.encode("utf-8"))
        return msgspec.structs.replace(previous, steps=[*previous.steps, *steps], created_sha256=created)

    def undo(self, state: FileState | None = None) -> Change | None:
        """Plan reversing the record's steps, or None when there is no record.

        Raises:
            EntryChanged: CONFLICT, a part setup added was changed since; nothing is planned.
        """
        record = self.store.load_sandbox(self.host.name, self.path)
        if record is None:
            return None
        state = state or FileState.read(self.path)
        text, drops = state.text, (self.record_path,)
        if text is None:
            note = "The sandbox settings file is gone; the record was dropped."
            plan = make_plan(self, Mode.UNDO, Action.NONE, old=None, new=None, before=None, after=None, notes=(note,))
            return Change(state, plan, None, drops=drops, record=self.record_path)
        if not record.file_existed and record.created_sha256 == state.sha():
            plan = make_plan(self, Mode.UNDO, Action.DELETE_FILE, old=text, new=None, before=None, after=None)
            return Change(state, plan, None, drops=drops, record=self.record_path)
        doc: SandboxJson | SandboxToml = SandboxToml(text, self.path) if self.host.name == "codex" else SandboxJson(text, self.path)
        for step in reversed(record.steps):
            doc = doc.revert(step)
        new: str | None = doc.text
        if not record.file_existed and new == _EMPTY:
            new = None
        action = Action.NONE if new == text else Action.DELETE_FILE if new is None else Action.REMOVE
        notes = ("The sandbox settings setup wrote are already gone; the record was dropped.",) if action is Action.NONE else ()
        plan = make_plan(self, Mode.UNDO, action, old=text, new=new, before=None, after=None, notes=notes)
        return Change(state, plan, new, drops=drops, record=self.record_path)
