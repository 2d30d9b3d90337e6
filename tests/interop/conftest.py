"""The interop run writes its own matrix: which client, at which version, passed.

With ``VAULTD_INTEROP_MATRIX=FILE`` (``make interop-matrix`` sets it to docs/interop-matrix.md),
the session ends by writing a Markdown table of every client test's outcome, so the table in the
docs is the one a real run produced, never typed by hand.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

REPO = Path(__file__).resolve().parents[2]
MATRIX_ENV = "VAULTD_INTEROP_MATRIX"

#: test function name (and parameter) -> (client, package whose pinned version is shown)
CLIENTS = {
    "test_the_typescript_sdk_client": ("official TypeScript SDK", "@modelcontextprotocol/sdk"),
    "test_the_inspector_cli": ("MCP Inspector CLI", "@modelcontextprotocol/inspector"),
    "claude": ("Claude Code", "@anthropic-ai/claude-code"),
    "gemini": ("Gemini CLI", "@google/gemini-cli"),
    "codex": ("Codex CLI", "@openai/codex"),
    "test_the_fastmcp_client": ("fastmcp (PyPI)", "fastmcp"),
}
_outcomes: dict[str, str] = {}


def _client_key(item_name: str) -> str | None:
    name, _, param = item_name.partition("[")
    if name in CLIENTS:
        return name
    host = param.split("-", 1)[0]
    return host if host in CLIENTS else None


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    key = _client_key(report.nodeid.rsplit("::", 1)[-1])
    if key is None or (report.when != "call" and report.passed):
        return
    if report.failed:
        _outcomes[key] = "fail"
    elif report.skipped:
        _outcomes.setdefault(key, "skipped")
    elif report.when == "call":
        _outcomes.setdefault(key, "pass")


def _version(package: str) -> str:
    if package == "fastmcp":
        try:
            return metadata.version("fastmcp")
        except metadata.PackageNotFoundError:
            return "not installed"
    pinned: dict[str, str] = json.loads((REPO / "interop" / "package.json").read_text())["dependencies"]
    return pinned.get(package, "?")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    target = os.environ.get(MATRIX_ENV)
    if not target or not _outcomes:
        return
    rows = [
        f"| {client} | `{package}` {_version(package)} | {_outcomes.get(key, 'not run')} |" for key, (client, package) in CLIENTS.items()
    ]
    text = "\n".join(
        [
            "# Interop matrix",
            "",
            f"Written by `make interop-matrix` on {dt.date.today().isoformat()}; what each row checks is in",
            '[mcp.md](mcp.md), "Interop matrix". The official Python SDK is driven by the regular suite.',
            "",
            "| client | package and version | result |",
            "|---|---|---|",
            *rows,
            "",
        ]
    )
    Path(target).write_text(text, encoding="utf-8")
