"""What a user should know once setup adds the guard's hooks: the host settings that keep hooks
from running, and the step a host asks of a person before a new hook runs.

Setup never changes these settings itself: turning a host's hooks back on, or trusting a hook in
Codex, is the person's decision, so setup names the setting and where it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vaultctl.setup import files
from vaultctl.setup.errors import SetupError
from vaultctl.setup.hosts import GUARD_NAME, PORTABLE_COMMAND, Host

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path


def host_notes(
    host: Host, path: Path, data: Mapping[str, Any], env: Mapping[str, str], project: Path | None, *, changed: bool
) -> tuple[str, ...]:
    """Notes for the guard's plan on ``host``; ``data`` is the hooks file as setup leaves it."""
    notes: list[str] = []
    if project is not None:
        notes.append(
            f"{path.relative_to(project)} is shared through the project's repository, so the hook runs "
            f"`{PORTABLE_COMMAND} guard` from each user's PATH."
        )
    notes += hooks_off(host, path, data)
    if host.name == "codex":
        notes += _codex(path.parent / "config.toml", changed=changed)
    if changed:
        notes.append(f"{host.title} reads its hooks when a session starts: sessions already open run without the guard until restarted.")
    return tuple(notes)


def hooks_off(host: Host, path: Path, data: Mapping[str, Any]) -> list[str]:
    """The settings, in the hooks file or beside it, that keep the guard from running."""
    if host.name == "claude" and data.get("disableAllHooks") is True:
        return [f"{path} sets disableAllHooks, so Claude Code runs no hook, the guard included, until it is removed."]
    if host.name == "gemini":
        return _gemini(path, data)
    if host.name == "codex":
        config = path.parent / "config.toml"
        features = _toml_of(config).get("features")
        if isinstance(features, dict) and (features.get("hooks") is False or features.get("codex_hooks") is False):
            return [f"{config} turns Codex's hooks off ([features] hooks = false), so the guard runs only once they are on."]
    return []


def _gemini(path: Path, data: Mapping[str, Any]) -> list[str]:
    config = data.get("hooksConfig")
    if not isinstance(config, dict):
        return []
    out: list[str] = []
    if config.get("enabled") is False:
        out.append(f"{path} turns Gemini CLI's hooks off (hooksConfig.enabled is false), so the guard runs only once they are on.")
    disabled = config.get("disabled")
    if isinstance(disabled, list) and GUARD_NAME in disabled:
        out.append(f"{path} lists {GUARD_NAME} under hooksConfig.disabled, so Gemini CLI skips it until it is taken off that list.")
    return out


def _codex(config: Path, *, changed: bool) -> list[str]:
    out: list[str] = []
    if "hooks" in _toml_of(config):
        out.append(
            f"{config} has hooks of its own ([hooks]); Codex loads those and hooks.json both, and warns at start-up "
            "that one place has two; move yours into hooks.json to quiet it."
        )
    if changed:
        out.append(
            "Codex runs a new hook only once you trust it, and skips it silently until then: open Codex, "
            "type /hooks, and trust vaultd's two (PreToolUse, SessionStart)."
        )
    return out


def _toml_of(path: Path) -> dict[str, Any]:
    """The file's data, or {} when it is absent or unreadable (setup refuses those elsewhere)."""
    try:
        snap = files.read(path)
    except SetupError:
        return {}
    if snap is None:
        return {}
    import tomllib  # lazily: only a Codex setup pays for it

    try:
        return tomllib.loads(snap.data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
