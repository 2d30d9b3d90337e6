"""The ``vaultctl`` commands, built with typer: one table of command names and where each lives.

:mod:`vaultctl.main` is the entry point. A command line that names one command builds an app with
just that command (:func:`make_app`), importing only its module: typer and the protocol modules
that command needs, not all forty. ``vaultctl``, ``vaultctl --help``, a mistyped command,
completion and the generated reference build the whole tree, ``app``.
"""

from __future__ import annotations

import functools
import importlib
from typing import Annotated, Any

import typer

from protocol.version import VERSION
from vaultctl import display

HELP_MAX_WIDTH = 120  #: help wraps to the terminal (or $COLUMNS), but prose lines no wider than this


def _print_version(wanted: bool) -> None:
    if wanted:
        print(f"vaultctl {VERSION}")
        raise typer.Exit()


def root(
    color: Annotated[
        display.ColorMode,
        typer.Option("--color", help="Colour the output: auto (a terminal, unless NO_COLOR is set or TERM=dumb), always, never."),
    ] = display.ColorMode.AUTO,
    version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print vaultctl's version and exit.")
    ] = False,
) -> None:
    """Keep Obsidian-compatible Markdown vaults through the vaultd daemon."""
    display.set_mode(color)


def guard() -> None:
    """The hook agent hosts run before their own edit and shell tools: reads the host's JSON
    payload on stdin; exit 2 refuses the tool (installed by 'vaultctl setup HOST --apply')."""
    from vaultctl.guard import run

    raise typer.Exit(run())


#: Each top-level command: its name and the module and function that implement it, in help order.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("status", "admin", "status"),
    ("doctor", "admin", "doctor"),
    ("schema", "admin", "schema"),
    ("mcp", "mcp_cmd", "mcp"),
    ("setup", "setup_cmd", "setup"),
    ("search", "reads", "search"),
    ("show", "reads", "show"),
    ("links", "reads", "links"),
    ("list", "reads", "list_notes"),
    ("tags", "reads", "tags"),
    ("stats", "reads", "stats"),
    ("issues", "reads", "issues"),
    ("files", "files_cmd", "list_files"),
    ("new", "writes", "new"),
    ("patch", "writes", "patch"),
    ("append", "writes", "append"),
    ("set", "writes", "set_fields"),
    ("link", "writes", "link"),
    ("supersede", "writes", "supersede"),
    ("move", "writes", "move"),
    ("delete", "writes", "delete"),
    ("merge", "writes", "merge"),
    ("undo", "writes", "undo"),
    ("ops", "writes", "ops"),
    ("watch", "watch", "watch"),
    ("capture", "sources", "capture"),
    ("sources", "sources", "list_sources"),
    ("evidence", "sources", "evidence"),
    ("retrieve", "sources", "retrieve_passages"),
    ("history", "git", "history"),
    ("diff", "git", "diff"),
    ("revert", "git", "revert"),
    ("promote", "git", "promote"),
    ("snapshot", "git", "snapshot"),
    ("sync", "git", "sync"),
    ("help", "help_cmd", "help_command"),
    ("completion", "completion_cmd", "completion"),
    ("lint", "lint_cmd", "lint_vault"),
    ("neighbors", "graph_cmd", "neighbors"),
    ("communities", "graph_cmd", "communities"),
    ("path", "graph_cmd", "path"),
    ("hubs", "graph_cmd", "hubs"),
    ("mocs", "graph_cmd", "mocs"),
    ("nav", "graph_cmd", "nav"),
    ("bases", "bases_cmd", "list_bases"),
    ("console", "console_cmd", "console_cmd"),
    ("templates", "daily_cmd", "list_templates"),
    ("insert", "daily_cmd", "insert_template"),
    ("properties", "properties_cmd", "properties_list"),
    ("outline", "properties_cmd", "outline"),
    ("tasks", "tasks_cmd", "tasks_list"),
    ("tidy", "tidy_cmd", "tidy"),
    ("sessions", "sessions_cmd", "sessions_cmd"),
    ("views", "views_cmd", "views_refresh"),
    ("report", "report_cmd", "report"),
    ("graph", "report_cmd", "graph_build"),
)


#: Each command group: its name and the module and Typer that hold it, in help order.
GROUPS: tuple[tuple[str, str, str], ...] = (
    ("log", "log_cmd", "log_app"),
    ("daemon", "admin", "daemon_app"),
    ("vault", "admin", "vault_app"),
    ("proposals", "proposals", "app"),
    ("claim", "sources", "claim_app"),
    ("base", "bases_cmd", "base_app"),
    ("file", "files_cmd", "file_app"),
    ("daily", "daily_cmd", "daily_app"),
    ("property", "properties_cmd", "property_app"),
    ("task", "tasks_cmd", "task_app"),
    ("spec", "specs_cmd", "spec_app"),
    ("memory", "memory_cmd", "memory_app"),
    ("work", "work_cmd", "work_app"),
    ("checkout", "checkouts_cmd", "app"),
    ("wikify", "wikify_cmd", "app"),
    ("edition", "editions_cmd", "app"),
)
#: Subcommands a group gets from other modules (kept out of admin.py, so 'vaultctl status' does not
#: import them).
GROUP_MEMBERS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "daemon": (("install", "service_cmd", "install"), ("uninstall", "service_cmd", "uninstall")),
    "vault": (("set", "vault_settings", "set_settings"), ("policy", "vault_settings", "policy"), ("git", "git", "vault_git")),
}


def _attr(module: str, name: str) -> Any:
    return getattr(importlib.import_module(f"vaultctl.commands.{module}"), name)


@functools.cache
def _group(name: str, module: str, attr: str) -> typer.Typer:
    """A group with its members from other modules, assembled once per process (groups are shared)."""
    group: typer.Typer = _attr(module, attr)
    for member, member_module, function in GROUP_MEMBERS.get(name, ()):
        group.command(member)(_attr(member_module, function))
    return group


NAMES = frozenset([name for name, _, _ in COMMANDS] + [name for name, _, _ in GROUPS] + ["guard"])
WALKS_THE_TREE = frozenset({"help"})  #: commands that read every other command's help


def app_for(word: str | None) -> typer.Typer:
    """The app a command line naming ``word`` needs: that command alone when it stands alone."""
    if word in NAMES and word not in WALKS_THE_TREE:
        return make_app(word)
    return whole_app()


def make_app(only: str | None = None) -> typer.Typer:
    """The vaultctl app with every command, or with just the command or group ``only``."""
    made = typer.Typer(
        name="vaultctl",
        help="Keep Obsidian-compatible Markdown vaults through the vaultd daemon.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"max_content_width": HELP_MAX_WIDTH},
    )
    made.callback()(root)
    for name, module, function in COMMANDS:
        if only in (None, name):
            made.command(name)(_attr(module, function))
    for name, module, attr in GROUPS:
        if only in (None, name):
            made.add_typer(_group(name, module, attr), name=name)
    if only in (None, "guard"):
        made.command("guard")(guard)
    return made


@functools.cache
def whole_app() -> typer.Typer:
    """The app with every command: for the top-level help, completion and the reference."""
    return make_app()


def __getattr__(name: str) -> Any:
    if name == "app":  # ``from vaultctl.cli import app``: the whole tree, built on first use
        return whole_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
