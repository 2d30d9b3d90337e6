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

from tests.support.daemon import REPO, Daemon, Home, vaultctl

pytestmark = pytest.mark.interop

INTEROP = REPO / "interop"
NODE_MODULES = INTEROP / "node_modules"


def _need_node_clients() -> None:
    if shutil.which("node") is None or not (NODE_MODULES / "@modelcontextprotocol" / "sdk").is_dir():
        message = "the Node MCP clients are not installed: run `make test-interop`"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture
def world(daemon: Daemon, home: Home) -> Any:
    root = home.root / "vault"
    for rel in ("a/Twin.md", "b/Twin.md", "Home.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# {Path(rel).stem}\n")
    assert vaultctl(home, "vault", "add", "main", str(root)).code == 0
    user = home.root / "user"
    (user / ".cursor").mkdir(parents=True)
    host_file = user / ".cursor" / "mcp.json"
    host_file.write_text('{\n  "mcpServers": {\n    "other": {"command": "x"}\n  }\n}\n')
    env = {**home.env, "HOME": str(user), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    before = host_file.read_bytes()
    applied = subprocess.run([sys.executable, "-m", "vaultctl.main", "setup", "cursor", "--apply"], env=env,
                             capture_output=True, text=True, cwd=REPO, timeout=60)
    assert applied.returncode == 0, applied.stderr
    entry = json.loads(host_file.read_text())["mcpServers"]["vaultd"]
    yield entry, {"HOME": str(user), "PATH": "/usr/bin:/bin", **entry.get("env", {})}, root
    undone = subprocess.run([sys.executable, "-m", "vaultctl.main", "setup", "cursor", "--undo"], env=env,
                            capture_output=True, text=True, cwd=REPO, timeout=60)
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


def test_the_typescript_sdk_client(world: Any) -> None:
    """The official TypeScript SDK validates every structuredContent against its tool's
    outputSchema and throws on a mismatch: refusals must reach it intact."""
    _need_node_clients()
    entry, env, root = world
    spec = json.dumps({"command": entry["command"], "args": entry["args"], "env": env, "cwd": str(root)})
    proc = subprocess.run(["node", str(INTEROP / "ts_client.mjs"), spec], capture_output=True, text=True,
                          cwd=INTEROP, timeout=120)
    assert proc.returncode == 0, proc.stderr
    _check_report(json.loads(proc.stdout), root)
