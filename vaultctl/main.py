"""``vaultctl``: the command line client of vaultd. Every command is a thin call over the socket.

:func:`main` is the boundary to the user: expected failures already became one ``vaultctl:`` line
and an exit status in the commands; anything else becomes one line and exit 70, with the traceback
only when ``VAULTD_DEBUG=1``. A closed stdout (``vaultctl list | head``) ends quietly with 141,
as a program killed by SIGPIPE would.

A command line naming one command builds only that command (:func:`vaultctl.cli.make_app`).
Two commands skip building the CLI (:mod:`vaultctl.cli`, typer): ``vaultctl mcp``, which agent
hosts start once per session and whose handshake should answer soon (with or without ``--tools``), and ``vaultctl guard``, the
hook hosts run before every matching tool call. ``vaultctl mcp --help`` still goes through typer.
"""

from __future__ import annotations

import os
import sys

DEBUG_ENV = "VAULTD_DEBUG"
COMPLETE_WORD = "__complete"  #: what the shell completion scripts call: ``vaultctl __complete ...``
EXIT_BROKEN_PIPE = 128 + 13  # SIGPIPE


def _run() -> int:
    if sys.argv[1:2] == ["mcp"]:
        from vaultctl.mcp import fast_args, run

        if (tools := fast_args(sys.argv[2:])) is not None:
            return run(tools)
    if sys.argv[1:] == ["guard"]:
        from vaultctl.guard import run as guard

        return guard()
    from vaultctl import command_tree
    from vaultctl.cli import app_for, whole_app

    if sys.argv[1:2] == [COMPLETE_WORD]:
        from vaultctl.completion.engine import answer

        return answer(command_tree.build(whole_app()), sys.argv[2:])
    command_tree.build(app_for(command_word(sys.argv[1:])))(
        prog_name="vaultctl"
    )  # standalone: exits through SystemExit with the command's status
    return 0


def command_word(args: list[str]) -> str | None:
    """The command a command line names (``search`` in ``vaultctl --color never search x``), or
    None when the root's own options come first (``--help``, ``--version``): those need every command."""
    rest = iter(args)
    for arg in rest:
        if arg == "--color":
            next(rest, None)
        elif not arg.startswith("--color="):
            return None if arg.startswith("-") else arg
    return None


def main() -> None:
    try:
        status = _run()
    except BrokenPipeError:
        # Python would complain again while flushing stdout at exit: point it at /dev/null.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(EXIT_BROKEN_PIPE)
    except Exception as exc:  # noqa: BLE001 - the one place where any failure becomes a message
        from protocol.errors import ExitStatus

        _report_internal(exc)
        sys.exit(int(ExitStatus.INTERNAL))
    sys.exit(status)


def _report_internal(exc: Exception) -> None:
    # Imported here: the hook path (vaultctl guard) pays for nothing it does not use.
    import traceback

    from vaultctl.terminal import escape

    if os.environ.get(DEBUG_ENV, "") in ("1", "true", "yes"):
        sys.stderr.write(escape("".join(traceback.format_exception(exc)), multiline=True, reversible=False))
    detail = escape(str(exc), reversible=False) or "no detail"
    print(f"vaultctl: internal error ({type(exc).__name__}: {detail}); run again with {DEBUG_ENV}=1 for the details", file=sys.stderr)


if __name__ == "__main__":
    main()
