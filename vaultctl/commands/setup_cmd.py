"""vaultctl setup HOST|all [--apply | --undo] [--no-guard] [--no-sandbox] [--tools SET]: register ``vaultctl mcp``,
the guard's hooks and the host's own sandbox rules in agent hosts, reversibly."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from protocol.errors import ExitStatus
from vaultctl import render
from vaultctl.commands.common import JsonOpt, fail


def _vaultctl_path() -> str:
    found = shutil.which("vaultctl")
    candidate = Path(sys.argv[0])
    if candidate.name == "vaultctl" and candidate.exists():
        return str(candidate.resolve())
    if found:
        return str(Path(found).resolve())
    fail("cannot find the vaultctl executable on PATH; install vaultd first", ExitStatus.USAGE)


def _check_tools(tools: str) -> None:
    """Refuse a ``--tools`` the server would refuse, before any file is touched."""
    from vaultctl.mcp.toolsets import UnknownTools, resolve

    try:
        resolve(tools)
    except UnknownTools as exc:
        fail(str(exc), ExitStatus.USAGE)


def _plan_text(plan: Any) -> str:
    lines = _change_text(plan, "")
    if plan.guard is not None:
        lines += _change_text(plan.guard, " guard hooks")
    if plan.sandbox is not None:
        lines += _change_text(plan.sandbox, " sandbox")
    others = [p for p in (plan.guard, plan.sandbox) if p is not None]
    if str(plan.mode.value) == "plan" and (plan.changes or any(p.changes for p in others)):
        lines.append(f"  to apply: vaultctl setup {plan.host} --apply")
    return "\n".join(lines)


def _change_text(plan: Any, what: str) -> list[str]:
    verb = {"plan": "would", "apply": "did", "undo": "undo:"}.get(str(plan.mode.value), "")
    lines = [f"{plan.host}{what}: {plan.path}", f"  {verb} {plan.action.value}".rstrip()]
    if plan.diff:
        lines.append(plan.diff.rstrip("\n"))
    lines += [f"  note: {n}" for n in plan.notes]
    return lines


def setup(
    host: Annotated[str, typer.Argument(help="claude, codex, cursor, gemini, windsurf, kimi, qwen, antigravity, or all.")],
    apply: Annotated[bool, typer.Option("--apply", help="Write the change (default: show it only).")] = False,
    undo: Annotated[bool, typer.Option("--undo", help="Restore what setup replaced.")] = False,
    project: Annotated[
        Path | None,
        typer.Option(help="claude and qwen: the project whose .mcp.json (and Claude Code's .claude/settings.json) to edit."),
    ] = None,
    no_guard: Annotated[
        bool, typer.Option("--no-guard", help="Register the MCP entry only; leave the host's hooks alone (no guard).")
    ] = False,
    no_sandbox: Annotated[
        bool,
        typer.Option(
            "--no-sandbox", help="Leave the host's own sandbox settings alone (its shell is then kept off the vaults only by words)."
        ),
    ] = False,
    tools: Annotated[
        str,
        typer.Option(
            help="The tools the entry offers: core (the default), read, write, all, or tool names, comma-separated."
            " Every session of the host pays for their descriptions in its context (docs/mcp.md)."
        ),
    ] = "core",
    as_json: JsonOpt = False,
) -> None:
    """Register 'vaultctl mcp', the guard's hooks and the host's sandbox rules in an agent host's config (a dry run unless --apply).

    The guard hooks ('vaultctl guard') refuse the host's own edit tools on files of a registered
    vault; the sandbox rules (Claude Code's sandbox, Codex's sandbox_mode, Gemini CLI's container)
    make the operating system keep the host's shell off the vaults and the daemon's socket, merged
    into the person's own settings. --undo takes out all three, byte for byte.
    """
    from vaultctl.setup import HOSTS, Mode, SetupError, run, setup_all

    if apply and undo:
        fail("--apply and --undo go alone", ExitStatus.USAGE)
    if undo and (no_guard or no_sandbox):
        fail("--undo takes out everything setup added; --no-guard and --no-sandbox go with a dry run or --apply", ExitStatus.USAGE)
    mode = Mode.APPLY if apply else Mode.UNDO if undo else Mode.PLAN
    _check_tools(tools)
    command = "" if undo else _vaultctl_path()
    try:
        if host == "all":
            outcomes = setup_all(mode, command, env=os.environ, guard=not no_guard, sandbox=not no_sandbox, tools=tools)
            if as_json:
                print(json.dumps([o.to_dict() for o in outcomes]))
            else:
                for o in outcomes:
                    render.say(_plan_text(o.plan) if o.plan is not None else f"{o.host}: {o.status.value} ({o.note or o.error})")
            if any(o.status.value == "failed" for o in outcomes):
                raise typer.Exit(int(ExitStatus.REFUSED))
            return
        if host not in HOSTS:
            fail(f"unknown host {host!r}; choose one of: {', '.join(HOSTS)}, all", ExitStatus.USAGE)
        plan = run(host, mode, command, project=project, env=os.environ, guard=not no_guard, sandbox=not no_sandbox, tools=tools)
    except SetupError as exc:
        manual = getattr(exc, "manual", None)
        if manual:
            render.say(f"add this by hand:\n{manual}", file=sys.stderr)
        fail(exc.message, exc.code.exit_status)
    if as_json:
        print(json.dumps(plan.to_dict()))
    else:
        render.say(_plan_text(plan))
