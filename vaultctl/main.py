"""``vaultctl``: the command line client of vaultd. Every command is a thin call over the socket.

:func:`main` is the boundary to the user: expected failures already became one ``vaultctl:`` line
and an exit status in the commands; anything else becomes one line and exit 70, with the traceback
only when ``VAULTD_DEBUG=1``. A closed stdout (``vaultctl list | head``) ends quietly with 141,
as a program killed by SIGPIPE would.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable

import typer

from protocol.errors import ExitStatus
from vaultctl.commands import admin, graph_cmd, lint_cmd, mcp_cmd, proposals, reads, setup_cmd, writes
from vaultctl.terminal import escape

app = typer.Typer(
    name="vaultctl",
    help="Keep Obsidian-compatible Markdown vaults through the vaultd daemon.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
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
    ("lint", lint_cmd.lint_vault),
    ("neighbors", graph_cmd.neighbors),
    ("communities", graph_cmd.communities),
    ("path", graph_cmd.path),
    ("hubs", graph_cmd.hubs),
    ("mocs", graph_cmd.mocs),
    ("nav", graph_cmd.nav),
]
for name, fn in COMMANDS:
    app.command(name)(fn)
app.add_typer(writes.log_app, name="log")
app.add_typer(admin.daemon_app, name="daemon")
app.add_typer(admin.vault_app, name="vault")
app.add_typer(proposals.app, name="proposals")


DEBUG_ENV = "VAULTD_DEBUG"
EXIT_BROKEN_PIPE = 128 + 13  # SIGPIPE


def _run() -> int:
    if sys.argv[1:] == ["mcp"]:
        # Agent hosts start the shim once per session: skip building the CLI (typer) so the
        # handshake answers sooner. `vaultctl mcp --help` still goes through typer.
        from vaultctl.mcp import run

        return run()
    app()  # standalone: exits through SystemExit with the command's status
    return 0


def main() -> None:
    try:
        status = _run()
    except BrokenPipeError:
        # Python would complain again while flushing stdout at exit: point it at /dev/null.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(EXIT_BROKEN_PIPE)
    except Exception as exc:  # noqa: BLE001 - the one place where any failure becomes a message
        _report_internal(exc)
        sys.exit(int(ExitStatus.INTERNAL))
    sys.exit(status)


def _report_internal(exc: Exception) -> None:
    if os.environ.get(DEBUG_ENV, "") in ("1", "true", "yes"):
        sys.stderr.write(escape("".join(traceback.format_exception(exc)), multiline=True, reversible=False))
    detail = escape(str(exc), reversible=False) or "no detail"
    print(f"vaultctl: internal error ({type(exc).__name__}: {detail}); run again with {DEBUG_ENV}=1 for the details", file=sys.stderr)


if __name__ == "__main__":
    main()
