"""What every command shares: options, calling the daemon, printing, mapping errors to exits.

Everything printed for a person goes through :func:`vaultctl.render.say`, which escapes what a
terminal would act on; daemon messages and note names are other people's text.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Annotated, NoReturn, TypeVar

import typer

from protocol.errors import ExitStatus
from protocol.methods import vaults
from protocol.methods.common import Channel, Empty, Params
from protocol.methods.spec import MethodSpec
from vaultctl import render
from vaultctl.client import BadSetting, CallError, Client, DaemonUnavailable, OnNotification, connect

P = TypeVar("P", bound=Params)
R = TypeVar("R")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print compact JSON for scripts.")]
VaultOpt = Annotated[
    str | None,
    typer.Option("--vault", help="Vault id (default: $VAULTD_VAULT, the vault holding the working folder, or the default vault)."),
]


def fail(message: str, status: ExitStatus) -> NoReturn:
    render.say(f"vaultctl: {message}", file=sys.stderr, multiline=False, reversible=False)
    raise typer.Exit(int(status))


def session() -> Client:
    try:
        return connect(Channel.CLI)
    except DaemonUnavailable as exc:
        fail(str(exc), ExitStatus.UNAVAILABLE)
    except BadSetting as exc:
        fail(str(exc), ExitStatus.USAGE)
    except OSError as exc:
        fail(f"cannot reach the daemon: {exc.strerror or exc}", ExitStatus.UNAVAILABLE)


def call(spec: MethodSpec[P, R], params: P, client: Client | None = None, on_notification: OnNotification | None = None) -> R:
    """Call the daemon; refusals become ``vaultctl: <message>`` and the mapped exit status."""
    own = client is None
    c = client or session()
    try:
        return c.call(spec, params, on_notification)
    except UnicodeEncodeError:
        fail("an argument is not valid UTF-8 text", ExitStatus.USAGE)
    except CallError as exc:
        for issue in exc.data.issues:
            where = f" ({issue.path}{':' + str(issue.line) if issue.line else ''})" if issue.path else ""
            render.say(f"  {issue.severity} {issue.code}{where}: {issue.message}", file=sys.stderr, multiline=False, reversible=False)
        if exc.data.candidates:
            render.say("  candidates: " + ", ".join(exc.data.candidates), file=sys.stderr, multiline=False, reversible=False)
        fail(exc.data.message, exc.data.code.exit_status)
    except DaemonUnavailable as exc:
        fail(str(exc), ExitStatus.UNAVAILABLE)
    finally:
        if own:
            c.close()


def emit(result: R, as_json: bool, text: Callable[[R], str]) -> None:
    if as_json:
        print(render.json_line(result))
    else:
        render.say(text(result))


def pick_vault(client: Client, explicit: str | None) -> str | None:
    """--vault, else $VAULTD_VAULT, else the registered vault holding the working folder, else
    None (the daemon's default vault)."""
    if explicit or os.environ.get("VAULTD_VAULT"):
        return explicit or os.environ["VAULTD_VAULT"]
    try:
        here = os.path.realpath(os.getcwd())
    except OSError:
        return None
    for info in call(vaults.VAULT_LIST, Empty(), client=client).vaults:
        root = info.entry.path
        if here == root or here.startswith(root.rstrip("/") + "/"):
            return str(info.entry.id)
    return None
