"""Docs stay true: the generated references match the code, every CLI command has help text and a
mention in docs/cli.md, the runnable examples run, and no doc names a path of one machine.

Runnable examples are fenced blocks whose info string is ``sh runnable``: each line (``#``
comments aside) is a ``vaultctl`` command, and the block runs with bash, ``set -eu``, against a
real daemon that has the sample vault registered as ``sample``; it passes when it exits 0.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import pytest
import typer
import typer.main

from scripts import cli_reference, docs

if TYPE_CHECKING:
    from tests.support.harness import Daemon, Home

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
COMMANDS = [entry.path for entry in cli_reference.entries()]


def test_protocol_reference_is_current() -> None:
    committed = (REPO / "docs" / "reference" / "methods.md").read_text(encoding="utf-8")
    assert committed == docs.render_protocol(), "regenerate: make docs"


def test_cli_reference_is_current() -> None:
    committed = (REPO / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    assert committed == cli_reference.render(), "regenerate: make docs"


def test_the_cli_reference_lists_every_command_and_option() -> None:
    reference = (REPO / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    for entry in cli_reference.entries():
        assert f"## `{entry.path}`\n\n{cli_reference.help_markdown(entry)}\n" in reference, entry.path
        for declaration, _ in entry.params():
            assert f"| `{declaration.replace('|', chr(92) + '|')}` |" in reference, (entry.path, declaration)


def test_every_command_has_help_text() -> None:
    assert len(COMMANDS) > 20
    assert cli_reference.undocumented() == []


def test_every_option_and_argument_has_help_text() -> None:
    assert cli_reference.unexplained_options() == []


def test_an_option_without_help_text_is_found() -> None:
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """A root, so that the one command below stays a command of a group, as in vaultctl."""

    @app.command("told")
    def told(
        size: Annotated[int, typer.Option(help="How big.")] = 1,
        bare: Annotated[int, typer.Option()] = 2,
        name: Annotated[str, typer.Argument()] = "x",
    ) -> None:
        """Has its help."""

    assert cli_reference.unexplained_options(typer.main.get_command(app)) == ["vaultctl told --bare <int>", "vaultctl told NAME"]


def test_a_command_without_help_text_is_found() -> None:
    app = typer.Typer()

    @app.command("told")
    def told() -> None:
        """Has its help."""

    @app.command("bare")
    def bare() -> None:
        pass

    group = typer.Typer(help="A group with help.")

    @group.command("silent")
    def silent() -> None:
        pass

    app.add_typer(group, name="grp")
    assert cli_reference.undocumented(typer.main.get_command(app)) == ["vaultctl bare", "vaultctl grp silent"]


@pytest.mark.parametrize("name", COMMANDS)
def test_every_cli_command_answers_help_and_is_in_the_docs(name: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "vaultctl.main", *name.split()[1:], "--help"], capture_output=True, text=True, cwd=REPO, timeout=30
    )
    assert out.returncode == 0 and "Usage" in out.stdout, (name, out.stderr)
    cli_doc = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert name in cli_doc, f"docs/cli.md does not mention '{name}'"


def test_readme_opens_with_the_two_setup_commands() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    block = lines[lines.index("```sh") + 1 : lines.index("```")]
    assert [ln.split()[0:2] for ln in block] == [["make", "demo"], ["make", "test"]]


# -- runnable examples ------------------------------------------------------------------------------

FENCE = re.compile(r"^```sh runnable[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def _runnable_blocks() -> list[tuple[str, str]]:
    """(where, script) for every runnable block, where = ``file:line`` of its fence."""
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            found.append((f"{doc.relative_to(REPO)}:{line}", m.group(1)))
    return found


BLOCKS = _runnable_blocks()


def test_the_docs_have_runnable_examples() -> None:
    assert len(BLOCKS) >= 1


@pytest.mark.parametrize("script", [script for _, script in BLOCKS], ids=[where for where, _ in BLOCKS])
def test_runnable_example(script: str, home: Home, daemon: Daemon, sample_vault: Path, tmp_path: Path) -> None:
    commands = [ln for ln in script.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assert commands and all(ln.split()[0] == "vaultctl" for ln in commands), "only vaultctl commands run here"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "vaultctl"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m vaultctl.main "$@"\n')
    wrapper.chmod(0o755)
    env = {**home.env, "PATH": f"{bin_dir}{os.pathsep}{home.env.get('PATH', '')}", "VAULTD_NO_AUTOSTART": "1"}
    added = subprocess.run([str(wrapper), "vault", "add", "sample", str(sample_vault)], env=env, capture_output=True, text=True, timeout=60)
    assert added.returncode == 0, added.stderr
    ran = subprocess.run(["bash", "-c", "set -eu\n" + script], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, f"exit {ran.returncode}\n{ran.stdout[-2000:]}\n{ran.stderr[-2000:]}"
    assert "Traceback" not in ran.stderr


# -- no machine paths ---------------------------------------------------------------------------------

# A path that names one machine: a home or work folder, or a temporary folder that a real run made
# (pytest's, tempfile's random names). Fixed defaults such as /tmp/vaultd-bench stay allowed.
MACHINE_PATH = re.compile(
    r"(?<![\w.$~-])/(?:work|home|root|Users)/[^\s`'\")\]]*"
    r"|(?<![\w.$~-])/tmp/(?:pytest-of-|tmp)[^\s`'\")\]]*"
    r"|(?<![\w.$~-])/tmp/[\w.-]*?[_-](?=[a-z_]*\d)(?=[a-z0-9_]*[a-z])[a-z0-9_]{8}(?![\w.-])"
)


@pytest.mark.parametrize(
    "sample",
    [
        "/work/shared/bench/gen_vault.py",
        "/home/ada/Notes",
        "/root/x",
        "/tmp/pytest-of-root/pytest-3/test_x0",
        "/tmp/tmpk2j3h4l5/home",
        "/tmp/vaultd-ab12cd34/run",
    ],
)
def test_a_machine_path_is_recognised(sample: str) -> None:
    assert MACHINE_PATH.search(f"see `{sample}` there")


@pytest.mark.parametrize(
    "sample",
    [
        "/tmp/vaultd-bench/corpora/nN-sS/",
        "/tmp/vaultd-load",
        "/tmp/x",
        "$VAULTD_HOME/run/vaultd.sock",
        "~/Notes",
        "/run/user/<uid>/vaultd",
        "https://example.org/home/page",
    ],
)
def test_a_chosen_path_is_not_a_machine_path(sample: str) -> None:
    assert not MACHINE_PATH.search(f"see `{sample}` there")


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(REPO)) for d in DOCS])
def test_docs_name_no_machine_paths(doc: Path) -> None:
    found = [
        f"{doc.relative_to(REPO)}:{n}: {m.group()}"
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1)
        for m in MACHINE_PATH.finditer(line)
    ]
    assert not found, "\n".join(found)


def test_the_glossary_names_only_places_that_exist() -> None:
    """Each word's place in docs/glossary.md is a file of the repository, and each name it gives
    in a file is defined there, so a rename or a move that forgets the glossary fails here."""
    text = (REPO / "docs" / "glossary.md").read_text(encoding="utf-8")
    paths = set(re.findall(r"`((?:protocol|vaultd|vaultctl)/[\w/]+\.py)`", text))
    assert paths, "the glossary names no module"
    missing = sorted(p for p in paths if not (REPO / p).is_file())
    assert not missing, f"docs/glossary.md names modules that do not exist: {missing}"
    named = re.findall(r"`(\w+)(?:\.(\w+))?` in `((?:protocol|vaultd|vaultctl)/[\w/]+\.py)`", text)
    assert named, "the glossary names no definition"
    undefined = [
        f"{outer}{'.' + inner if inner else ''} in {path}"
        for outer, inner, path in named
        if not re.search(
            rf"^\s*(?:class|def|async def)\s+{inner or outer}\b|^\s*{inner or outer}\s*[:=]",
            (REPO / path).read_text(encoding="utf-8"),
            re.M,
        )
    ]
    assert not undefined, f"docs/glossary.md names what its module does not define: {undefined}"
