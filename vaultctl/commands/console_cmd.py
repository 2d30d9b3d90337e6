"""console: open the web console in the browser (the daemon starts it when it is not running)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from protocol.methods import console
from protocol.methods.common import Empty
from protocol.methods.console import ConsoleOpenParams, ConsoleOpenResult
from vaultctl import render
from vaultctl.commands.common import JsonOpt, VaultOpt, call, pick_vault, session


def _open_in_browser(url: str) -> bool:
    """Hand the address to the person's browser; False when no browser could be started."""
    import webbrowser  # only here: it looks for browsers when imported

    try:
        return webbrowser.open(url, new=2)
    except webbrowser.Error:
        return False


def console_cmd(
    vault: VaultOpt = None,
    no_open: Annotated[bool, typer.Option("--no-open", help="Print the sign-in address instead of opening a browser.")] = False,
    stop: Annotated[bool, typer.Option("--stop", help="Stop the console; every page signed in to it is signed out.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Open the web console: search, notes, proposals waiting for you, the operation log with undo,
    lint findings, a note's neighbourhood graph and the vault's status, live. It listens on 127.0.0.1 only; the address opened carries a
    sign-in token that works once, for two minutes. Needs the console extra: pip install 'vaultd[console]'."""
    if stop:
        stopped = call(console.CONSOLE_STOP, Empty())
        if as_json:
            print(render.json_line(stopped))
        else:
            render.say("console stopped" if stopped.stopped else "no console was running")
        return
    client = session()
    try:
        opened: ConsoleOpenResult = call(console.CONSOLE_OPEN, ConsoleOpenParams(vault=pick_vault(client, vault)), client=client)
    finally:
        client.close()
    if as_json:
        print(render.json_line(opened))
        return
    if not no_open and _open_in_browser(opened.url):
        render.say(f"console: {opened.origin} (opened in your browser)")
        return
    if not no_open:
        render.say("vaultctl: no browser could be started; open this address yourself:", file=sys.stderr)
    render.say(f"open {opened.url}\nwithin {opened.expires_s} s; it signs in once, then the console is at {opened.origin}")
