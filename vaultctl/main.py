"""``vaultctl``: the command line client of vaultd. Every command is a thin call over the socket."""

from __future__ import annotations

import sys
from collections.abc import Callable

import typer

from vaultctl.commands import admin, mcp_cmd, reads, setup_cmd, writes

app = typer.Typer(
    name="vaultctl",
    help="Keep Obsidian-compatible Markdown vaults through the vaultd daemon.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
COMMANDS: list[tuple[str, Callable[..., None]]] = [
    ("status", admin.status), ("doctor", admin.doctor), ("schema", admin.schema),
    ("mcp", mcp_cmd.mcp), ("setup", setup_cmd.setup),
    ("search", reads.search), ("show", reads.show), ("links", reads.links), ("list", reads.list_notes),
    ("tags", reads.tags), ("stats", reads.stats), ("issues", reads.issues),
    ("new", writes.new), ("patch", writes.patch), ("append", writes.append), ("set", writes.set_fields),
    ("link", writes.link), ("supersede", writes.supersede), ("move", writes.move), ("delete", writes.delete),
    ("merge", writes.merge), ("undo", writes.undo), ("ops", writes.ops),
]
for name, fn in COMMANDS:
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
