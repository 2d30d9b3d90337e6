"""vaultctl setup through the real entry point: dry run, apply, apply again, undo, for every host."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.harness import REPO

HOST_FILES = {
    "claude": ".claude.json",
    "codex": ".codex/config.toml",
    "cursor": ".cursor/mcp.json",
    "gemini": ".gemini/settings.json",
    "windsurf": ".codeium/windsurf/mcp_config.json",
}
EXISTING = {
    "claude": '{\n    "theme": "dark",\n    "mcpServers": {\n        "other": {"command": "x"}\n    }\n}\n',
    "codex": '# my codex config\nmodel = "o4"\n\n[mcp_servers.other]\ncommand = "x"\n',
    "cursor": '{"mcpServers":{}}',
    "gemini": '{\r\n  "mcpServers": {\r\n    "a": {"command": "b"}\r\n  }\r\n}\r\n',
    "windsurf": '{\n\t"mcpServers": {}\n}\n',
}


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "VAULTD_HOME": str(home / "vd"), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "vaultctl.main", "setup", *args], env=env, capture_output=True,
                          text=True, cwd=REPO, timeout=60)


@pytest.mark.parametrize("host", sorted(HOST_FILES))
@pytest.mark.parametrize("existing", [False, True])
def test_apply_is_idempotent_and_undo_is_byte_identical(tmp_path: Path, host: str, existing: bool) -> None:
    target = tmp_path / HOST_FILES[host]
    target.parent.mkdir(parents=True, exist_ok=True)
    if existing:
        target.write_bytes(EXISTING[host].encode())
    before = target.read_bytes() if existing else None
    dry = _run(tmp_path, host)
    assert dry.returncode == 0, dry.stderr
    assert (target.read_bytes() if existing else None) == before and (existing or not target.exists())
    applied = _run(tmp_path, host, "--apply", "--json")
    assert applied.returncode == 0, applied.stderr
    assert json.loads(applied.stdout)["applied"] is True
    text = target.read_text()
    assert "vaultd" in text and "mcp" in text
    mtime = target.stat().st_mtime_ns
    again = _run(tmp_path, host, "--apply", "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["action"] == "none"
    assert target.stat().st_mtime_ns == mtime
    undone = _run(tmp_path, host, "--undo")
    assert undone.returncode == 0, undone.stderr
    if existing:
        assert target.read_bytes() == before
    else:
        assert not target.exists()


def test_malformed_and_linked_files_are_refused_untouched(tmp_path: Path) -> None:
    cfg = tmp_path / ".claude.json"
    cfg.write_text('{"mcpServers": {"x": {"command": "y"}}, // comment\n}')
    before = cfg.read_bytes()
    out = _run(tmp_path, "claude", "--apply")
    assert out.returncode == 1 and cfg.read_bytes() == before
    cfg.unlink()
    real = tmp_path / "real.json"
    real.write_text("{}")
    cfg.symlink_to(real)
    out = _run(tmp_path, "claude", "--apply")
    assert out.returncode == 1 and real.read_text() == "{}"


def test_unknown_host_is_a_usage_error(tmp_path: Path) -> None:
    assert _run(tmp_path, "emacs").returncode == 2
