"""vaultctl help [COMMAND...]: the help of a command, as ``vaultctl COMMAND --help`` prints it."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from protocol.errors import ExitStatus
from vaultctl.commands.common import fail
from vaultctl.completion import Complete


def help_command(
    ctx: typer.Context,
    words: Annotated[
        list[str] | None,
        typer.Argument(metavar="COMMAND", help="The command, e.g. search or log tail; none: every command.", show_default=False),
        Complete.COMMAND,
    ] = None,
) -> None:
    """Show the help of a command: 'vaultctl help log tail' is 'vaultctl log tail --help'."""
    context = ctx.find_root()
    command: Any = context.command
    for word in words or []:
        sub = command.get_command(context, word) if hasattr(command, "commands") else None
        if sub is None or sub.hidden:
            typed = " ".join(["vaultctl", *(words or [])])
            fail(f"no command '{typed}'; 'vaultctl help' lists the commands", ExitStatus.USAGE)
        context = sub.context_class(sub, info_name=word, parent=context)
        command = sub
    typer.echo(context.get_help())
