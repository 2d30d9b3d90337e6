"""``vaultctl guard``: the hook agent hosts run before their own edit and shell tools, at
session start, and (Claude Code) on each prompt and at the end of each turn.

A tool call that would write inside a vault whose policy guards it (every vault, unless a person
turned the guard off), or that names a folder holding one, vaultd's own home, or a host file that
holds the hooks, is refused: exit 2 with the reason on stderr, which Claude Code, Codex and
Gemini CLI all read as "block the tool and tell the model why". The reason names the vaultd tool
that does the same job through the validated, journaled, reviewable path. A vault's ``.vaultd/``
is refused whatever the policy says. Anything else is let through at once: exit 0, no output.

Most tool calls name no file to write (a test run, a grep), so they never reach the daemon; the
rest cost one socket call. When no daemon answers even after autostart, the registry file is read
directly and the same rule (:func:`protocol.methods.guard.verdict`) applied, so a stopped daemon
does not open the vaults to raw edits; when neither answers, a call that names a path is refused
(the guard fails closed).
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

from vaultctl.guard.payload import Event, Hook, read_hook

if TYPE_CHECKING:
    from protocol.methods.guard import GuardCheckResult
    from protocol.methods.sessions import SessionHookResult
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


INSIDE_PROBE = "*"
"""Appended to a folder a command runs in: the probe is inside a vault exactly when the folder is at
or inside it, and holds no vault, so the one rule judges "runs in a vault" without "above"."""


def protected_paths(env: dict[str, str], cwd: str) -> tuple[list[str], list[str]]:
    """What no agent tool may write, whatever the vaults' policies: (folders and files refused at,
    inside or above them; files refused at or inside them).

    The first list is vaultd's home (its registry and policies in ``config.json``, the journal
    key), the socket's folder when it is vaultd's own, and each agent host's user files that hold
    vaultd's hooks and MCP entry (an agent that edits them turns its own guard off). The second is
    the project's ``.claude/settings*.json`` beside the session's folder: the project itself is
    the agent's to work in, so only those files and their folder are kept.
    """
    from protocol.location import resolve_home, resolve_socket
    from vaultctl.setup.hosts import HOSTS

    home = resolve_home(env)
    full = [str(home)]
    socket = resolve_socket(home, env)
    full.append(str(socket.parent) if "vaultd" in socket.parent.name or socket.parent.parent == home else str(socket))
    for host in HOSTS.values():
        full.append(str(host.config_path(env)))
        if host.guard is not None:
            full.append(str(host.guard.path(env)))
    if env.get("CLAUDE_CONFIG_DIR") is None:
        full.append(os.path.join(env.get("HOME", "/"), ".claude", "settings.local.json"))
    project = os.path.join(cwd, ".claude")
    local = [os.path.join(project, "settings.json"), os.path.join(project, "settings.local.json")]
    return list(dict.fromkeys(os.path.realpath(p) for p in full)), [os.path.realpath(p) for p in local]


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _local_reasons(paths: list[str], inside: list[str], env: dict[str, str], cwd: str) -> list[str]:
    """Refusals decided here, without the daemon: vaultd's own files and the hosts' hook files."""
    full, local = protected_paths(env, cwd)
    reasons: list[str] = []
    for path in (os.path.realpath(p) for p in paths):
        for root in full:
            if _under(path, root) or _under(root, path):
                reasons.append(
                    f"{path} is or holds {root}, which keeps vaultd's registry and policies or an agent host's hooks; "
                    "no agent tool may change it (your user changes it with vaultctl)"
                )
                break
        else:
            for root in local:
                if _under(path, root) or path == os.path.dirname(root):
                    reasons.append(f"{path} is the project's host settings ({root}), which hold its hooks; no agent tool may change it")
                    break
    for folder in (os.path.realpath(p) for p in inside):
        for root in full:
            if _under(folder, root):
                reasons.append(f"the command runs in {folder}, inside {root}, which keeps vaultd's registry or an agent host's hooks")
                break
    return reasons


def _tool(hook: Hook, env: dict[str, str]) -> int:
    call = hook.call
    if call is None or (not call.paths and not call.inside and not call.vaultctl and not call.refusals):
        return EXIT_ALLOW
    local = _local_reasons(call.paths, call.inside, env, call.cwd)
    probes = [os.path.join(folder, INSIDE_PROBE) for folder in call.inside]
    result = _check(call.paths + probes)
    if result is None:
        print(
            "refused by vaultd's guard: no daemon answered and the registry could not be read, so the guard cannot tell "
            "whether this tool call reaches a vault; start vaultd (vaultctl daemon start) and try again",
            file=sys.stderr,
        )
        return EXIT_BLOCK
    reasons = local + [v.reason for v in result.verdicts if v.refused]
    if result.guarded:
        reasons += call.refusals
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


def _host(env: dict[str, str]) -> str:
    """The host whose hook this is, as a session record names its client."""
    return "codex" if env.get("CODEX_THREAD_ID") or env.get("CODEX_SANDBOX") else "claude-code"


def _session_event(hook: Hook, env: dict[str, str], event: str) -> SessionHookResult | None:
    """Tell the daemon of a host session's start, prompt, stop or end; None when it cannot be told."""
    if hook.session is None:
        return None
    from protocol.methods.sessions import MAX_HOOK_PROMPT, SESSION_HOOK, HookEvent, SessionHookParams
    from vaultctl.client import CallError, DaemonUnavailable, connect

    prompt = hook.prompt[:MAX_HOOK_PROMPT] if hook.prompt is not None else None
    params = SessionHookParams(event=HookEvent(event), id=hook.session, host=_host(env), prompt=prompt)
    try:
        with connect(client_name="vaultctl-guard", timeout=HOOK_TIMEOUT_S) as client:
            return client.call(SESSION_HOOK, params)
    except (DaemonUnavailable, CallError, OSError):
        return None  # a record is a convenience: a hook never blocks the host for it


def _session_start(hook: Hook, env: dict[str, str]) -> int:
    from protocol.methods.common import Empty
    from protocol.methods.guard import GUARD_CONTEXT
    from vaultctl.client import CallError, DaemonUnavailable, connect

    _session_event(hook, env, "start")
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
    hot = "\n".join(f"[{v.id}] {v.hot}" for v in vaults if v.hot)
    if hot:
        text += "\n" + hot  # each vault's hot summary is bounded by its own setting, in the daemon
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}))
    return EXIT_ALLOW


def _stop(hook: Hook, env: dict[str, str]) -> int:
    """At the end of the agent's turn, remind it once of what it leaves waiting: its pending
    proposals and running work. The host continues the turn with the reason as its next
    instruction; a stop the host makes while already continuing for this hook is let through."""
    if hook.stop_active:
        return EXIT_ALLOW
    result = _session_event(hook, env, "stop")
    if result is None or not result.unfinished:
        return EXIT_ALLOW
    items = "; ".join(f"{u.kind} {u.id} in vault '{u.vault}': {u.what}" for u in result.unfinished)
    reason = (
        f"vaultd: before you stop, this session leaves unfinished: {items}. Tell your user which proposals wait for them "
        "(they apply them with 'vaultctl proposals'), and close your work with work (action finish), or work_cancel to roll it back."
    )
    print(json.dumps({"decision": "block", "reason": reason[:MAX_CONTEXT_CHARS]}))
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
    env = dict(os.environ)
    hook = read_hook(payload, env)
    if hook.event is Event.TOOL:
        return _tool(hook, env)
    if hook.event is Event.SESSION_START:
        return _session_start(hook, env)
    if hook.event is Event.STOP:
        return _stop(hook, env)
    if hook.event is Event.PROMPT:
        _session_event(hook, env, "prompt")
    elif hook.event is Event.SESSION_END:
        _session_event(hook, env, "end")
    return EXIT_ALLOW
