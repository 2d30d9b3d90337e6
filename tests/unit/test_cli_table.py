"""The command table: a command line naming one command builds and imports only that command, and
the one-command app answers exactly as the whole tree does."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.harness import REPO
from vaultctl import command_tree
from vaultctl.cli import COMMANDS, GROUPS, NAMES, make_app, whole_app
from vaultctl.main import command_word

COLORS = st.sampled_from([["--color", "never"], ["--color=always"], ["--color", "auto"]])


@given(st.lists(COLORS, max_size=3), st.sampled_from(sorted(NAMES)), st.lists(st.text(max_size=8), max_size=4))
def test_the_command_word_is_the_first_word_after_the_roots_colour_options(colors: list[list[str]], name: str, rest: list[str]) -> None:
    args = [word for pair in colors for word in pair] + [name, *rest]
    assert command_word(args) == name


@pytest.mark.parametrize(
    "args",
    [[], ["--help"], ["--version"], ["--color", "never", "--help"], ["--color"], ["-h", "search"], ["--bogus", "search"]],
)
def test_root_options_and_empty_lines_name_no_command(args: list[str]) -> None:
    assert command_word(args) is None


def test_every_command_and_group_is_in_the_whole_tree_once() -> None:
    root = command_tree.build(whole_app())
    listed = root.list_commands(root.context_class(root, info_name="vaultctl"))
    assert sorted(listed) == sorted(NAMES)
    assert len(listed) == len(COMMANDS) + len(GROUPS) + 1  # + guard


@pytest.mark.parametrize("name", sorted(NAMES))
def test_a_one_command_app_has_that_command_as_the_whole_tree_has_it(name: str) -> None:
    whole = command_tree.build(whole_app())
    one = command_tree.build(make_app(name))
    ctx = one.context_class(one, info_name="vaultctl")
    assert one.list_commands(ctx) == [name]
    mine, theirs = one.get_command(ctx, name), whole.get_command(ctx, name)
    assert mine.help == theirs.help
    assert [p.name for p in mine.params] == [p.name for p in theirs.params]
    assert sorted(getattr(mine, "commands", {})) == sorted(getattr(theirs, "commands", {}))


def _command_modules(*args: str) -> set[str]:
    """The vaultctl.commands modules a real vaultctl process imports for ``args``."""
    code = (
        "import sys; from vaultctl.main import main; sys.argv = ['vaultctl', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(' '.join(m for m in sys.modules if m.startswith('vaultctl.commands.')), file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=REPO, timeout=60)
    return set(proc.stderr.split())


def test_a_command_imports_its_own_module_and_no_other() -> None:
    assert _command_modules("search", "--help") == {"vaultctl.commands.common", "vaultctl.commands.reads"}
    history = _command_modules("--color", "never", "history", "--help")
    assert "vaultctl.commands.git" in history and not history & {"vaultctl.commands.graph_cmd", "vaultctl.commands.sources"}
    assert "vaultctl.commands.service_cmd" in _command_modules("daemon", "--help")


def test_the_top_level_help_and_a_mistyped_command_build_the_whole_tree() -> None:
    every = {f"vaultctl.commands.{module}" for _, module, _ in COMMANDS}
    assert every <= _command_modules("--help")
    assert every <= _command_modules("serch", "x")
    assert every <= _command_modules("help", "search")  # help reads any command's help
