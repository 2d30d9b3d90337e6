"""``vaultctl``: the command line client of vaultd. Every command is a thin call over the socket."""

from __future__ import annotations

import sys

import typer

from vaultctl.commands import admin, reads, mcp_cmd

app = typer.Typer(
    name="vaultctl",
    help="Keep Obsidian-compatible Markdown vaults through the vaultd daemon.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("status")(admin.status)
app.command("doctor")(admin.doctor)
app.command("mcp")(mcp_cmd.mcp)
app.command("schema")(admin.schema)
for name, fn in [("search", reads.search), ("show", reads.show), ("links", reads.links),
                 ("list", reads.list_notes), ("tags", reads.tags), ("stats", reads.stats), ("issues", reads.issues)]:
    app.command(name)(fn)
app.add_typer(admin.daemon_app, name="daemon")
app.add_typer(admin.vault_app, name="vault")


def main() -> None:
    sys.exit(app())


if __name__ == "__main__":
    main()
