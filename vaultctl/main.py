"""``vaultctl``: the command line client of vaultd. Every command is a thin call over the socket."""

from __future__ import annotations

import sys

import typer

from vaultctl.commands import admin

app = typer.Typer(
    name="vaultctl",
    help="Keep Obsidian-compatible Markdown vaults through the vaultd daemon.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("status")(admin.status)
app.command("doctor")(admin.doctor)
app.command("schema")(admin.schema)
app.add_typer(admin.daemon_app, name="daemon")
app.add_typer(admin.vault_app, name="vault")


def main() -> None:
    sys.exit(app())


if __name__ == "__main__":
    main()
