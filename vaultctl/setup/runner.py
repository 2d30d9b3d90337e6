"""Plan, apply and undo vaultd's place in one host's files, or in every installed host's.

``plan_setup``, ``apply_setup`` and ``undo_setup`` handle the MCP entry alone. ``run`` (what
``vaultctl setup HOST`` calls) handles the entry and, unless told not to, the guard's hooks: both
are planned before either is written, so a refusal of one writes neither. Apply changes the entry
first and the hooks second; undo goes in reverse, so that two changes to one file (Gemini CLI
keeps both in its settings.json) come off in the order they went on and give back its bytes.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING

from vaultctl.setup.commit import Change, FileState, commit
from vaultctl.setup.entry import EntryTarget, format_for
from vaultctl.setup.errors import SetupError
from vaultctl.setup.guard import GuardTarget
from vaultctl.setup.hosts import HOSTS
from vaultctl.setup.plan import HostOutcome, Mode, SetupPlan, Status

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = ["apply_setup", "format_for", "plan_setup", "run", "setup_all", "undo_setup"]


def plan_setup(host: str, command: str, *, project: Path | None = None, env: Mapping[str, str] | None = None) -> SetupPlan:
    """Show what ``apply_setup`` would do; write nothing.

    Raises:
        SetupError: see :mod:`vaultctl.setup.errors`; the file is never touched.
    """
    return _entry(host, project, env).setup(command, Mode.PLAN).plan


def apply_setup(host: str, command: str, *, project: Path | None = None, env: Mapping[str, str] | None = None) -> SetupPlan:
    """Write the entry (``command`` must be absolute) and a receipt; a no-op if already there.

    Raises:
        SetupError: see :mod:`vaultctl.setup.errors`; on a refusal nothing is written.
    """
    target = _entry(host, project, env)
    return commit([target.setup(command, Mode.APPLY)], target.store)[0]


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
) -> SetupPlan:
    """``vaultctl setup HOST [--apply | --undo] [--no-guard]`` in one call.

    Returns the entry's plan, with the hooks' plan as its ``guard`` (None: the host has no guard
    hook, or ``guard`` is False). Undo reverses whatever setup recorded, hooks included, and
    ignores ``guard``; ``command`` is unused for undo.

    Raises:
        SetupError: see :mod:`vaultctl.setup.errors`; on a refusal nothing is written.
    """
    env = os.environ if env is None else env
    entry = _entry(host, project, env)
    hooks = GuardTarget.resolve(entry.host, entry.project, env) if guard or mode is Mode.UNDO else None
    changes = _undo(entry, hooks) if mode is Mode.UNDO else _setup(entry, hooks, command, mode, guard)
    plans = [c.plan for c in changes] if mode is Mode.PLAN else commit(changes, entry.store)
    if mode is Mode.UNDO:
        plans.reverse()
    return replace(plans[0], guard=plans[1] if len(plans) > 1 else None)


def _setup(entry: EntryTarget, hooks: GuardTarget | None, command: str, mode: Mode, guard: bool) -> list[Change]:
    try:
        first = entry.setup(command, mode)
    except SetupError as exc:
        if hooks is not None and hooks.path == entry.path and exc.manual is not None:
            exc.manual = hooks.manual_with(exc.manual, command)  # one file: one thing to add by hand
        raise
    if hooks is None:
        if guard and entry.host.no_guard:
            note = f"No guard hook: {entry.host.no_guard}. See docs/agents.md (Guard)."
            first = replace(first, plan=replace(first.plan, notes=(*first.plan.notes, note)))
        return [first]
    try:
        second = hooks.setup(command, mode, first.after if hooks.path == entry.path else None)
    except SetupError as exc:
        exc.message += " To register the MCP entry alone, run setup again with --no-guard."
        raise
    return [first, second]


def _undo(entry: EntryTarget, hooks: GuardTarget | None) -> list[Change]:
    first = None if hooks is None else hooks.undo()
    same = first is not None and hooks is not None and hooks.path == entry.path
    state: FileState | None = first.after if same and first is not None else None
    if first is not None and not entry.has_receipt():
        return [first, entry.untouched(state)]
    second = entry.undo(state)  # raises NoReceipt when setup recorded neither
    return [second] if first is None else [first, second]


def setup_all(mode: Mode, command: str, *, env: Mapping[str, str] | None = None, guard: bool = True) -> list[HostOutcome]:
    """Every host in turn; one host's refusal does not stop the others.

    A host that does not seem installed is skipped (setup would otherwise create, say,
    ``~/.cursor`` for someone who never ran Cursor); naming the host alone sets it up anyway.
    Under undo, a host with no receipt is skipped.
    """
    env = os.environ if env is None else env
    outcomes: list[HostOutcome] = []
    for name, host in HOSTS.items():
        try:
            if mode is Mode.UNDO:
                entry = EntryTarget.resolve(name, None, env)
                hooks = GuardTarget.resolve(host, None, env)
                if not entry.has_receipt() and (hooks is None or not hooks.has_receipt()):
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
            plan = run(name, mode, command, env=env, guard=guard)
        except SetupError as exc:
            outcomes.append(HostOutcome(name, Status.FAILED, error=exc))
        else:
            outcomes.append(HostOutcome(name, Status.DONE, plan=plan))
    return outcomes


def _entry(host: str, project: Path | None, env: Mapping[str, str] | None) -> EntryTarget:
    return EntryTarget.resolve(host, project, os.environ if env is None else env)
