"""What setup will do (or did) to one host file, in a form the CLI can print or emit as JSON.

``vaultctl setup HOST`` changes up to three things, the MCP entry, the guard's hooks and the host's
own sandbox settings: its plan is the entry's, and the others' plans ride along as its ``guard``
and ``sandbox``.
"""

from __future__ import annotations

import difflib
import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import msgspec

from vaultctl.setup.redact import redact_text, redact_value

if TYPE_CHECKING:
    from pathlib import Path

    from vaultctl.setup.errors import SetupError
    from vaultctl.setup.hosts import Host


class Mode(enum.Enum):
    """What the caller asked for."""

    PLAN = "plan"  #: show the change, write nothing (the default)
    APPLY = "apply"  #: write the entry and a record
    UNDO = "undo"  #: reverse what a record records


class Action(enum.StrEnum):
    """What happens to the host file."""

    CREATE_FILE = "create-file"  #: there was no file; it is created holding only the entry
    ADD = "add"  #: the file gains the entry (or the guard's hook groups)
    REPLACE = "replace"  #: the entry (or setup's hook group) was there with another value
    NONE = "none"  #: already as asked; nothing is written
    REMOVE = "remove"  #: undo: the entry (and a server table setup added) or the hook groups go
    RESTORE = "restore"  #: undo: the entry gets back the value it had before setup
    DELETE_FILE = "delete-file"  #: undo: setup created the file and it is still just that


class Status(enum.Enum):
    """How one host fared in ``setup all``."""

    DONE = "done"  #: planned, applied or undone (see the plan's action)
    SKIPPED = "skipped"  #: not installed, or nothing to undo (see the note)
    FAILED = "failed"  #: refused (see the error)


@dataclass(frozen=True, slots=True)
class SetupPlan:
    """One host file's change. ``before``/``after`` are the entry (None: absent), secrets masked."""

    host: str
    path: Path
    mode: Mode
    action: Action
    before: Any
    after: Any
    diff: str  #: unified diff of the file, secrets masked; empty for NONE
    applied: bool = False  #: the change is on disk
    record: Path | None = None  #: the record written (apply) or consumed (undo)
    notes: tuple[str, ...] = ()
    guard: SetupPlan | None = None  #: the guard's hooks, changed with the entry (None: not this time)
    sandbox: SetupPlan | None = None  #: the host's own sandbox settings (None: not this time)

    @property
    def changes(self) -> bool:
        return self.action is not Action.NONE

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json`` output."""
        return {
            "host": self.host,
            "path": str(self.path),
            "mode": self.mode.value,
            "action": self.action.value,
            "before": msgspec.to_builtins(self.before),  # a TOML entry may hold dates
            "after": msgspec.to_builtins(self.after),
            "diff": self.diff,
            "applied": self.applied,
            "record": str(self.record) if self.record else None,
            "notes": list(self.notes),
            "guard": None if self.guard is None else self.guard.to_dict(),
            "sandbox": None if self.sandbox is None else self.sandbox.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class HostOutcome:
    """One host's result in ``setup all``: a plan, a reason it was skipped, or the refusal."""

    host: str
    status: Status
    plan: SetupPlan | None = None
    note: str | None = None
    error: SetupError | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"host": self.host, "status": self.status.value}
        if self.plan is not None:
            out["plan"] = self.plan.to_dict()
        if self.note is not None:
            out["note"] = self.note
        if self.error is not None:
            out["error"] = {
                "code": self.error.code.value,
                "message": self.error.message,
                "manual": self.error.manual,
            }
        return out


class PlanTarget(Protocol):
    """A host file setup plans a change to (its MCP entry, or its guard hooks)."""

    #: ``before`` and ``after`` hold only what setup writes itself (the guard's groups, keyed by
    #: event names such as ``SessionStart`` that the key rule would mask), so they are shown as they are
    ours: ClassVar[bool]

    @property
    def host(self) -> Host: ...

    @property
    def path(self) -> Path: ...


def make_plan(
    target: PlanTarget,
    mode: Mode,
    action: Action,
    *,
    old: str | None,
    new: str | None,
    before: Any,
    after: Any,
    notes: tuple[str, ...] = (),
) -> SetupPlan:
    """A plan for ``target`` with its diff rendered and every shown value masked (unless setup
    wrote it, see ``PlanTarget.ours``). A file to be created in a folder that is not there yet says
    that the folder will be made too."""
    path, ours = target.path, target.ours
    if action is Action.CREATE_FILE and not path.parent.exists():
        notes = (*notes, f"{path.parent} will be created (mode 0700).")
    diff = "" if action is Action.NONE else unified_diff(path, old, new)
    return SetupPlan(
        host=target.host.name,
        path=path,
        mode=mode,
        action=action,
        before=before if ours else redact_value(before),
        after=after if ours else redact_value(after),
        diff=diff,
        notes=notes,
    )


def unified_diff(path: Path, old: str | None, new: str | None) -> str:
    """The change as ``diff -u`` shows it (``/dev/null`` for a missing side), masked."""
    lines = difflib.unified_diff(
        _lines(old),
        _lines(new),
        fromfile=str(path) if old is not None else "/dev/null",
        tofile=str(path) if new is not None else "/dev/null",
        n=2,
    )
    out: list[str] = []
    for line in lines:
        if line.endswith("\n"):
            out.append(line[:-1].removesuffix("\r"))
        else:
            out.extend((line.removesuffix("\r"), "\\ No newline at end of file"))
    return redact_text("\n".join(out)) + "\n" if out else ""


def _lines(text: str | None) -> list[str]:
    # Split on "\n" only: str.splitlines would also split on form feeds and U+2028.
    if text is None:
        return []
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
