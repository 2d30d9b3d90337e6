"""The version is written once (protocol/version.py): the package metadata, the daemon and the
clients all report that one, and no second copy can creep back in."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

from protocol.version import VERSION
from vaultctl.client import CLIENT_VERSION

REPO = Path(__file__).resolve().parents[1]
LITERAL = re.compile(r"""^\s*(?:__version__|[A-Z_]*VERSION)\s*(?::\s*\w+\s*)?=\s*["']\d+\.\d+""", re.MULTILINE)


def test_pyproject_reads_the_version_from_the_one_module() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["hatch"]["version"] == {"path": "protocol/version.py"}


def test_the_installed_metadata_daemon_and_client_agree() -> None:
    assert version("vaultd") == VERSION, "the installed metadata is stale: run make venv"
    assert CLIENT_VERSION == VERSION
    out = subprocess.run(
        [sys.executable, "-m", "vaultd.main", "--version"], capture_output=True, text=True, cwd=REPO, timeout=30, check=True
    )
    assert out.stdout.strip() == f"vaultd {VERSION}"
    cli = subprocess.run(
        [sys.executable, "-m", "vaultctl.main", "--version"], capture_output=True, text=True, cwd=REPO, timeout=30, check=True
    )
    assert cli.stdout.strip() == f"vaultctl {VERSION}"


def test_no_other_module_writes_a_version_number() -> None:
    found = [
        str(path.relative_to(REPO))
        for package in ("protocol", "vaultd", "vaultctl")
        for path in sorted((REPO / package).rglob("*.py"))
        if path != REPO / "protocol" / "version.py" and LITERAL.search(path.read_text(encoding="utf-8"))
    ]
    assert found == []
