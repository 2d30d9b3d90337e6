"""Doctor's view of the guard: does each host's hooks file run ``vaultctl guard`` on every event
setup gives it, can that command be started, and does a host setting keep it from running?

It reads the files only; it never runs the hook (doctor's host rows start the MCP entry, which
is side-effect free; a guard run is the host's to make).
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultctl.setup.commit import FileState
from vaultctl.setup.errors import SetupError
from vaultctl.setup.guard import ASSIGNMENT, is_guard_hook
from vaultctl.setup.hooksfile import HooksDocument
from vaultctl.setup.hostnotes import hooks_off
from vaultctl.setup.hosts import HOSTS

if TYPE_CHECKING:
    from collections.abc import Mapping


def guard_row(name: str, env: Mapping[str, str], *, has_entry: bool) -> tuple[str, str, str] | None:
    """(level, check, finding) for one host, or None when it has neither an entry nor a guard."""
    host = HOSTS[name]
    check = f"guard:{name}"
    if host.guard is None:
        if not has_entry:
            return None
        return "ok", check, f"no guard hook for {host.title}: {host.no_guard} (docs/agents.md, Guard)"
    path = Path(os.path.abspath(host.guard.path(env)))
    try:
        state = FileState.read(path)
        doc = None if state.text is None else HooksDocument(state.text, path)
    except SetupError as exc:
        return "warn", check, f"{path}: {exc.message}"
    events: list[str] = []
    commands: list[str] = []
    for event in host.guard.events:
        hooks = [] if doc is None else [h for g in doc.groups(event.name) if isinstance(g, dict) for h in _hooks(g) if is_guard_hook(h)]
        if hooks:
            events.append(event.name)
            commands += [h["command"] for h in hooks]
    if not events:
        if not has_entry:
            return None
        return (
            "warn",
            check,
            (
                f"{path}: no guard hook, so an agent in {host.title} can edit vault files with its own tools; "
                f"`vaultctl setup {name} --apply` adds it"
            ),
        )
    broken = sorted({c for c in commands if not runnable(c, env)})
    if broken:
        return "fail", check, f"{path}: the guard hook cannot start ({broken[0]!r}); run `vaultctl setup {name} --apply` again"
    missing = [e.name for e in host.guard.events if e.name not in events]
    if missing:
        return (
            "warn",
            check,
            (
                f"{path}: the guard hook runs on {', '.join(events)} but not on {', '.join(missing)}; "
                f"`vaultctl setup {name} --apply` adds it"
            ),
        )
    assert doc is not None
    off = hooks_off(host, path, doc.data)
    if off:
        return "warn", check, off[0]
    trust = " (Codex runs it once you trust it under /hooks)" if name == "codex" else ""
    return "ok", check, f"{path}: guard hook on {', '.join(events)}{trust}"


def runnable(command: str, env: Mapping[str, str]) -> bool:
    """Can a host start this guard command (its vaultctl exists and is executable)?"""
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    program = next((w for w in words if not ASSIGNMENT.match(w)), "")
    if os.path.isabs(program):
        return os.access(program, os.X_OK)
    return shutil.which(program, path=env.get("PATH", os.defpath)) is not None


def _hooks(group: dict[str, Any]) -> list[Any]:
    hooks = group.get("hooks")
    return hooks if isinstance(hooks, list) else []
