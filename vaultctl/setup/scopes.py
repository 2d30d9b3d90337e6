"""Claude Code's other scopes: entries named ``vaultd`` that win over the one setup writes.

Claude Code reads MCP servers from three scopes and, for one name, the nearest wins: *local*
(``projects[<folder>].mcpServers`` inside the user file, for that folder only), then *project*
(``<folder>/.mcp.json``), then *user* (the user file's own ``mcpServers``). A leftover local or
project entry named ``vaultd`` therefore silently replaces the user entry setup writes, in that
folder; ``claude mcp list`` then runs the leftover. Setup and doctor name each one.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultctl.setup import files
from vaultctl.setup.errors import SetupError
from vaultctl.setup.hosts import ENTRY_NAME, HOSTS

if TYPE_CHECKING:
    from collections.abc import Mapping

PROJECT_FILE = ".mcp.json"


@dataclass(frozen=True, slots=True)
class Shadow:
    """One ``vaultd`` entry in a scope nearer than the one being written."""

    scope: str  #: "local" or "project"
    file: Path  #: where it is written
    folder: Path  #: the project folder it applies to
    value: Any  #: the entry as written there

    def advice(self) -> str:
        where = f"{self.file} (for {self.folder})" if self.scope == "local" else str(self.file)
        return (
            f"Claude Code also has a {self.scope}-scope vaultd entry in {where}; in {self.folder} it wins over "
            f"the user-scope one. Remove it there with `claude mcp remove vaultd -s {self.scope}` run in "
            f"{self.folder}, or keep it on purpose."
        )


def _json_of(path: Path) -> Any:
    """A JSON file's data, or None when it is absent, unreadable or not JSON (setup refuses those
    elsewhere; here they only hide nothing)."""
    try:
        snap = files.read(path)
    except SetupError:
        return None
    if snap is None:
        return None
    try:
        return json.loads(snap.data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None


def _named(servers: Any) -> Any:
    return servers.get(ENTRY_NAME) if isinstance(servers, dict) else None


def claude_shadows(env: Mapping[str, str], cwd: Path, project: Path | None = None) -> list[Shadow]:
    """The entries that win over the one setup writes: for the user scope (``project`` None),
    every local-scope entry and the project entry of ``cwd``; for a project file, the local entry
    for that project."""
    user_file = Path(os.path.abspath(HOSTS["claude"].config_path(env)))
    data = _json_of(user_file)
    out: list[Shadow] = []
    local = data.get("projects") if isinstance(data, dict) else None
    if isinstance(local, dict):
        for folder, settings in sorted(local.items()):
            if not isinstance(settings, dict):
                continue
            value = _named(settings.get("mcpServers"))
            if value is None:
                continue
            if project is not None and Path(folder) != project:
                continue
            out.append(Shadow("local", user_file, Path(folder), value))
    if project is None:
        shared = cwd / PROJECT_FILE
        data = _json_of(shared)
        value = _named(data.get("mcpServers")) if isinstance(data, dict) else None
        if value is not None:
            out.append(Shadow("project", shared, cwd, value))
    return out
