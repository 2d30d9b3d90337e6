"""``vaultctl guard``: the hook agent hosts run before their own edit and shell tools, and at
session start.

A tool call that would write inside a vault whose policy guards it (every vault, unless a person
turned the guard off) is refused: exit 2 with the reason on stderr, which Claude Code, Codex and
Gemini CLI all read as "block the tool and tell the model why". The reason names the vaultd tool
that does the same job through the validated, journaled, reviewable path. A vault's ``.vaultd/``
is refused whatever the policy says. Anything else is let through at once: exit 0, no output.

Most tool calls name no file to write (a test run, a grep), so they never reach the daemon; the
rest cost one socket call. When no daemon answers even after autostart, the registry file is read
directly and the same rule (:func:`protocol.methods.guard.verdict`) applied, so a stopped daemon
does not open the vaults to raw edits.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

from vaultctl.guard.payload import Event, Hook, read_hook

if TYPE_CHECKING:
    from protocol.methods.guard import GuardCheckResult
    from protocol.methods.vaults import VaultEntry

# What answers a call that names a file (msgspec, the guard's Structs, the client) is imported
# only then: most tool calls name none, and a hook runs before every one.

MAX_PAYLOAD_BYTES = 64 * 1024 * 1024  #: a Write of a large file carries its content; the path is all we need
MAX_REGISTRY_BYTES = 64 * 1024
HOOK_TIMEOUT_S = 10.0
EXIT_ALLOW = 0
EXIT_BLOCK = 2  #: every supported host: do not run the tool; stderr is the reason
MAX_CONTEXT_CHARS = 2000


def _registry_entries() -> list[VaultEntry] | None:
    """The registered vaults from config.json (none when it does not exist), or None when it
    cannot be read."""
    import msgspec

    from protocol.location import resolve_home
    from protocol.methods.vaults import VaultEntry

    registry = msgspec.defstruct("Registry", [("vaults", list[VaultEntry], [])])  # the rest of config.json is the daemon's

    path = resolve_home() / "config.json"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return []  # nothing registered: nothing to guard
    except OSError:
        return None
    try:
        data = os.read(fd, MAX_REGISTRY_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_REGISTRY_BYTES:
        return None
    try:
        entries: list[VaultEntry] = msgspec.json.decode(data, type=registry).vaults  # type: ignore[attr-defined]  # a defstruct
        return entries
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _check(paths: list[str]) -> GuardCheckResult | None:
    """Ask the daemon; without one, judge from the registry file; None when neither is possible."""
    from protocol.methods.guard import (
        GUARD_CHECK,
        MAX_GUARD_PATHS,
        GuardCheckParams,
        GuardCheckResult,
        GuardVerdict,
        canonical,
        guarded,
        verdict,
    )
    from vaultctl.client import CallError, DaemonUnavailable, connect

    chunks = [paths[i : i + MAX_GUARD_PATHS] for i in range(0, len(paths), MAX_GUARD_PATHS)] or [[]]
    try:
        with connect(client_name="vaultctl-guard", timeout=HOOK_TIMEOUT_S) as client:
            results = [client.call(GUARD_CHECK, GuardCheckParams(paths=chunk)) for chunk in chunks]
        verdicts = [v for r in results for v in r.verdicts]
        return GuardCheckResult(refused=any(r.refused for r in results), verdicts=verdicts, guarded=results[0].guarded)
    except (DaemonUnavailable, CallError, OSError):
        entries = _registry_entries()
        if entries is None:
            return None
        local: list[GuardVerdict] = [verdict(entries, canonical(p)) for p in paths]
        return GuardCheckResult(refused=any(v.refused for v in local), verdicts=local, guarded=guarded(entries))


def _tool(hook: Hook) -> int:
    call = hook.call
    if call is None or (not call.paths and not call.vaultctl):
        return EXIT_ALLOW
    result = _check(call.paths)
    if result is None:
        print("vaultd guard: no daemon answered and the registry could not be read; the tool was let through", file=sys.stderr)
        return EXIT_ALLOW
    reasons = [v.reason for v in result.verdicts if v.refused]
    if call.vaultctl and result.guarded:
        commands = ", ".join(f"'vaultctl {c}'" for c in dict.fromkeys(call.vaultctl))
        reasons.append(
            f"{commands} acts as your user, outside the vault's agent policy: use the vaultd MCP tools instead "
            "(the policy applies each change, or holds it as a proposal for your user), or ask your user to run it"
        )
    if not reasons:
        return EXIT_ALLOW
    shown = list(dict.fromkeys(reasons))
    more = f" (and {len(shown) - 3} more)" if len(shown) > 3 else ""
    print(f"refused by vaultd's guard ({call.tool}): " + "; ".join(shown[:3]) + more, file=sys.stderr)
    return EXIT_BLOCK


def _session_start() -> int:
    from protocol.methods.common import Empty
    from protocol.methods.guard import GUARD_CONTEXT
    from vaultctl.client import CallError, DaemonUnavailable, connect

    try:
        with connect(client_name="vaultctl-guard", timeout=HOOK_TIMEOUT_S) as client:
            vaults = client.call(GUARD_CONTEXT, Empty()).vaults
    except (DaemonUnavailable, CallError, OSError):
        return EXIT_ALLOW  # a session start is never blocked, and silence tells nothing
    if not vaults:
        return EXIT_ALLOW
    lines = [
        "vaultd keeps these Obsidian vaults. Read and change their notes only through the vaultd MCP tools "
        "(note_search, note_read, note_create, note_patch, note_append, note_set_frontmatter, note_move, note_delete); "
        "your own file edit and shell tools are refused on their files."
    ]
    for v in vaults:
        held = f"; {', '.join(v.proposes)} are held for your user as proposals" if v.proposes else ""
        refused = f"; {', '.join(v.refuses)} are refused to agents" if v.refuses else ""
        waiting = f"; {v.pending_proposals} proposal(s) wait for your user" if v.pending_proposals else ""
        lines.append(f"- vault '{v.id}' at {v.path}: {v.notes} notes{held}{refused}{waiting}.")
    text = "\n".join(lines)[:MAX_CONTEXT_CHARS]
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}))
    return EXIT_ALLOW


def _payload() -> Any:
    data = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
    if len(data) > MAX_PAYLOAD_BYTES:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


def run() -> int:
    """Answer one hook call; the exit status is the host's verdict."""
    payload = _payload()
    if payload is None:
        print("vaultd guard: the hook payload is not JSON (or is over 64 MiB); the tool was refused", file=sys.stderr)
        return EXIT_BLOCK
    hook = read_hook(payload, dict(os.environ))
    if hook.event is Event.TOOL:
        return _tool(hook)
    if hook.event is Event.SESSION_START:
        return _session_start()
    return EXIT_ALLOW
