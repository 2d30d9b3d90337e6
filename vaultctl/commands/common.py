"""What every command shares: options, calling the daemon, printing, mapping errors to exits.

Everything printed for a person goes through :func:`vaultctl.render.say`, which escapes what a
terminal would act on; daemon messages and note names are other people's text.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, NoReturn, TypeVar

import typer

from protocol.errors import ErrorCode, ErrorData, ExitStatus
from protocol.methods import vaults
from protocol.methods.common import Channel, Empty, Params
from vaultctl import command_tree, render, vault_choice
from vaultctl.client import BadSetting, CallError, Client, DaemonUnavailable, OnNotification, connect
from vaultctl.completion import Complete

if TYPE_CHECKING:
    from collections.abc import Callable

    from protocol.methods.spec import MethodSpec

P = TypeVar("P", bound=Params)
R = TypeVar("R")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print compact JSON for scripts.")]
VaultOpt = Annotated[
    str | None,
    typer.Option("--vault", help="Vault id (default: $VAULTD_VAULT, the vault holding the working folder, or the default vault)."),
    Complete.VAULT,
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
        refuse(exc.data)
    except DaemonUnavailable as exc:
        fail(str(exc), ExitStatus.UNAVAILABLE)
    finally:
        if own:
            c.close()


_PARAMS = "$.params"


def _param_flag(path: str) -> str:
    """``--max-bytes`` for ``$.params.max_bytes``: the flag that set the field, as the user typed
    it; a field inside one (``$.params.log.type``) is named after it, ``--log (at type)``."""
    rest = path[len(_PARAMS) :].lstrip(".")
    field, _, inner = rest.partition(".")
    field, bracket, index = field.partition("[")
    inner = (bracket + index + ("." + inner if inner else "")).lstrip(".")
    flag = command_tree.flag_for(field) or field or "the command line"
    return f"{flag} (at {inner})" if inner else flag


def refuse(data: ErrorData) -> NoReturn:
    """Print a refusal once (its issues, candidates, then one ``vaultctl:`` line) and exit with
    its status. An issue about a params field names the command-line flag that set it."""
    params = [i for i in data.issues if i.path and i.path.startswith(_PARAMS)]
    for issue in params:
        render.say(f"vaultctl: {_param_flag(issue.path or '')}: {issue.message}", file=sys.stderr, multiline=False, reversible=False)
    if params and len(params) == len(data.issues) and data.code is ErrorCode.INVALID_PARAMS:
        raise typer.Exit(int(data.code.exit_status))  # the generic "invalid params" line would say it again
    folded: list[str] = []  # the codes of issues that only repeat the message: said once, on its line
    for issue in data.issues:
        if issue in params:
            continue
        if issue.message == data.message:
            folded.append(issue.code)
            continue
        where = f" ({issue.path}{':' + str(issue.line) if issue.line else ''})" if issue.path else ""
        render.say(f"  {issue.severity} {issue.code}{where}: {issue.message}", file=sys.stderr, multiline=False, reversible=False)
    if data.issues_omitted:
        render.say(f"  ... and {data.issues_omitted} more issue(s)", file=sys.stderr, multiline=False, reversible=False)
    if data.candidates:
        render.say("  candidates: " + ", ".join(data.candidates), file=sys.stderr, multiline=False, reversible=False)
    fail(data.message + (f" ({', '.join(dict.fromkeys(folded))})" if folded else ""), data.code.exit_status)


def emit(result: R, as_json: bool, text: Callable[[R], str]) -> None:
    if as_json:
        print(render.json_line(result))
    else:
        render.say(text(result))


def pick_vault(client: Client, explicit: str | None) -> str | None:
    """--vault, else $VAULTD_VAULT, else the registered vault holding the working folder, else
    None (the daemon's default vault)."""
    return vault_choice.chosen(explicit, lambda: call(vaults.VAULT_LIST, Empty(), client=client).vaults)
