"""The console: a local web page for a person, served by a child process of the daemon.

``console.open`` starts the console when none runs (on 127.0.0.1, on a free port) and answers an
address carrying a one-time token; the page exchanges the token for a cookie. The console is a
client of the socket like ``vaultctl``: every view and every action is a method of this table,
called on the ``editor`` channel, so it reaches nothing the CLI could not and adds no write path.
Neither method is an MCP tool: an agent cannot open a person's console.
"""

from __future__ import annotations

from typing import Annotated

from protocol.methods.common import Empty, OptionalVault, Params, Result, described
from protocol.methods.spec import Effect, spec

TOKEN_TTL_S = 120  #: how long the token in a console address stays usable (once)


class ConsoleOpenParams(Params):
    vault: Annotated[OptionalVault, described("The vault the page opens on; omitted: the default vault.")] = None


class ConsoleOpenResult(Result):
    url: Annotated[str, described(f"The address to open: it carries a token that works once, within {TOKEN_TTL_S} s. Never log it.")]
    origin: Annotated[str, described("The console's address without the token: http://127.0.0.1:PORT.")]
    pid: Annotated[int, described("The console process.")]
    started: Annotated[bool, described("True when this call started the console; false when it was running.")]
    expires_s: Annotated[int, described("Seconds the token stays usable.")] = TOKEN_TTL_S


class ConsoleStopResult(Result):
    stopped: Annotated[bool, described("True when a console was running and is stopped now.")]


CONSOLE_OPEN = spec(
    "console.open",
    ConsoleOpenParams,
    ConsoleOpenResult,
    "Start the web console (127.0.0.1, a free port) if it is not running and answer an address with a one-time login token. "
    "UNAVAILABLE without the console extra (vaultd[console]).",
    Effect.WRITE,
)
CONSOLE_STOP = spec(
    "console.stop",
    Empty,
    ConsoleStopResult,
    "Stop the web console; every page signed in to it is signed out.",
    Effect.IDEMPOTENT_WRITE,
)
SPECS = (CONSOLE_OPEN, CONSOLE_STOP)
