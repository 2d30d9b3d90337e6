"""The shim against independently written MCP clients: setup writes the entry, the client runs
exactly that entry, reads, writes, meets a refusal and a preview+confirm; undo leaves the host
file as it was. Run with ``make test-interop`` (it installs the pinned clients from npm)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.harness import REPO, Daemon, Home, vaultctl
from vaultctl.mcp.resources import TEMPLATE
from vaultctl.mcp.tools import ToolCatalogue
from vaultctl.mcp.toolsets import resolve
from vaultctl.mcp.versions import LATEST_HANDSHAKE

pytestmark = pytest.mark.interop

INTEROP = REPO / "interop"
NODE_MODULES = INTEROP / "node_modules"
BIN = NODE_MODULES / ".bin"


def _need_node_clients() -> None:
    if shutil.which("node") is None or not (NODE_MODULES / "@modelcontextprotocol" / "sdk").is_dir():
        message = "the Node MCP clients are not installed: run `make test-interop`"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture
def world(home: Home) -> Any:
    root = home.root / "vault"
    for rel in ("a/Twin.md", "b/Twin.md", "Home.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# {Path(rel).stem}\n")
    # A vault whose user lets agents rename notes (the default only proposes a move), so each
    # client's preview+confirm applies and the two-step round trip is seen end to end.
    home.home.mkdir(mode=0o700, parents=True, exist_ok=True)
    config = {"version": 1, "vaults": [{"id": "main", "path": str(root.resolve()), "agents": {"move": "apply"}}]}
    (home.home / "config.json").write_text(json.dumps(config))
    daemon = Daemon(home)
    try:
        yield from _with_host_entry(home, root)
    finally:
        daemon.stop()


def _with_host_entry(home: Home, root: Path) -> Any:
    assert [v["entry"]["id"] for v in vaultctl(home, "vault", "list", "--json").json()["vaults"]] == ["main"]
    user = home.root / "user"
    (user / ".cursor").mkdir(parents=True)
    host_file = user / ".cursor" / "mcp.json"
    host_file.write_text('{\n  "mcpServers": {\n    "other": {"command": "x"}\n  }\n}\n')
    env = {**home.env, "HOME": str(user), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    before = host_file.read_bytes()
    applied = subprocess.run(
        [sys.executable, "-m", "vaultctl.main", "setup", "cursor", "--apply", "--tools", "all"],
        env=env,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert applied.returncode == 0, applied.stderr
    entry = json.loads(host_file.read_text())["mcpServers"]["vaultd"]
    yield entry, {"HOME": str(user), "PATH": "/usr/bin:/bin", **entry.get("env", {})}, root
    undone = subprocess.run(
        [sys.executable, "-m", "vaultctl.main", "setup", "cursor", "--undo"], env=env, capture_output=True, text=True, cwd=REPO, timeout=60
    )
    assert undone.returncode == 0, undone.stderr
    assert host_file.read_bytes() == before


def _check_report(report: dict[str, Any], root: Path) -> None:
    steps = report["steps"]
    failed = {k: v["error"] for k, v in steps.items() if not v["ok"]}
    assert not failed, failed
    assert steps["list_tools"]["value"]["count"] >= 20
    assert steps["read"]["value"] == {"is_error": False, "vaults": ["main"]}
    assert steps["write"]["value"] == {"is_error": False, "applied": True}
    refusal = steps["refusal"]["value"]
    assert refusal["is_error"] and refusal["body"]["code"] == "NOT_FOUND"
    assert "surely no such note" in refusal["body"]["message"]
    ambiguous = steps["ambiguous"]["value"]
    assert ambiguous["is_error"] and ambiguous["body"]["code"] == "AMBIGUOUS"
    assert sorted(ambiguous["body"]["candidates"]) == ["a/Twin.md", "b/Twin.md"]
    assert steps["preview_confirm"]["value"] == {"preview": True, "applied": True}
    assert (root / "interop" / "moved-ts.md").read_text().endswith("# From TS\n")


def _check_toolsets_and_resources(report: dict[str, Any]) -> None:
    assert report["protocol"] == LATEST_HANDSHAKE, "the newest revision this SDK offers (1.32: 2025-11-25) is negotiated"
    steps = report["steps"]
    assert steps["read_many"]["value"] == {"is_error": False, "first": "Home.md", "second": "AMBIGUOUS"}
    resources = steps["resources"]["value"]
    assert {"vault://main/Home.md", "vault://main/a/Twin.md", "vault://main/b/Twin.md"} <= set(resources["uris"])
    assert resources["templates"] == [TEMPLATE]
    assert resources["text"] == "# Home\n" and resources["mime"] == "text/markdown"
    assert steps["subscribe"]["value"] == {"updated": "vault://main/Home.md", "reread": True}
    assert steps["toolset"]["value"]["names"] == ToolCatalogue(resolve("core")).names


def _with_toolset(args: list[str], toolset: str) -> list[str]:
    """The entry's arguments with another ``--tools``."""
    at = args.index("--tools")
    return [*args[: at + 1], toolset, *args[at + 2 :]]


def test_the_typescript_sdk_client(world: Any) -> None:
    """The official TypeScript SDK validates every structuredContent against its tool's
    outputSchema and throws on a mismatch: refusals must reach it intact."""
    _need_node_clients()
    entry, env, root = world
    spec = json.dumps(
        {
            "command": entry["command"],
            "args": entry["args"],
            "env": env,
            "cwd": str(root),
            "toolset_args": _with_toolset(entry["args"], "core"),
            "edit": "Home.md",
        }
    )
    proc = subprocess.run(["node", str(INTEROP / "ts_client.mjs"), spec], capture_output=True, text=True, cwd=INTEROP, timeout=180)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    _check_report(report, root)
    _check_toolsets_and_resources(report)


# -- the hosts' own health checks: setup writes the entry, the host runs it ----------------------


def _pinned() -> dict[str, str]:
    return dict(json.loads((INTEROP / "package.json").read_text())["dependencies"])


def _host_env(home: Home, user: Path) -> dict[str, str]:
    """What a user's shell gives a host: node 22 and the hosts on PATH, vaultctl beside Python."""
    path = f"{BIN}:{Path(sys.executable).parent}:/usr/bin:/bin"
    return {**home.env, "HOME": str(user), "PATH": path, "NO_COLOR": "1", "CI": "true"}


def _run(argv: list[str], env: dict[str, str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, capture_output=True, text=True, cwd=cwd, timeout=timeout, stdin=subprocess.DEVNULL)


def _setup(env: dict[str, str], host: str, *flags: str) -> None:
    done = _run([sys.executable, "-m", "vaultctl.main", "setup", host, *flags], env, REPO, 60)
    assert done.returncode == 0, done.stderr


@pytest.fixture
def host_home(daemon: Daemon, home: Home) -> Any:
    _need_node_clients()
    root = home.root / "vault"
    root.mkdir()
    (root / "Home.md").write_text("# Home\n")
    assert vaultctl(home, "vault", "add", "main", str(root)).code == 0
    user = home.root / "user"
    work = home.root / "work"
    work.mkdir()
    return _host_env(home, user), user, work


@pytest.mark.parametrize(
    ("host", "files", "argv", "connected"),
    [
        ("claude", [".claude.json"], ["claude", "mcp", "list"], "vaultd: "),
        ("gemini", [".gemini/settings.json"], ["gemini", "mcp", "list"], "vaultd: "),
        ("codex", [".codex/config.toml"], ["codex", "mcp", "list"], "vaultd "),
    ],
)
def test_a_host_lists_the_entry_setup_wrote_and_undo_restores_its_file(
    host_home: Any, host: str, files: list[str], argv: list[str], connected: str
) -> None:
    env, user, work = host_home
    target = user / files[0]
    target.parent.mkdir(parents=True, exist_ok=True)
    existing = {
        "claude": '{\n  "theme": "dark"\n}\n',
        "gemini": '{\n  "security": {"folderTrust": {"enabled": false}}\n}\n',
        "codex": 'model = "o4"\n',
    }[host]
    target.write_text(existing)
    before = target.read_bytes()
    _setup(env, host, "--apply")
    applied = target.read_bytes()
    listed = _run([str(BIN / argv[0]), *argv[1:]], env, work)
    out = listed.stdout + listed.stderr
    line = next((ln for ln in out.splitlines() if ln.lstrip("✓✔○ ").startswith(connected)), "")
    assert line, out
    if host == "codex":  # codex lists without starting servers: the entry as written, enabled
        assert "enabled" in line and str(Path(sys.executable).parent / "vaultctl") in line, line
    else:  # claude and gemini start the server and do the MCP handshake
        assert "Connected" in line, out
    touched = target.read_bytes()
    _setup(env, host, "--undo")
    if touched == applied:
        assert target.read_bytes() == before
    else:  # the host rewrote its own file while running (Claude Code keeps state there): only our entry goes
        now, then = json.loads(target.read_text()), json.loads(touched)
        then.pop("hooks", None)  # the guard's, in Gemini CLI's one settings file (the file had none)
        del then["mcpServers"]["vaultd"]
        if not then["mcpServers"]:
            del then["mcpServers"]
        assert now == then


def test_the_inspector_cli(home: Home, world: Any) -> None:
    """The MCP Inspector's CLI mode: list, a read, a write, a refusal with candidates intact, and
    notes as resources."""
    _need_node_clients()
    entry, _env, root = world
    env, work = _host_env(home, home.root / "user"), root
    command = [str(BIN / "mcp-inspector"), "--cli", entry["command"], *entry["args"]]
    for key, value in entry.get("env", {}).items():
        command += ["-e", f"{key}={value}"]

    def call(*args: str) -> dict[str, Any]:
        done = _run([*command, *args], env, work)
        text = done.stdout
        start = text.find("{")
        body, _ = json.JSONDecoder().raw_decode(text[start:])
        return dict(body)

    assert len(call("--method", "tools/list")["tools"]) >= 20
    read = call("--method", "tools/call", "--tool-name", "status", "--tool-arg", "view=vaults")
    assert not read.get("isError") and [v["entry"]["id"] for v in read["structuredContent"]["vaults"]] == ["main"]
    wrote = call("--method", "tools/call", "--tool-name", "note_create", "--tool-arg", "path=interop/inspector")
    assert wrote["structuredContent"]["outcome"] == "applied"
    refused = call("--method", "tools/call", "--tool-name", "note_read", "--tool-arg", "target=Twin")
    body = json.loads(refused["content"][0]["text"])
    assert refused["isError"] is True and body["code"] == "AMBIGUOUS"
    assert sorted(body["candidates"]) == ["a/Twin.md", "b/Twin.md"]
    assert (root / "interop" / "inspector.md").is_file()
    listed = call("--method", "resources/list")
    assert "vault://main/Home.md" in {r["uri"] for r in listed["resources"]}
    read = call("--method", "resources/read", "--uri", "vault://main/Home.md")
    assert [c["text"] for c in read["contents"]] == ["# Home\n"]


def test_the_matrix_in_the_docs_names_the_pinned_clients() -> None:
    """docs/mcp.md and the matrix a run wrote name every client this suite drives, at the version
    package.json pins: a version bump without a new run shows here."""
    described = (REPO / "docs" / "mcp.md").read_text()
    matrix = (REPO / "docs" / "interop-matrix.md").read_text()
    for package, version in _pinned().items():
        if package == "node":
            continue
        assert f"`{package}` {version}" in described, (package, version)
        assert f"| `{package}` {version} | pass |" in matrix, (package, version)


async def test_the_fastmcp_client(home: Home, world: Any) -> None:
    """fastmcp's client (PyPI), which also checks results against each tool's outputSchema."""
    try:
        from fastmcp import Client
        from fastmcp.client.transports import StdioTransport
    except ImportError:
        message = "fastmcp is not installed: run `make test-interop`"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    entry, env, root = world
    transport = StdioTransport(command=entry["command"], args=entry["args"], env=env, cwd=str(root))
    async with Client(transport) as client:
        tools = await client.list_tools()
        assert len(tools) >= 20
        read = await client.call_tool("status", {"view": "vaults"})
        assert [v["entry"]["id"] for v in read.structured_content["vaults"]] == ["main"]
        wrote = await client.call_tool("note_create", {"path": "interop/fastmcp", "body": "# From fastmcp\n"})
        assert wrote.structured_content["outcome"] == "applied"
        refused = await client.call_tool("note_read", {"target": "Twin"}, raise_on_error=False)
        body = json.loads(refused.content[0].text)
        assert refused.is_error and body["code"] == "AMBIGUOUS"
        assert sorted(body["candidates"]) == ["a/Twin.md", "b/Twin.md"]
        args = {"target": "interop/fastmcp", "to": "interop/moved-fastmcp"}
        preview = await client.call_tool("note_move", args)
        assert preview.structured_content["outcome"] == "preview"
        done = await client.call_tool("note_move", {**args, "confirm": True, "fingerprint": preview.structured_content["fingerprint"]})
        assert done.structured_content["outcome"] == "applied"
        many = (await client.call_tool("note_read_many", {"targets": ["Home", "Twin"]})).structured_content["notes"]
        assert many[0]["note"]["path"] == "Home.md" and many[1]["error"]["code"] == "AMBIGUOUS"
        assert "vault://main/Home.md" in {str(r.uri) for r in await client.list_resources()}
        [home_note] = await client.read_resource("vault://main/Home.md")
        assert home_note.text == "# Home\n"
    assert (root / "interop" / "moved-fastmcp.md").read_text().endswith("# From fastmcp\n")
