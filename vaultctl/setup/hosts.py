"""The agent hosts setup knows: where each keeps its MCP servers and its hooks, and in what shape.

Adding a host is one row in :data:`HOSTS`. The entry is always named ``vaultd`` and launches
``<vaultctl> mcp`` over stdio; only where a host wants more (Claude Code writes ``"type":
"stdio"`` itself) does its row say so. A host whose hooks can refuse a file edit before it
happens gets the guard's hook groups (:class:`GuardHooks`): ``<vaultctl> guard`` on the events
that edit files or run commands, and on session start.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocol.location import resolve_home, resolve_socket
from vaultctl.setup.homes import home_of

ENTRY_NAME = "vaultd"
MCP_ARGS = ("mcp",)
MCP_TOOLS = "core"  #: the toolset an entry offers unless ``setup --tools`` says otherwise (vaultctl.mcp.toolsets)
GUARD_ARGS = ("guard",)
GUARD_NAME = "vaultd-guard"  #: the hook's name where a host names hooks (Gemini CLI's /hooks)
PORTABLE_COMMAND = "vaultctl"  #: what a shared (project) file names: the command on each user's PATH
LOCATION_VARS = ("VAULTD_HOME", "VAULTD_SOCKET")

Env = Mapping[str, str]


class FileFormat(enum.Enum):
    """How a host's config file is written."""

    JSON = "json"  #: a JSON object with an ``mcpServers`` object
    TOML = "toml"  #: a TOML file with ``[mcp_servers.<name>]`` tables


@dataclass(frozen=True, slots=True)
class HookEvent:
    """One event the guard's group is added to; ``matcher`` None matches every occurrence."""

    name: str
    matcher: str | None = None


@dataclass(frozen=True, slots=True)
class GuardHooks:
    """Where and how a host keeps its hooks (all three known ones share the matcher-group shape)."""

    _file: Callable[[Env], Path]
    events: tuple[HookEvent, ...]
    project_file: str | None = None  #: relative to a project folder, for hosts with one
    hook_name: str | None = None  #: written as the hook's ``name`` where the host shows names

    def path(self, env: Env, project: Path | None = None) -> Path:
        if project is not None and self.project_file is not None:
            return project / self.project_file
        return self._file(env)

    def groups(self, command: str) -> dict[str, dict[str, Any]]:
        """Event name -> the matcher group setup appends to that event's array."""
        hook: dict[str, Any] = {"type": "command", "command": command}
        if self.hook_name:
            hook["name"] = self.hook_name
        out: dict[str, dict[str, Any]] = {}
        for event in self.events:
            group: dict[str, Any] = {"matcher": event.matcher} if event.matcher is not None else {}
            group["hooks"] = [dict(hook)]
            out[event.name] = group
        return out


@dataclass(frozen=True, slots=True)
class Host:
    """One agent host's MCP configuration."""

    name: str  #: what the user types: ``vaultctl setup <name>``
    title: str  #: what people call it
    format: FileFormat
    container: str  #: the key holding the servers
    _config: Callable[[Env], Path]
    _markers: Callable[[Env], tuple[Path, ...]]  #: any of these existing means it is installed
    stdio_type: bool = False  #: write ``"type": "stdio"`` too
    projects: bool = False  #: has a per-project file (``project=`` option)
    guard: GuardHooks | None = None  #: its hooks, when the guard can refuse an edit there
    no_guard: str = ""  #: why it has no guard hook (said when setup leaves its hooks alone)

    def config_path(self, env: Env, project: Path | None = None) -> Path:
        """The file setup edits: the user's, or the project's when ``project`` is given."""
        if project is not None:
            return project / ".mcp.json"
        return self._config(env)

    def installed(self, env: Env) -> bool:
        """Does this user seem to use the host? ``setup all`` skips hosts that are not."""
        return any(marker.exists() for marker in self._markers(env))

    def markers(self, env: Env) -> tuple[Path, ...]:
        return self._markers(env)

    def entry(self, command: str, env: Mapping[str, str] | None = None, tools: str = MCP_TOOLS) -> dict[str, Any]:
        """The entry setup writes for this host; ``env``: variables the host must pass to it;
        ``tools``: the toolset it offers (what every session of the host pays for in context)."""
        entry: dict[str, Any] = {"type": "stdio"} if self.stdio_type else {}
        entry["command"] = command
        entry["args"] = [*MCP_ARGS, "--tools", tools]
        if env:
            entry["env"] = dict(env)
        return entry


def launch_env(env: Env) -> dict[str, str]:
    """The vaultd locations set here to something other than their defaults.

    A host may start ``vaultctl mcp`` with an environment of its own; without these the shim
    would reach (and autostart) the default daemon, which has none of this user's vaults. Each
    variable is recorded only when it changes where the shim looks, so a default setup writes no
    ``env`` at all.
    """
    plain = {k: v for k, v in env.items() if k not in (*LOCATION_VARS, "XDG_DATA_HOME", "XDG_RUNTIME_DIR")}
    out: dict[str, str] = {}
    home = resolve_home(env)
    if env.get("VAULTD_HOME") and home != resolve_home(plain):
        out["VAULTD_HOME"] = str(home)
    if env.get("VAULTD_SOCKET"):
        socket = resolve_socket(home, env)
        if socket != resolve_socket(home, plain):
            out["VAULTD_SOCKET"] = str(socket)
    return out


def _claude_dir(env: Env) -> Path | None:
    return Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else None


def _claude_config(env: Env) -> Path:
    folder = _claude_dir(env)
    return (folder or home_of(env)) / ".claude.json"


def _claude_settings(env: Env) -> Path:
    folder = _claude_dir(env)
    return (folder or home_of(env) / ".claude") / "settings.json"


def _claude_markers(env: Env) -> tuple[Path, ...]:
    folder = _claude_dir(env)
    if folder is not None:
        return (folder,)
    return (home_of(env) / ".claude", home_of(env) / ".claude.json")


def _codex_dir(env: Env) -> Path:
    return Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home_of(env) / ".codex"


def _in_home(*parts: str) -> Callable[[Env], Path]:
    return lambda env: home_of(env).joinpath(*parts)


def _parent_of(config: Callable[[Env], Path]) -> Callable[[Env], tuple[Path, ...]]:
    return lambda env: (config(env).parent,)


HOSTS: dict[str, Host] = {
    host.name: host
    for host in (
        Host(
            "claude",
            "Claude Code",
            FileFormat.JSON,
            "mcpServers",
            _claude_config,
            _claude_markers,
            stdio_type=True,
            projects=True,
            guard=GuardHooks(
                _claude_settings,
                (
                    HookEvent("PreToolUse", "Edit|Write|MultiEdit|NotebookEdit|Bash"),
                    HookEvent("SessionStart"),
                    HookEvent("UserPromptSubmit"),  # the prompt's one-line summary, for the session's record
                    HookEvent("Stop"),  # remind the agent of its pending proposals and running work
                ),
                project_file=".claude/settings.json",
            ),
        ),
        Host(
            "codex",
            "Codex",
            FileFormat.TOML,
            "mcp_servers",
            lambda env: _codex_dir(env) / "config.toml",
            lambda env: (_codex_dir(env),),
            guard=GuardHooks(
                lambda env: _codex_dir(env) / "hooks.json",
                (HookEvent("PreToolUse", "Bash|apply_patch"), HookEvent("SessionStart")),
            ),
        ),
        Host(
            "cursor",
            "Cursor",
            FileFormat.JSON,
            "mcpServers",
            _in_home(".cursor", "mcp.json"),
            _parent_of(_in_home(".cursor", "mcp.json")),
            no_guard=(
                "Cursor's hooks (~/.cursor/hooks.json) name their events and answer in a shape of their own "
                "(preToolUse, a JSON permission), which vaultd's guard does not speak yet"
            ),
        ),
        Host(
            "gemini",
            "Gemini CLI",
            FileFormat.JSON,
            "mcpServers",
            _in_home(".gemini", "settings.json"),
            _parent_of(_in_home(".gemini", "settings.json")),
            guard=GuardHooks(
                _in_home(".gemini", "settings.json"),
                (HookEvent("BeforeTool", "write_file|replace|run_shell_command"), HookEvent("SessionStart")),
                hook_name=GUARD_NAME,
            ),
        ),
        Host(
            "windsurf",
            "Windsurf",
            FileFormat.JSON,
            "mcpServers",
            _in_home(".codeium", "windsurf", "mcp_config.json"),
            _parent_of(_in_home(".codeium", "windsurf", "mcp_config.json")),
            no_guard=(
                "Windsurf's Cascade hooks (~/.codeium/windsurf/hooks.json: pre_write_code, pre_run_command) "
                "send a payload of their own shape, which vaultd's guard does not speak yet"
            ),
        ),
        Host(  # https://moonshotai.github.io/kimi-cli/en/customization/mcp.html: ~/.kimi/mcp.json, mcpServers
            "kimi",
            "Kimi CLI",
            FileFormat.JSON,
            "mcpServers",
            _in_home(".kimi", "mcp.json"),
            _parent_of(_in_home(".kimi", "mcp.json")),
            no_guard="vaultd's guard does not know Kimi CLI's hooks yet",
        ),
        Host(  # https://qwenlm.github.io/qwen-code-docs/en/users/features/mcp/: user ~/.qwen/settings.json, project .mcp.json
            "qwen",
            "Qwen Code",
            FileFormat.JSON,
            "mcpServers",
            _in_home(".qwen", "settings.json"),
            _parent_of(_in_home(".qwen", "settings.json")),
            projects=True,
            no_guard="vaultd's guard does not know Qwen Code's hooks yet",
        ),
        Host(  # https://antigravity.google/docs/mcp: ~/.gemini/antigravity/mcp_config.json, mcpServers
            "antigravity",
            "Antigravity",
            FileFormat.JSON,
            "mcpServers",
            _in_home(".gemini", "antigravity", "mcp_config.json"),
            _parent_of(_in_home(".gemini", "antigravity", "mcp_config.json")),
            no_guard="vaultd's guard does not know Antigravity's hooks yet",
        ),
    )
}
"""Every known host, in the order ``setup all`` visits them."""
