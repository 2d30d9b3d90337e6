"""The perimeter: who may reach the daemon, where writes may land, what never leaves a secret.

tests/integration/test_bad_frames.py already proves a raw client of another uid is refused; here
the real clients (the MCP shim, the CLI) run as another uid, every write method is tried with
every route out of the vault, and secrets are pushed through every write surface.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.harness import REPO, Daemon, Home, RawClient, snapshot

if TYPE_CHECKING:
    from collections.abc import Iterator

NOBODY = 65534


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def vault(daemon: Daemon, raw: RawClient, home: Home) -> Path:
    v = home.root / "vault"
    (v / "notes").mkdir(parents=True)
    (v / "notes" / "Inside.md").write_text("# Inside\n\nan inside note\n")
    raw.call("vault.add", {"id": "p", "path": str(v)})
    return v


# -- modes ----------------------------------------------------------------------------------------


def test_socket_folder_home_and_index_cache_modes(vault: Path, daemon: Daemon, raw: RawClient) -> None:
    home = daemon.home
    assert _mode(home.socket) == 0o600 and stat.S_ISSOCK(os.lstat(home.socket).st_mode)
    assert _mode(home.socket.parent) == 0o700
    assert _mode(home.home) == 0o700
    raw.call("note.search", {"query": "inside", "fresh": True})
    caches = [p for p in (home.home / "indexes").rglob("*") if p.is_file()]
    assert caches, "no index cache was written"
    for p in caches:
        assert _mode(p) == 0o600, (p, oct(_mode(p)))
    for p in (home.home / "indexes").rglob("*"):
        if p.is_dir():
            assert _mode(p) & 0o077 == 0, (p, oct(_mode(p)))
    for p in (home.home / "logs").iterdir():
        assert _mode(p) & 0o077 == 0, (p, oct(_mode(p)))
    vault_resolved = vault.resolve()
    assert all(vault_resolved not in p.resolve().parents for p in caches)
    inside = [p.relative_to(vault).as_posix() for p in vault.rglob("*") if p.is_file()]
    assert not [p for p in inside if p.endswith((".sqlite", ".db", ".sqlite-wal", ".idx"))], inside
    assert all(p.startswith(".vaultd/") or p.endswith(".md") for p in inside), inside


# -- another uid ----------------------------------------------------------------------------------

_AS_NOBODY = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, {repo!r})
    # the interpreter lives where nobody cannot read: load what the command needs first, by running
    # it once against no socket, then drop to the other uid and run it for real
    import vaultctl.main
    real_socket = os.environ["VAULTD_SOCKET"]
    os.environ["VAULTD_SOCKET"] = "/nonexistent/vaultd.sock"
    sys.argv = ["vaultctl", *{args!r}]
    if {args!r}[0] != "mcp":
        try:
            vaultctl.main.main()
        except SystemExit:
            pass
    os.environ["VAULTD_SOCKET"] = real_socket
    import vaultctl.main, vaultctl.mcp.server, vaultctl.mcp.stdio, vaultctl.mcp.tools, vaultctl.mcp.calls
    import vaultctl.mcp.daemon_connection, vaultctl.mcp.wire, vaultctl.mcp.schemas, vaultctl.client, vaultctl.commands.admin
    import vaultctl.commands.reads, vaultctl.commands.writes, encodings.idna, json, socket, fractions, decimal
    import typer, click, rich.console  # noqa: F401 - the interpreter lives where nobody cannot read
    os.setgroups([]); os.setgid({uid}); os.setuid({uid})
    vaultctl.main.main()
""")


def _as_nobody(home: Home, args: list[str], stdin: str) -> subprocess.CompletedProcess[str]:
    script = _AS_NOBODY.format(repo=str(REPO), args=args, uid=NOBODY)
    env = {**home.env, "VAULTD_NO_AUTOSTART": "1"}
    return subprocess.run([sys.executable, "-c", script], input=stdin, capture_output=True, text=True, env=env, cwd="/", timeout=60)


def _shim_session() -> str:
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}},
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "vault_list", "arguments": {}}},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "note_create", "arguments": {"vault": "p", "path": "from-nobody", "body": "x\n"}},
        },
    ]
    return "".join(json.dumps(m) + "\n" for m in lines)


@pytest.fixture
def opened_up(daemon: Daemon) -> Iterator[None]:
    """Loosen the folder and socket modes so only the peer-uid check stands in the way."""
    folders = (daemon.home.root, daemon.home.socket.parent)
    for folder in folders:
        os.chmod(folder, 0o711)
    os.chmod(daemon.home.socket, 0o666)
    yield
    for folder in folders:
        os.chmod(folder, 0o700)
    os.chmod(daemon.home.socket, 0o600)


def _check_shim_refused(proc: subprocess.CompletedProcess[str], vault: Path) -> None:
    replies = {m["id"]: m for m in map(json.loads, proc.stdout.splitlines())}
    assert replies[1]["result"]["serverInfo"], proc.stderr  # the shim itself starts and answers
    for rid in (2, 3):
        result = replies[rid]["result"]
        assert result["isError"] is True, result
        assert "not available" in result["content"][0]["text"], result
    assert not (vault / "from-nobody.md").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="dropping to another uid needs root")
def test_the_mcp_shim_run_by_another_user_cannot_reach_the_daemon(vault: Path, home: Home) -> None:
    _check_shim_refused(_as_nobody(home, ["mcp"], _shim_session()), vault)


@pytest.mark.skipif(os.geteuid() != 0, reason="dropping to another uid needs root")
def test_past_open_modes_the_peer_uid_check_still_refuses_the_shim_and_cli(
    vault: Path, home: Home, daemon: Daemon, opened_up: None
) -> None:
    _check_shim_refused(_as_nobody(home, ["mcp"], _shim_session()), vault)
    cli = _as_nobody(home, ["new", "from-nobody", "--vault", "p"], "")
    assert cli.returncode == 69, (cli.returncode, cli.stdout, cli.stderr)
    assert not (vault / "from-nobody.md").exists()
    log = (daemon.home.home / "logs" / "vaultd.log").read_text()
    assert log.count('"peer_uid": 65534') >= 2


# -- path escapes ---------------------------------------------------------------------------------


@pytest.fixture
def escapes(vault: Path, home: Home) -> dict[str, Path]:
    """Routes out of the vault: a folder link, a file link and a hard link, each to an outside file."""
    outside = home.root / "outside"
    outside.mkdir()
    victim = outside / "victim.md"
    victim.write_text("# Victim\n\nvictim text: do not change\n")
    (outside / "sub").mkdir()
    (outside / "sub" / "victim.md").write_text("# Victim\n\nvictim text: do not change\n")
    os.symlink(outside, vault / "linked-folder")
    os.symlink(victim, vault / "notes" / "linked-file.md")
    hard = home.root / "outside-hard.md"
    hard.write_text("# Hard\n\nvictim text: do not change\n")
    os.link(hard, vault / "notes" / "hard.md")
    return {"outside": outside, "hard": hard}


def _outside_state(escapes: dict[str, Path]) -> dict[str, bytes]:
    state = {f"o/{k}": v for k, v in snapshot(escapes["outside"]).items()}
    state["hard"] = escapes["hard"].read_bytes()
    return state


_CREATE_PATHS = [
    "../outside/new",
    "../../escaped",
    "/tmp/vaultd-abs-escape",
    "linked-folder/new",
    "linked-folder/sub/new",
    "notes/linked-file.md",
    "notes/../../outside/x",
    "notes/./../../x",
    "linked-folder/victim.md",
    "%2e%2e/x",
    "notes\\..\\..\\x",
]
_TARGETS = [
    "../outside/victim.md",
    "linked-folder/victim.md",
    "linked-folder/sub/victim.md",
    "notes/linked-file.md",
    "linked-file",
    str(Path("/tmp/vaultd-abs-escape")),
    "notes/hard.md",
]


def _write_attempts() -> list[tuple[str, dict[str, Any]]]:
    attempts: list[tuple[str, dict[str, Any]]] = []
    for p in _CREATE_PATHS:
        attempts.append(("note.create", {"path": p, "body": "escaped\n"}))
        attempts.append(("note.move", {"target": "Inside", "to": p}))
    for t in _TARGETS:
        attempts += [
            ("note.patch", {"target": t, "old": "victim text", "new": "CHANGED"}),
            ("note.append", {"target": t, "section": "S", "markdown": "CHANGED"}),
            ("note.set_frontmatter", {"target": t, "set": {"k": "CHANGED"}}),
            ("note.link", {"source": t, "target": "Inside"}),
            ("note.link", {"source": "Inside", "target": t}),
            ("note.supersede", {"old": t, "new": "Inside"}),
            ("note.delete", {"target": t, "leave_broken_links": True}),
            ("note.merge", {"keep": t, "absorb": "Inside"}),
            ("note.move", {"target": t, "to": "notes/moved-in"}),
        ]
    return attempts


def _confirm_if_preview(raw: RawClient, method: str, params: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
    result = reply.get("result")
    if result and result.get("preview") and result.get("fingerprint"):
        return raw.request(method, {**params, "confirm": True, "fingerprint": result["fingerprint"]})
    return reply


def test_every_write_route_out_of_the_vault_is_refused(vault: Path, raw: RawClient, escapes: dict[str, Path]) -> None:
    before = _outside_state(escapes)
    applied: list[str] = []
    tried = 0
    for method, params in _write_attempts():
        tried += 1
        params = {"vault": "p", **params}
        reply = _confirm_if_preview(raw, method, params, raw.request(method, params))
        if "error" in reply:
            assert reply["error"]["data"]["code"] in ("VALIDATION", "NOT_FOUND", "INVALID_PARAMS", "AMBIGUOUS", "CONFLICT"), (
                method,
                params,
                reply,
            )
        elif reply["result"].get("outcome") == "applied":
            applied.append(f"{method} {params}: {[c['path'] for c in reply['result']['changes']]}")
        assert _outside_state(escapes) == before, (method, params)
        assert not Path("/tmp/vaultd-abs-escape.md").exists()
    # What may apply stays inside: the hard link (written or trashed by replacing the vault's entry,
    # which leaves the outside file as it was), a leading-slash path (vaultd takes it as vault-rooted)
    # and "%2e%2e" (a literal folder name). Nothing may land through a link or above the vault.
    for line in applied:
        for changed in line.split(": ", 1)[1].strip("[]").replace("'", "").split(", "):
            assert not changed.startswith(("..", "/", "linked-folder")) and "linked-file" not in changed, line
            real = os.path.realpath(vault / changed)
            assert real.startswith(str(vault.resolve()) + os.sep), line
    assert tried >= 80
    assert _outside_state(escapes) == before
    for t in ["../outside/victim.md", "linked-folder/victim.md", "notes/linked-file.md", "/etc/passwd"]:
        reply = raw.request("note.read", {"vault": "p", "target": t})
        assert "error" in reply and "victim text" not in json.dumps(reply), (t, reply)


def test_a_file_created_outside_through_a_folder_link_is_not_indexed(raw: RawClient, home: Home) -> None:
    vault, outside = home.root / "linked", home.root / "elsewhere"
    vault.mkdir()
    outside.mkdir()
    (vault / "a.md").write_text("# A\n\nalpha\n")
    os.symlink(outside, vault / "ext")  # present when the vault is added: the watcher descends into it
    raw.call("vault.add", {"id": "linked", "path": str(vault)})
    (outside / "later.md").write_text("# Later\n\noutsidelaterword\n")
    hits = raw.call("note.search", {"vault": "linked", "query": "outsidelaterword", "fresh": True})["hits"]
    reply = raw.request("note.read", {"vault": "linked", "target": "ext/later.md"})
    assert hits == [] and "error" in reply, (hits, reply)


# -- secrets --------------------------------------------------------------------------------------

GITHUB = "ghp_" + "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LmNbVc"
AWS_ID = "AKIA" + "Q7RT2XLM9VBN4HJK"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKE9"  # 40 characters, as AWS issues them
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq0n0tre4l\n-----END RSA PRIVATE KEY-----"
SECRETS = {"github": GITHUB, "aws-id": AWS_ID, "aws-secret": f"aws_secret_access_key = {AWS_SECRET}", "pem": PEM}
NEEDLES = [GITHUB, AWS_ID, AWS_SECRET, "MIIEpAIBAAKCAQEA7bq0n0tre4l", GITHUB[4:20], AWS_ID[4:]]


COMPACT = {"github": GITHUB, "aws-id": AWS_ID, "aws-secret": f"aws_secret_access_key={AWS_SECRET}"}


def _secret_attempts(name: str, secret: str) -> list[tuple[str, dict[str, Any]]]:
    one_line = secret.replace("\n", " ")
    compact = COMPACT.get(name, "")
    escaped = "".join(f"\\x{ord(ch):02x}" for ch in one_line[:6]) + one_line[6:]  # YAML double-quoted escapes
    return [
        ("note.create", {"path": "s/body", "body": f"# S\n\n{secret}\n"}),
        ("note.create", {"path": "s/title", "title": one_line[:500]}),
        ("note.create", {"path": "s/fm", "frontmatter": {"note": secret}}),
        ("note.create", {"path": "s/fmkey", "frontmatter": {one_line[:120]: "x"}}),
        ("note.create", {"path": "s/yaml", "body": f'---\nnote: "{escaped}"\n---\n# S\n'}),
        ("note.create", {"path": "s/yaml2", "body": f'# S\n\n---\nnote: "{escaped}"\n---\n'}),
        ("note.patch", {"target": "Inside", "old": "an inside note", "new": secret}),
        ("note.append", {"target": "Inside", "section": "Keys", "markdown": secret}),
        ("note.set_frontmatter", {"target": "Inside", "set": {"note": secret}}),
        ("note.set_frontmatter", {"target": "Inside", "set": {"note": one_line + "\u0007\t\"'"}}),
        ("note.set_frontmatter", {"target": "Inside", "set": {"nested": {"deep": [one_line]}}}),
        ("log.append", {"event": {"type": "TASK", "source": "s", "note": one_line[:200]}}),
        *([("log.append", {"event": {"type": "TASK", "source": compact, "note": "n"}})] if compact else []),
        # the ``log`` override of a write is tried in test_a_secret_in_a_writes_log_override_is_refused
    ]


def test_secrets_never_reach_notes_logs_or_errors(vault: Path, raw: RawClient, daemon: Daemon) -> None:
    replies: list[str] = []
    outcomes: dict[str, int] = {}
    for name, secret in SECRETS.items():
        for method, params in _secret_attempts(name, secret):
            reply = raw.request(method, {"vault": "p", **params})
            replies.append(json.dumps(reply))
            key = "applied" if "result" in reply else reply["error"]["data"]["code"]
            outcomes[key] = outcomes.get(key, 0) + 1
            if str(params.get("body", "")).startswith("---\n"):  # YAML escapes decode to the secret
                assert key == "VALIDATION" and "V06" in json.dumps(reply), (name, reply)
        raw.request("note.search", {"vault": "p", "query": secret.replace("\n", " ")[:200]})
        raw.request("note.read", {"vault": "p", "target": secret.replace("\n", " ")[:200]})
    surfaces = {
        "replies": "\n".join(replies),
        "daemon log": (daemon.home.home / "logs" / "vaultd.log").read_text(errors="replace"),
        "daemon stdout": daemon.output(),
        **{f"vault:{k}": v.decode(errors="replace") for k, v in snapshot(vault).items()},
        **{f"journal:{p.name}": p.read_text(errors="replace") for p in (vault / ".vaultd").rglob("*") if p.is_file()},
    }
    leaks = sorted({(surface, needle[:8]) for surface, text in surfaces.items() for needle in NEEDLES if needle in text})
    assert leaks == [], leaks
    assert outcomes.get("VALIDATION", 0) >= 40, outcomes
    assert "INTERNAL" not in outcomes, outcomes


def test_a_secret_in_a_writes_log_override_is_refused(vault: Path, raw: RawClient) -> None:
    event = {"type": "TASK", "source": "s", "note": f"token {GITHUB}"}
    leaked = []
    for method, params in [
        ("note.create", {"path": "s/quiet", "body": "fine\n"}),
        ("note.append", {"target": "Inside", "section": "Fine", "markdown": "fine"}),
    ]:
        reply = raw.request(method, {"vault": "p", **params, "log": event})
        log = (vault / "log.md").read_text() if (vault / "log.md").exists() else ""
        if GITHUB in json.dumps(reply) or GITHUB in log:
            leaked.append(method)
    assert leaked == [], f"the token reached the receipt and log.md through {leaked}"


def test_a_secret_refusal_names_the_rule_not_the_value(vault: Path, raw: RawClient) -> None:
    reply = raw.request("note.append", {"vault": "p", "target": "Inside", "section": "K", "markdown": GITHUB})
    data = reply["error"]["data"]
    assert data["code"] == "VALIDATION" and any(i["code"] == "V06" for i in data["issues"])
    assert GITHUB not in json.dumps(reply) and GITHUB[4:20] not in json.dumps(reply)
    assert hashlib.sha256(GITHUB.encode()).hexdigest() not in json.dumps(reply)
