"""A hook payload from an agent host, read as: which event, and what the tool would write.

The three hosts send one JSON object on stdin (the shapes their hook references document):

- Claude Code, ``PreToolUse``: ``tool_name`` Edit, Write, MultiEdit (``tool_input.file_path``),
  NotebookEdit (``notebook_path``), Bash (``command``); ``cwd``.
- Codex, ``PreToolUse``: ``apply_patch`` (``tool_input.command`` is the patch text, whose
  ``*** Add/Update/Delete File:`` and ``*** Move to:`` lines name the files), Bash (``command``, a
  line or an argv list).
- Gemini CLI, ``BeforeTool``: ``write_file`` and ``replace`` (``file_path``), ``run_shell_command``
  (``command``, optionally ``dir_path``).

All three send ``SessionStart`` at a session's start; Claude Code also sends ``UserPromptSubmit``
(``prompt``), ``Stop`` (``stop_hook_active``) and ``SessionEnd``, each with its ``session_id``. A tool this module does not know writes
nothing it can name, so it is let through: the hooks are registered for the tools above only.
"""

from __future__ import annotations

import enum
import os
import re
import shlex
from typing import Any

from vaultctl.guard.shell import shell_writes


class Event(enum.Enum):
    TOOL = "tool"  #: a tool is about to run: allow or refuse it
    SESSION_START = "session-start"  #: a session starts: perhaps tell the agent about the vaults
    PROMPT = "prompt"  #: the person sent a prompt: its one-line summary goes into the session's record
    STOP = "stop"  #: the agent ends its turn: remind it of its unfinished proposals and work
    SESSION_END = "session-end"  #: the host's session ends
    OTHER = "other"  #: an event the guard has nothing to say about


class Dialect(enum.Enum):
    """How the host wants its answer; all three read exit 2 + stderr as a refusal."""

    CLAUDE = "claude"  #: Claude Code and Codex share one wire format
    GEMINI = "gemini"


_TOOL_EVENTS = {"PreToolUse": Dialect.CLAUDE, "BeforeTool": Dialect.GEMINI}
_FILE_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
_GEMINI_FILE_TOOLS = {"write_file", "replace"}
_SHELL_TOOLS = {"Bash", "run_shell_command", "shell", "exec_command", "local_shell"}
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$", re.MULTILINE)


class ToolCall:
    """What one tool call would change, as far as its input says."""

    __slots__ = ("cwd", "inside", "paths", "refusals", "tool", "vaultctl")

    def __init__(self, tool: str, cwd: str = "/") -> None:
        self.tool = tool
        self.cwd = cwd  #: the session's folder
        self.paths: list[str] = []  #: absolute; refused at, inside or above a vault
        self.inside: list[str] = []  #: folders a command runs in; refused at or inside a vault
        self.vaultctl: list[str] = []  #: vaultctl commands run as the user
        self.refusals: list[str] = []  #: reasons the line alone gives


class Hook:
    __slots__ = ("call", "dialect", "event", "prompt", "session", "stop_active")

    def __init__(self, event: Event, dialect: Dialect, call: ToolCall | None = None) -> None:
        self.event = event
        self.dialect = dialect
        self.call = call
        self.session: str | None = None  #: the host's session id, when it is one vaultd can record
        self.prompt: str | None = None  #: the prompt of a UserPromptSubmit
        self.stop_active = False  #: the host is already continuing because of a Stop hook: never block again


_SESSION_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
_SESSION_EVENTS = {"UserPromptSubmit": Event.PROMPT, "Stop": Event.STOP, "SessionEnd": Event.SESSION_END}


def _session_hook(event: Event, payload: dict[str, Any]) -> Hook:
    hook = Hook(event, Dialect.CLAUDE)
    sid = payload.get("session_id")
    hook.session = sid if isinstance(sid, str) and _SESSION_ID.fullmatch(sid) else None
    prompt = payload.get("prompt")
    hook.prompt = prompt if isinstance(prompt, str) else None
    hook.stop_active = payload.get("stop_hook_active") is True
    return hook


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _absolute(path: str, cwd: str) -> str:
    """As the kernel resolves it: links before ``..`` (a normalised path could hide a link)."""
    return os.path.realpath(os.path.join(cwd, path))


def _shell_line(command: Any) -> str | None:
    if isinstance(command, list) and all(isinstance(a, str) for a in command):
        # ["bash", "-lc", "LINE"] runs LINE; any other argv is one command.
        if len(command) >= 3 and os.path.basename(command[0]) in ("bash", "sh", "zsh", "dash") and command[-2] in ("-c", "-lc"):
            return str(command[-1])
        return shlex.join(command)
    return _text(command)


def read_hook(payload: Any, env: dict[str, str]) -> Hook:
    """The event and, for a tool event, what the tool would write."""
    if not isinstance(payload, dict):
        return Hook(Event.OTHER, Dialect.CLAUDE)
    name = payload.get("hook_event_name")
    if name == "SessionStart":
        dialect = Dialect.GEMINI if "timestamp" in payload and "source" in payload else Dialect.CLAUDE
        hook = _session_hook(Event.SESSION_START, payload)
        hook.dialect = dialect
        return hook
    if isinstance(name, str) and name in _SESSION_EVENTS:
        return _session_hook(_SESSION_EVENTS[name], payload)
    tool_dialect = _TOOL_EVENTS.get(name) if isinstance(name, str) else None
    if tool_dialect is None:
        return Hook(Event.OTHER, Dialect.CLAUDE)
    dialect = tool_dialect
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    cwd = _text(payload.get("cwd")) or env.get("PWD") or "/"
    call = ToolCall(tool=tool if isinstance(tool, str) else "", cwd=cwd)
    if not isinstance(tool_input, dict):
        return Hook(Event.TOOL, dialect, call)
    if call.tool in _FILE_TOOLS or call.tool in _GEMINI_FILE_TOOLS:
        key = _FILE_TOOLS.get(call.tool, "file_path")
        path = _text(tool_input.get(key)) or _text(tool_input.get("path"))
        if path is not None:
            call.paths.append(_absolute(path, cwd))
    elif call.tool == "apply_patch":
        patch = _text(tool_input.get("command")) or _text(tool_input.get("patch")) or _text(tool_input.get("input")) or ""
        call.paths += [_absolute(p, cwd) for p in _PATCH_FILE.findall(patch)]
    elif call.tool in _SHELL_TOOLS:
        line = _shell_line(tool_input.get("command"))
        workdir = _text(tool_input.get("dir_path")) or _text(tool_input.get("workdir"))
        if line is not None:
            writes = shell_writes(line, _absolute(workdir, cwd) if workdir else cwd, env)
            call.paths += writes.paths
            call.inside += writes.inside
            call.vaultctl += writes.vaultctl
            call.refusals += writes.refusals
    return Hook(Event.TOOL, dialect, call)
