"""Plan, apply and undo vaultd's place in one host's files, or in every installed host's.

``plan_setup``, ``apply_setup`` and ``undo_setup`` handle the MCP entry alone. ``run`` (what
``vaultctl setup HOST`` calls) handles the entry and, unless told not to, the guard's hooks and the
host's own sandbox settings: all are planned before any is written, so a refusal of one writes
none. Apply changes the entry first, the hooks second and the sandbox third; undo goes in reverse,
so that changes to one file (Gemini CLI keeps all three in its settings.json) come off in the
reverse order they went on and give back its bytes.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING

from vaultctl.setup.commit import Change, FileState, commit
from vaultctl.setup.entry import EntryTarget, format_for
from vaultctl.setup.errors import SetupError
from vaultctl.setup.guard import GuardTarget
from vaultctl.setup.hosts import HOSTS, MCP_TOOLS
from vaultctl.setup.plan import HostOutcome, Mode, SetupPlan, Status
from vaultctl.setup.sandbox import sandbox_note
from vaultctl.setup.sandboxfile import SandboxTarget

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = ["apply_setup", "format_for", "plan_setup", "run", "setup_all", "undo_setup"]


def plan_setup(
    host: str, command: str, *, project: Path | None = None, env: Mapping[str, str] | None = None, tools: str = MCP_TOOLS
) -> SetupPlan:
    """Show what ``apply_setup`` would do; write nothing.

    Raises:
        SetupError: see :mod:`vaultctl.setup.errors`; the file is never touched.
    """
    return _entry(host, project, env, tools).setup(command, Mode.PLAN).plan


def apply_setup(
    host: str, command: str, *, project: Path | None = None, env: Mapping[str, str] | None = None, tools: str = MCP_TOOLS
) -> SetupPlan:
    """Write the entry (``command`` must be absolute) and a record; a no-op if already there.

    Raises:
        SetupError: see :mod:`vaultctl.setup.errors`; on a refusal nothing is written.
    """
    target = _entry(host, project, env, tools)
    return commit([target.setup(command, Mode.APPLY)], target.store)[0]


def undo_setup(
    host: str,
    *,
    project: Path | None = None,
    env: Mapping[str, str] | None = None,
    dry_run: bool = False,
) -> SetupPlan:
    """Put back what the record says the entry was, if the entry is still the one setup wrote.

    Raises:
        NoRecord: NOT_FOUND, setup never applied to this file (or it was undone already).
        EntryChanged: CONFLICT, the entry changed since setup wrote it.
        SetupError: the file is malformed or unsafe now; nothing is written.
    """
    target = _entry(host, project, env)
    change = target.undo()
    return change.plan if dry_run else commit([change], target.store)[0]


def run(
    host: str,
    mode: Mode,
    command: str,
    *,
    project: Path | None = None,
    env: Mapping[str, str] | None = None,
    guard: bool = True,
    sandbox: bool = True,
    tools: str = MCP_TOOLS,
) -> SetupPlan:
    """``vaultctl setup HOST [--apply | --undo] [--no-guard] [--no-sandbox] [--tools SET]`` in one call.

    Returns the entry's plan, with the hooks' plan as its ``guard`` (None: the host has no guard
    hook, or ``guard`` is False) and the host's sandbox settings' plan as its ``sandbox`` (None:
    the host has no sandbox setup can turn on, a project's files are edited, or ``sandbox`` is
    False). Undo reverses whatever setup recorded, hooks and sandbox included, and ignores
    ``guard`` and ``sandbox``; ``command`` is unused for undo.

    Raises:
        SetupError: see :mod:`vaultctl.setup.errors`; on a refusal nothing is written.
    """
    env = os.environ if env is None else env
    entry = _entry(host, project, env, tools)
    hooks = GuardTarget.resolve(entry.host, entry.project, env) if guard or mode is Mode.UNDO else None
    walls = SandboxTarget.resolve(entry.host.name, env) if project is None and (sandbox or mode is Mode.UNDO) else None
    shown: SetupPlan | None = None
    if mode is Mode.UNDO:
        changes = _undo(entry, hooks, walls)
    else:
        changes, shown = _setup(entry, hooks, walls, command, mode, guard)
    order = _by_file([c for _, c in changes])
    ordered = [changes[i][1] for i in order]
    done = [c.plan for c in ordered] if mode is Mode.PLAN else commit(ordered, entry.store)
    plans = {changes[i][0]: plan for i, plan in zip(order, done, strict=True)}
    first = plans["entry"]
    if mode is not Mode.UNDO and walls is None:
        first = replace(first, notes=(*first.notes, *_no_walls(entry, env, sandbox=sandbox)))
    return replace(first, guard=plans.get("guard"), sandbox=plans.get("sandbox", shown))


def _no_walls(entry: EntryTarget, env: Mapping[str, str], *, sandbox: bool) -> tuple[str, ...]:
    """What the plan says when setup leaves the host's sandbox settings alone."""
    title, name = entry.host.title, entry.host.name
    if not sandbox:
        note = sandbox_note(name, env)
        return () if note is None else (note,)
    if entry.project is not None:
        return (
            f"The sandbox rules name this machine's folders, so setup writes them only in your own settings: "
            f"run `vaultctl setup {name} --apply` without --project.",
        )
    return (
        f"{title} has no sandbox setup can turn on, so nothing at the operating system keeps its shell off the vaults "
        "(docs/agents.md, Threat model).",
    )


def _by_file(changes: list[Change]) -> list[int]:
    """Indices of ``changes`` with those to one file side by side, each file's in their order
    (commit writes each file once, from the chain of its changes)."""
    firsts: dict[Path, int] = {}
    for i, change in enumerate(changes):
        firsts.setdefault(change.state.path, i)
    return sorted(range(len(changes)), key=lambda i: (firsts[changes[i].state.path], i))


def _setup(
    entry: EntryTarget, hooks: GuardTarget | None, walls: SandboxTarget | None, command: str, mode: Mode, guard: bool
) -> tuple[list[tuple[str, Change]], SetupPlan | None]:
    """The changes in the order they are computed (entry, hooks, sandbox), each on the text the
    earlier ones leave in its file; and the sandbox's plan when it has nothing to write here."""
    try:
        first = entry.setup(command, mode)
    except SetupError as exc:
        if hooks is not None and hooks.path == entry.path and exc.manual is not None:
            exc.manual = hooks.manual_with(exc.manual, command)  # one file: one thing to add by hand
        raise
    if hooks is None and guard and entry.host.no_guard:
        note = f"No guard hook: {entry.host.no_guard}. See docs/agents.md (Guard)."
        first = replace(first, plan=replace(first.plan, notes=(*first.plan.notes, note)))
    changes = [("entry", first)]
    if hooks is not None:
        try:
            second = hooks.setup(command, mode, first.after if hooks.path == entry.path else None)
        except SetupError as exc:
            exc.message += " To register the MCP entry alone, run setup again with --no-guard."
            raise
        changes.append(("guard", second))
    if walls is None:
        return changes, None
    latest = {c.state.path: c.after for _, c in changes}
    try:
        third = walls.setup(mode, latest.get(walls.path))
    except SetupError as exc:
        exc.message += " To leave the host's sandbox settings alone, run setup again with --no-sandbox."
        raise
    if isinstance(third, Change):
        return [*changes, ("sandbox", third)], None
    return changes, third


def _undo(entry: EntryTarget, hooks: GuardTarget | None, walls: SandboxTarget | None) -> list[tuple[str, Change]]:
    """The changes in the order they are computed: the sandbox's first, then the hooks', then the
    entry's (the reverse of apply), each on the text the ones before leave in its file."""
    changes: list[tuple[str, Change]] = []
    latest: dict[Path, FileState] = {}
    for kind, target in (("sandbox", walls), ("guard", hooks)):
        change = None if target is None else target.undo(latest.get(target.path))
        if change is not None:
            changes.append((kind, change))
            latest[change.state.path] = change.after
    state = latest.get(entry.path)
    if changes and not entry.has_record():
        changes.append(("entry", entry.untouched(state)))
    else:
        changes.append(("entry", entry.undo(state)))  # raises NoRecord when setup recorded nothing
    return changes


def setup_all(
    mode: Mode,
    command: str,
    *,
    env: Mapping[str, str] | None = None,
    guard: bool = True,
    sandbox: bool = True,
    tools: str = MCP_TOOLS,
) -> list[HostOutcome]:
    """Every host in turn; one host's refusal does not stop the others.

    A host that does not seem installed is skipped (setup would otherwise create, say,
    ``~/.cursor`` for someone who never ran Cursor); naming the host alone sets it up anyway.
    Under undo, a host with no record is skipped.
    """
    env = os.environ if env is None else env
    outcomes: list[HostOutcome] = []
    for name, host in HOSTS.items():
        try:
            if mode is Mode.UNDO:
                entry = EntryTarget.resolve(name, None, env)
                hooks = GuardTarget.resolve(host, None, env)
                walls = SandboxTarget.resolve(name, env)
                if not any(t is not None and t.has_record() for t in (entry, hooks, walls)):
                    note = f"setup has not changed {entry.path}; nothing to undo."
                    outcomes.append(HostOutcome(name, Status.SKIPPED, note=note))
                    continue
            elif not host.installed(env):
                note = (
                    f"{host.title} does not seem to be installed ({host.markers(env)[0]} not found); "
                    f"run `vaultctl setup {name} --apply` to set it up anyway."
                )
                outcomes.append(HostOutcome(name, Status.SKIPPED, note=note))
                continue
            plan = run(name, mode, command, env=env, guard=guard, sandbox=sandbox, tools=tools)
        except SetupError as exc:
            outcomes.append(HostOutcome(name, Status.FAILED, error=exc))
        else:
            outcomes.append(HostOutcome(name, Status.DONE, plan=plan))
    return outcomes


def _entry(host: str, project: Path | None, env: Mapping[str, str] | None, tools: str = MCP_TOOLS) -> EntryTarget:
    return EntryTarget.resolve(host, project, os.environ if env is None else env, tools)
