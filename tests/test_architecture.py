"""Layers point one way: vaultctl -> protocol <- vaultd. Walk every import with ast and fail on a
forbidden one, so a convenient shortcut cannot creep in."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FORBIDDEN = {
    "protocol": {"vaultd", "vaultctl"},
    "vaultctl": {"vaultd"},
    "vaultd": {"vaultctl"},
}


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_forbidden_imports(package: str) -> None:
    files = sorted((REPO / package).rglob("*.py"))
    assert files, f"no modules found under {package}/"
    bad = [
        f"{f.relative_to(REPO)}:{line} imports {name}"
        for f in files
        for line, name in _imports(f)
        if name.split(".")[0] in FORBIDDEN[package]
    ]
    assert not bad, "\n".join(bad)


def test_cli_start_imports_no_daemon_module() -> None:
    """`vaultctl --help` must stay light: no daemon module, no anyio, no apsw."""
    code = (
        "import sys, runpy; sys.argv=['vaultctl','--help']\n"
        "try:\n    runpy.run_module('vaultctl.main', run_name='__main__')\nexcept SystemExit: pass\n"
        "heavy=[m for m in sys.modules if m.split('.')[0] in ('vaultd','anyio','apsw','watchfiles','ruamel','mcp')]\n"
        "print('HEAVY', heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True).stdout
    assert "HEAVY []" in out, out


def test_handlers_see_the_daemon_only_as_a_host() -> None:
    """vaultd.daemon imports the handlers; no handler module imports it back, not even for types."""
    files = sorted((REPO / "vaultd" / "api").rglob("*.py")) + sorted((REPO / "vaultd" / "ops").rglob("*.py"))
    bad = [f"{f.relative_to(REPO)}:{line} imports {name}" for f in files for line, name in _imports(f)
           if name == "vaultd.daemon" or name.startswith("vaultd.daemon.")]
    assert files and not bad, "\n".join(bad)
