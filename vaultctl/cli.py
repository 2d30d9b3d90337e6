"""The ``vaultctl`` commands, built with typer: one table of command names and functions.

:mod:`vaultctl.main` is the entry point; it builds this only for commands that need it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

from protocol.version import VERSION
from vaultctl import display
from vaultctl.commands import (
    admin,
    completion_cmd,
    console_cmd,
    git,
    graph_cmd,
    help_cmd,
    lint_cmd,
    mcp_cmd,
    proposals,
    reads,
    service_cmd,
    setup_cmd,
    sources,
    vault_settings,
    watch,
    writes,
)

HELP_MAX_WIDTH = 120  #: help wraps to the terminal (or $COLUMNS), but prose lines no wider than this

app = typer.Typer(
    name="vaultctl",
    help="Keep Obsidian-compatible Markdown vaults through the vaultd daemon.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"max_content_width": HELP_MAX_WIDTH},
)


def _print_version(wanted: bool) -> None:
    if wanted:
        print(f"vaultctl {VERSION}")
        raise typer.Exit()


@app.callback()
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


COMMANDS: list[tuple[str, Callable[..., None]]] = [
    ("status", admin.status),
    ("doctor", admin.doctor),
    ("schema", admin.schema),
    ("mcp", mcp_cmd.mcp),
    ("setup", setup_cmd.setup),
    ("search", reads.search),
    ("show", reads.show),
    ("links", reads.links),
    ("list", reads.list_notes),
    ("tags", reads.tags),
    ("stats", reads.stats),
    ("issues", reads.issues),
    ("new", writes.new),
    ("patch", writes.patch),
    ("append", writes.append),
    ("set", writes.set_fields),
    ("link", writes.link),
    ("supersede", writes.supersede),
    ("move", writes.move),
    ("delete", writes.delete),
    ("merge", writes.merge),
    ("undo", writes.undo),
    ("ops", writes.ops),
    ("watch", watch.watch),
    ("capture", sources.capture),
    ("sources", sources.list_sources),
    ("evidence", sources.evidence),
    ("retrieve", sources.retrieve_passages),
    ("history", git.history),
    ("diff", git.diff),
    ("revert", git.revert),
    ("promote", git.promote),
    ("snapshot", git.snapshot),
    ("sync", git.sync),
    ("help", help_cmd.help_command),
    ("completion", completion_cmd.completion),
    ("lint", lint_cmd.lint_vault),
    ("neighbors", graph_cmd.neighbors),
    ("communities", graph_cmd.communities),
    ("path", graph_cmd.path),
    ("hubs", graph_cmd.hubs),
    ("mocs", graph_cmd.mocs),
    ("nav", graph_cmd.nav),
    ("console", console_cmd.console_cmd),
]
for name, fn in COMMANDS:
    app.command(name)(fn)
app.add_typer(writes.log_app, name="log")
admin.daemon_app.command("install")(service_cmd.install)
admin.daemon_app.command("uninstall")(service_cmd.uninstall)
app.add_typer(admin.daemon_app, name="daemon")
admin.vault_app.command("set")(vault_settings.set_settings)
admin.vault_app.command("policy")(vault_settings.policy)
admin.vault_app.command("git")(git.vault_git)
app.add_typer(admin.vault_app, name="vault")
app.add_typer(proposals.app, name="proposals")
app.add_typer(sources.claim_app, name="claim")


@app.command("guard")
def guard() -> None:
    """The hook agent hosts run before their own edit and shell tools: reads the host's JSON
    payload on stdin; exit 2 refuses the tool (installed by 'vaultctl setup HOST --apply')."""
    from vaultctl.guard import run

    raise typer.Exit(run())
