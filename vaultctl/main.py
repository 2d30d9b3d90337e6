"""``vaultctl``: the command line client of vaultd. Every command is a thin call over the socket."""

from __future__ import annotations

import sys

import typer

from vaultctl.commands import admin, mcp_cmd, reads, setup_cmd, writes

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
app.command("setup")(setup_cmd.setup)
for name, fn in [("search", reads.search), ("show", reads.show), ("links", reads.links),
                 ("list", reads.list_notes), ("tags", reads.tags), ("stats", reads.stats), ("issues", reads.issues)]:
    app.command(name)(fn)
for name, fn in [("new", writes.new), ("patch", writes.patch), ("append", writes.append), ("set", writes.set_fields),
                 ("link", writes.link), ("supersede", writes.supersede), ("move", writes.move),
                 ("delete", writes.delete), ("merge", writes.merge),
                 ("undo", writes.undo), ("ops", writes.ops)]:
    app.command(name)(fn)
app.add_typer(writes.log_app, name="log")
app.add_typer(admin.daemon_app, name="daemon")
app.add_typer(admin.vault_app, name="vault")


def main() -> None:
    if sys.argv[1:] == ["mcp"]:
        # Agent hosts start the shim once per session: skip building the CLI (typer) so the
        # handshake answers sooner. `vaultctl mcp --help` still goes through typer.
        from vaultctl.mcp import run

        sys.exit(run())
    sys.exit(app())


if __name__ == "__main__":
    main()
