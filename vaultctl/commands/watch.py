"""watch: a vault's events, live, one line each (or one JSON object each with --json)."""

from __future__ import annotations

import datetime as dt
import sys
from typing import Annotated

import msgspec
import typer

from protocol.errors import ExitStatus
from protocol.methods import subscriptions
from protocol.methods.events import (
    Event,
    EventKind,
    FreshInstance,
    IndexProgress,
    IndexReady,
    NoteChanged,
    NoteCreated,
    NoteRemoved,
    NoteRenamed,
    OperationApplied,
    OperationUndone,
    ProposalCreated,
    ProposalDecided,
    StateEnter,
    StateLeave,
    VaultHealthChanged,
    WorkChanged,
    kind_of,
)
from protocol.methods.subscriptions import DROPPED, EVENTS, DroppedParams, EventsParams, SubscribeParams
from protocol.schema import field_help as doc
from vaultctl import render
from vaultctl.client import DaemonUnavailable
from vaultctl.commands.common import JsonOpt, call, fail, pick_vault, session
from vaultctl.terminal import escape

_events = msgspec.json.Decoder(EventsParams)
_dropped = msgspec.json.Decoder(DroppedParams)


def _files(paths: list[str], omitted: int) -> str:
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3 + omitted} more" if len(paths) > 3 or omitted else "")
    return f"{len(paths) + omitted} file(s): {shown}" if paths else "no files"


def describe(event: Event) -> str:
    """What happened, in a few words, for a person."""
    match event:
        case NoteRenamed(path=path, old_path=old):
            return f"{old} -> {path}"
        case NoteCreated(path=path) | NoteChanged(path=path) | NoteRemoved(path=path):
            return path
        case OperationApplied():
            by = f", proposal {event.proposal}" if event.proposal else ""
            return f"{event.op} {event.op_id} by {event.channel}{by}; {_files(event.paths, event.paths_omitted)}"
        case OperationUndone():
            return f"{event.op_id} undid {event.undoes} ({event.channel}); {_files(event.paths, event.paths_omitted)}"
        case ProposalCreated():
            return f"{event.id} {event.op} by {event.proposer}; {_files(event.targets, event.targets_omitted)}"
        case ProposalDecided():
            return f"{event.id} {event.state} by {event.decided_by}" + (f" as {event.applied_op}" if event.applied_op else "")
        case IndexProgress(meaning=meaning) if meaning is not None:
            eta = f", about {meaning.eta_s:,.0f} s left" if meaning.eta_s is not None else ""
            return f"meaning {meaning.covered:,}/{meaning.total:,} passages ({meaning.model}){eta}"
        case IndexProgress():
            total = "?" if event.total is None else f"{event.total:,}"
            return f"{event.parsed:,}/{total} notes parsed" + (" (rebuild)" if event.rebuild else "")
        case IndexReady():
            return f"{event.notes:,} notes in {event.seconds:.2f} s" + (" (rebuild)" if event.rebuild else "")
        case VaultHealthChanged():
            return f"{event.state}" + (f": {event.message}" if event.message else "")
        case StateEnter():
            return event.state
        case StateLeave():
            return f"{event.state}: {event.changes:,} note change(s), {event.listed:,} listed"
        case FreshInstance():
            return event.reason
        case WorkChanged():
            return f"{event.id} {event.state}: {event.what}" + (f" ({event.progress})" if event.progress else "")
    return ""


def line(event: Event) -> str:
    when = dt.datetime.fromtimestamp(event.at).strftime("%H:%M:%S.%f")[:-3]
    cells = [when, event.vault, str(kind_of(event)), describe(event), event.clock]
    return "  ".join(escape(c) for c in cells if c)


def _since(values: list[str]) -> dict[str, str]:
    out = {}
    for value in values:
        vault, sep, clock = value.partition("=")
        if not sep or not vault or not clock:
            fail(f"--since takes VAULT=CLOCK (a clock an event printed), not {value!r}", ExitStatus.USAGE)
        out[vault] = clock
    return out


def watch(
    vault: Annotated[
        str | None,
        typer.Option(
            "--vault", help="Vault id (default: $VAULTD_VAULT, or the vault holding the working folder; else every vault, later ones too)."
        ),
    ] = None,
    kind: Annotated[
        list[EventKind] | None, typer.Option("--kind", metavar="KIND", help=doc(SubscribeParams, "kinds") + " Repeatable.")
    ] = None,
    path: Annotated[list[str] | None, typer.Option("--path", metavar="GLOB", help=doc(SubscribeParams, "paths") + " Repeatable.")] = None,
    since: Annotated[
        list[str] | None,
        typer.Option("--since", metavar="VAULT=CLOCK", help="Resume after this clock of the vault (an event's last column). Repeatable."),
    ] = None,
    settle: Annotated[int, typer.Option("--settle", metavar="MS", help=doc(SubscribeParams, "settle_ms"))] = 0,
    as_json: JsonOpt = False,
) -> None:
    """Print events live as they happen (notes, operations, proposals, indexing, health) until interrupted."""
    client = session()
    try:
        chosen = pick_vault(client, vault)
        params = SubscribeParams(
            vaults=None if chosen is None else [chosen],
            kinds=kind or None,
            paths=list(path or []),
            since=_since(list(since or [])),
            settle_ms=settle,
        )
        answer = call(subscriptions.SUBSCRIBE, params, client=client)
        for clock in answer.vaults:
            if clock.fresh_instance:
                render.say(
                    f"vaultctl: {clock.vault}: clock {params.since.get(clock.vault)} cannot be resumed (the daemon restarted, "
                    f"or it is older than the events kept); following from {clock.clock}",
                    file=sys.stderr,
                    multiline=False,
                    reversible=False,
                )
        sys.stdout.flush()
        for method, raw in client.notifications():
            if method == EVENTS.name:
                for event in _events.decode(raw).events:
                    print(render.json_line(event) if as_json else line(event), flush=True)
            elif method == DROPPED.name:
                dropped = _dropped.decode(raw)
                resume = " ".join(f"--since {v}={c}" for v, c in dropped.clocks.items())
                fail(f"the daemon ended this watch ({dropped.reason}): {dropped.message}; resume with: {resume}", ExitStatus.REFUSED)
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    except DaemonUnavailable as exc:
        fail(str(exc), ExitStatus.UNAVAILABLE)
    except msgspec.DecodeError as exc:
        fail(f"the daemon sent a notification this vaultctl cannot read: {exc}", ExitStatus.UNAVAILABLE)
    finally:
        client.close()
