"""The CLI's help, its guide (docs/cli.md) and its man page come from, or are checked against, the
commands themselves: arguments named in capitals, regular expressions shown as written, every
option the guide gives real, and a man page that roff reads without a warning."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

import pytest

from scripts import cli_doc, cli_reference, docs, man_page
from vaultctl import command_tree
from vaultctl.cli import app

ROOT: Any = command_tree.build(app)


def test_every_command_is_presented_the_vaultctl_way() -> None:
    found = list(command_tree.walk(ROOT, "vaultctl"))
    assert len(found) > 30
    for path, command, _ctx in found:
        assert isinstance(command, command_tree.Command | command_tree.Group), path
        assert command.rich_markup_mode is None, path


def test_usage_names_arguments_in_capitals() -> None:
    usages = {entry.path: entry.usage() for entry in cli_reference.entries()}
    assert usages["vaultctl search"] == "vaultctl search [OPTIONS] [QUERY]"  # a filter alone is a search
    assert usages["vaultctl list"] == "vaultctl list [OPTIONS] [FOLDER]"
    assert usages["vaultctl help"] == "vaultctl help [OPTIONS] [COMMAND...]"
    assert not [u for u in usages.values() if "{" in u or "}" in u]


def test_help_shows_a_regular_expression_as_written() -> None:
    add = ROOT.commands["vault"].commands["add"]
    parent = ROOT.context_class(ROOT, info_name="vaultctl")
    text = add.context_class(add, info_name="add", parent=parent).get_help()
    assert "^[a-z][a-z0-9-]{0,31}$" in text
    assert "Usage: vaultctl add [OPTIONS] ID PATH" in text


def test_the_guide_agrees_with_the_commands() -> None:
    assert cli_doc.problems() == []


def test_a_guide_that_disagrees_is_caught() -> None:
    good = cli_doc.GUIDE.read_text(encoding="utf-8")
    bad = good + "\n| `vaultctl list --colour` | x |\n| `vaultctl frobnicate X` | y |\n"
    found = cli_doc.problems(bad)
    assert any("vaultctl list has no option --colour" in p for p in found), found
    assert any("`vaultctl frobnicate X` names no vaultctl command" in p for p in found), found
    missing = good.replace("vaultctl completion", "vaultctl c0mpletion")
    assert "docs/cli.md does not mention 'vaultctl completion'" in cli_doc.problems(missing)


def test_generated_docs_and_the_man_page_are_current() -> None:
    assert docs.stale() == [], "regenerate: make docs"


def test_the_man_page_describes_every_exit_status() -> None:
    page = man_page.render()
    for status in man_page.EXIT_STATUSES:
        assert f"\\fB{int(status)}\\fR" in page
    assert man_page.roff(".start -x \\ y") == "\\&.start \\-x \\e y"


def _groff() -> str:
    found = shutil.which("groff")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("groff is missing; .ci/run installs it (Debian's groff-base)")
        pytest.skip("groff is not installed")
    return found


def test_roff_reads_the_man_page_without_a_warning() -> None:
    page = docs.REPO / "docs" / "man" / "vaultctl.1"
    lint = subprocess.run([_groff(), "-man", "-Tutf8", "-ww", "-z", str(page)], capture_output=True, text=True, timeout=60)
    assert lint.returncode == 0 and lint.stderr == "", lint.stderr
    shown = subprocess.run([_groff(), "-man", "-Tutf8", "-P-c", "-P-b", "-P-u", str(page)], capture_output=True, text=True, timeout=60)
    text = shown.stdout
    for heading in ("NAME", "SYNOPSIS", "COMMANDS", "EXIT STATUS", "ENVIRONMENT"):
        assert heading in text
    for entry in cli_reference.entries():
        assert entry.path in text, entry.path
    if shutil.which("man"):
        viaman = subprocess.run(
            ["man", "-l", str(page)], capture_output=True, text=True, timeout=60, env={**os.environ, "MANPAGER": "cat", "MANWIDTH": "100"}
        )
        assert viaman.returncode == 0 and "vaultctl search" in viaman.stdout, viaman.stderr
