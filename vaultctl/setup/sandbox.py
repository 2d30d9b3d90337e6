"""The agent hosts' own sandboxes: the rules that keep an agent's shell off the vaults and the
daemon's socket, and doctor's view of whether each host enforces them.

The guard reads shell lines; a program can always compute a path at run time. What enforces the
boundary is the host's sandbox, which runs every command of its shell tool under operating-system
rules (Claude Code: bubblewrap on Linux, Seatbelt on macOS; Codex: Landlock and seccomp, Seatbelt;
Gemini CLI: a container). What each host can enforce:

- Claude Code: ``sandbox.enabled`` with ``sandbox.filesystem.denyWrite`` on every vault, vaultd's
  home and the socket's folder, and ``denyRead`` on the socket's folder and vaultd's home (a shell
  that cannot reach the socket cannot speak as a person); ``allowUnsandboxedCommands: false`` so
  a refused command is not retried outside the sandbox; ``permissions.deny`` ``Edit(//PATH/**)``
  rules for its file tools (an ``Edit`` rule covers every built-in tool that edits files). It
  cannot sandbox its MCP servers or hooks (they are vaultd's own), nor a command a person lets out.
- Codex: ``sandbox_mode = "workspace-write"`` (or ``read-only``) writes only in the session's
  folder, the temp folders and ``[sandbox_workspace_write] writable_roots``; a vault is safe while
  it is none of those. It has no per-path deny inside a writable root: a session started in a
  vault can write it.
- Gemini CLI: ``tools.sandbox`` runs its tools in a container (docker or podman) that mounts the
  project folder only; without a container runtime it has no sandbox on Linux.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from protocol.location import resolve_home, resolve_socket
from vaultctl.setup import files
from vaultctl.setup.errors import SetupError
from vaultctl.setup.homes import home_of

if TYPE_CHECKING:
    from collections.abc import Mapping

MAX_REGISTRY_BYTES = 1024 * 1024


def registered_vaults(env: Mapping[str, str]) -> list[str]:
    """The vault folders in the registry file (none when it is absent or unreadable)."""
    try:
        snap = files.read(resolve_home(env) / "config.json")
    except SetupError:
        return []
    if snap is None or len(snap.data) > MAX_REGISTRY_BYTES:
        return []
    try:
        data = json.loads(snap.data)
    except ValueError:
        return []
    vaults = data.get("vaults") if isinstance(data, dict) else None
    return [v["path"] for v in vaults or [] if isinstance(v, dict) and isinstance(v.get("path"), str)]


def protected(env: Mapping[str, str], vaults: list[str] | None = None) -> tuple[list[str], list[str]]:
    """(folders no sandboxed command may write, folders it may not read): every vault, vaultd's
    home, and the socket's folder; the home and the socket's folder are also kept from reading
    (the journal key is there, and the socket speaks for the person)."""
    home = resolve_home(env)
    socket_dir = str(resolve_socket(home, env).parent)
    vault_paths = registered_vaults(env) if vaults is None else vaults
    write = list(dict.fromkeys([*vault_paths, str(home), socket_dir]))
    return write, list(dict.fromkeys([str(home), socket_dir]))


def _absolute_rule(path: str) -> str:
    """Claude Code reads ``//PATH`` as absolute (a single ``/`` is relative to the settings file)."""
    return "/" + path if path.startswith("/") else path


def claude_settings(env: Mapping[str, str], vaults: list[str] | None = None) -> dict[str, Any]:
    """The ``sandbox`` and ``permissions`` settings that make Claude Code enforce the boundary."""
    write, read = protected(env, vaults)
    return {
        "sandbox": {
            "enabled": True,
            "allowUnsandboxedCommands": False,
            "filesystem": {"denyWrite": [_absolute_rule(p) for p in write], "denyRead": [_absolute_rule(p) for p in read]},
        },
        "permissions": {"deny": [f"Edit({_absolute_rule(p)}/**)" for p in write]},
    }


def bwrap_argv(env: Mapping[str, str], vaults: list[str] | None = None, *, writable: list[str] | None = None) -> list[str]:
    """A bubblewrap command line with Claude Code's Linux rules for these settings: the whole
    file system read-only, the session's folders writable, every denyWrite folder read-only again
    inside them, every denyRead folder hidden behind an empty one, and no network."""
    write, read = protected(env, vaults)
    argv = ["bwrap", "--die-with-parent", "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for folder in writable or []:
        argv += ["--bind", folder, folder]
    for folder in write:
        if os.path.exists(folder):
            argv += ["--ro-bind", folder, folder]
    for folder in read:
        if os.path.isdir(folder):
            argv += ["--tmpfs", folder]
    return argv


def _json_of(path: str) -> dict[str, Any]:
    try:
        snap = files.read(Path(os.path.abspath(path)))
    except SetupError:
        return {}
    if snap is None:
        return {}
    try:
        data = json.loads(snap.data)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _claude_row(env: Mapping[str, str]) -> tuple[str, str]:
    folder = env.get("CLAUDE_CONFIG_DIR") or os.path.join(str(home_of(env)), ".claude")
    path = os.path.join(folder, "settings.json")
    data = _json_of(path)
    sandbox = data.get("sandbox") if isinstance(data.get("sandbox"), dict) else {}
    assert isinstance(sandbox, dict)
    if sandbox.get("enabled") is not True:
        return "warn", f"{path}: Claude Code's sandbox is off, so its shell is kept off the vaults only by the guard's reading of each line"
    fs = sandbox.get("filesystem") if isinstance(sandbox.get("filesystem"), dict) else {}
    assert isinstance(fs, dict)
    denied = {str(p).replace("//", "/", 1) if str(p).startswith("//") else str(p) for p in fs.get("denyWrite", []) or []}
    write, _ = protected(env)
    missing = [p for p in write if p not in denied]
    if missing:
        return (
            "warn",
            f"{path}: the sandbox is on but does not deny writes to {', '.join(missing)}; add them to sandbox.filesystem.denyWrite",
        )
    return "ok", f"{path}: the sandbox is on and denies writes to every vault, vaultd's home and the socket's folder"


def _codex_row(env: Mapping[str, str]) -> tuple[str, str]:
    import tomllib

    folder = env.get("CODEX_HOME") or os.path.join(str(home_of(env)), ".codex")
    path = os.path.join(folder, "config.toml")
    try:
        snap = files.read(Path(os.path.abspath(path)))
        data = tomllib.loads(snap.data.decode("utf-8")) if snap is not None else {}
    except (SetupError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        data = {}
    mode = data.get("sandbox_mode")
    if mode not in ("workspace-write", "read-only"):
        return (
            "warn",
            f"{path}: sandbox_mode is {mode or 'unset (Codex asks per command)'}, so its shell is kept off the vaults only by the guard",
        )
    roots = (data.get("sandbox_workspace_write") or {}).get("writable_roots") or []
    write, _ = protected(env)
    exposed = [r for r in roots if isinstance(r, str) and any(p == r or p.startswith(r.rstrip("/") + "/") for p in write)]
    if exposed:
        return "warn", f"{path}: writable_roots {', '.join(exposed)} hold a vault or vaultd's home; the sandbox lets the shell write there"
    return (
        "ok",
        f"{path}: sandbox_mode {mode}: the vaults are outside its writable roots (a session started inside a vault can still write it)",
    )


def _gemini_row(env: Mapping[str, str]) -> tuple[str, str]:
    path = os.path.join(str(home_of(env)), ".gemini", "settings.json")
    data = _json_of(path)
    tools = data.get("tools") if isinstance(data.get("tools"), dict) else {}
    assert isinstance(tools, dict)
    value = tools.get("sandbox", data.get("sandbox"))
    if not value:
        return "warn", f"{path}: Gemini CLI's sandbox (tools.sandbox) is off, so its shell is kept off the vaults only by the guard"
    return "ok", f"{path}: Gemini CLI runs its tools in its sandbox ({value})"


_ROWS = {"claude": _claude_row, "codex": _codex_row, "gemini": _gemini_row}


def sandbox_note(name: str, env: Mapping[str, str]) -> str | None:
    """What setup's plan says about the host's sandbox when told to leave it alone
    (``--no-sandbox``): nothing when it enforces the boundary, else what to turn on by hand."""
    row = sandbox_row(name, env)
    if row is None or row[0] == "ok":
        return None
    if name == "claude":
        rules = json.dumps(claude_settings(env), indent=2)
        return f"{row[2]}. The guard reads words; the sandbox enforces. Merge into it:\n{rules}"
    if name == "codex":
        return (
            f'{row[2]}. Set sandbox_mode = "workspace-write" in config.toml, with no vault under [sandbox_workspace_write] writable_roots.'
        )
    return f"{row[2]}. Set tools.sandbox to true (needs docker or podman) in settings.json."


def sandbox_row(name: str, env: Mapping[str, str]) -> tuple[str, str, str] | None:
    """(level, check, finding): is the host's OS boundary on, or is its shell guarded only by words?"""
    row = _ROWS.get(name)
    if row is None:
        return None
    level, finding = row(env)
    return level, f"sandbox:{name}", finding
