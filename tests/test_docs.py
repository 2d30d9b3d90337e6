"""Docs stay true: the generated protocol reference matches the table, and every CLI command has
help text and a mention in docs/cli.md."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from protocol.reference import render

REPO = Path(__file__).resolve().parents[1]


def test_protocol_reference_is_current() -> None:
    committed = (REPO / "docs" / "reference" / "methods.md").read_text(encoding="utf-8")
    assert committed == render(), "regenerate: python -m protocol.reference > docs/reference/methods.md"


def _commands() -> list[str]:
    import typer.main

    from vaultctl.main import app

    group = typer.main.get_command(app)
    names: list[str] = []
    for name, cmd in group.commands.items():  # type: ignore[attr-defined]
        sub = getattr(cmd, "commands", None)
        names += [f"{name} {s}" for s in sub] if sub else [name]
    return names


def test_every_cli_command_has_help_and_docs() -> None:
    cli_doc = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    for name in _commands():
        out = subprocess.run([sys.executable, "-m", "vaultctl.main", *name.split(), "--help"],
                             capture_output=True, text=True, cwd=REPO, timeout=30)
        assert out.returncode == 0 and "Usage" in out.stdout, name
        assert f"vaultctl {name}" in cli_doc, f"docs/cli.md does not mention 'vaultctl {name}'"


def test_readme_opens_with_the_two_setup_commands() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    block = lines[lines.index("```sh") + 1: lines.index("```")]
    assert [ln.split()[0:2] for ln in block] == [["make", "demo"], ["make", "test"]]
