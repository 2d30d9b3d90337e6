"""The receipt or preview of a write as a person reads it (with the confirm command a preview asks
for), and the parsing of the arguments writes share (--log, JSON values). The write commands live
in writes.py and in the modules of their rooms (git, sources, lint); their shared options are
added by :mod:`vaultctl.commands.write_command`, and they all print receipts through here."""

from __future__ import annotations

import json
import math
from typing import Any, TypeVar

import msgspec
import typer

from protocol.errors import ExitStatus
from protocol.methods.receipts import Applied, DryRun, MergeDetail, Outcome, Preview, Proposed, WriteReceipt
from protocol.methods.writes import LogEvent, WriteParams
from vaultctl import render
from vaultctl.client import TIMEOUT_ENV, client_timeout
from vaultctl.commands.common import fail
from vaultctl.terminal import Escaped, command_line, escape

P = TypeVar("P", bound=WriteParams)
D = TypeVar("D")


def json_arg(value: str | None, what: str) -> Any:
    if value is None:
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        fail(f"{what} is not valid JSON: {exc.msg}", ExitStatus.USAGE)


def log_event(value: str | None) -> LogEvent | None:
    data = json_arg(value, "--log")
    if data is None:
        return None
    try:
        return msgspec.convert(data, LogEvent)
    except msgspec.ValidationError as exc:
        fail(f"--log: {exc}", ExitStatus.USAGE)


def _detail_items(detail: object, omit: frozenset[str]) -> list[tuple[str, Any]]:
    """The detail's fields in wire order; a merge's unions read as fields of their own."""
    items: list[tuple[str, Any]] = []
    for key, value in msgspec.to_builtins(detail).items():
        if key in omit:
            continue
        items += list(value.items()) if isinstance(detail, MergeDetail) and key == "unions" else [(key, value)]
    return items


#: Past this many files a preview says the operation is large, and its confirm command waits longer.
LARGE_OP_FILES = 1000
#: Seconds per file the confirm waits: generous; about 0.01 s were measured on a busy 2-core
#: machine (docs/performance.md, "Large renames").
SECONDS_PER_FILE = 0.05


def receipt_text(r: Outcome, confirm_cmd: str | None = None, omit: frozenset[str] = frozenset()) -> str:
    """The receipt for a person; ``omit`` leaves out detail fields too long to print."""
    if isinstance(r, Preview):
        head = f"preview of {r.op}: would change {len(r.changes)} file(s)"
    elif isinstance(r, DryRun):
        head = f"dry run of {r.op}: would change {len(r.changes)} file(s); nothing was written"
    elif isinstance(r, Applied):
        head = f"applied {r.op} (op {r.op_id})"
    elif isinstance(r, Proposed):
        head = f"proposed {r.op}: held as proposal {r.proposal}; nothing was written\n{r.message}"
    else:
        head = f"{r.op}: nothing to change"
    lines = [head]
    if r.changes:
        lines.append(
            render.table(
                ["action", "path", "before", "after"],
                [(c.action, c.path, (c.before_sha or "-")[:12], (c.after_sha or "-")[:12]) for c in r.changes],
            )
        )
    for w in r.warnings:
        lines.append(f"warning {w.code}{' ' + w.path if w.path else ''}{':' + str(w.line) if w.line else ''}: {w.message}")
    for key, value in _detail_items(r.detail, omit):
        lines.append(f"{key}: {value if not isinstance(value, list) else ', '.join(map(str, value)) or '-'}")
    if r.log is not None:
        lines.append(f"log: {r.log.line}" if r.log.appended else f"log: NOT appended ({r.log.error})")
    if isinstance(r, Applied) and r.commit:
        lines.append(f"commit: {r.commit}")
    if isinstance(r, Preview) and confirm_cmd:
        prefix = ""
        if len(r.changes) > LARGE_OP_FILES:
            lines.append(
                f"this operation writes {len(r.changes)} files in one journaled transaction (one undo): applying it "
                "takes a while; reads go on meanwhile"
            )
            wait = math.ceil(len(r.changes) * SECONDS_PER_FILE)
            if wait > client_timeout():
                prefix = f"{TIMEOUT_ENV}={wait} "  # so the confirm waits for the receipt instead of giving up
        # Escaped as a whole: a pasted command must come back byte for byte (see terminal.command_line).
        cmd = confirm_cmd if isinstance(confirm_cmd, Escaped) else escape(confirm_cmd)
        lines.append(Escaped(f"to confirm, run:\n  {prefix}{cmd} --confirm --fingerprint {r.fingerprint}"))
    return render.compose(lines)


def exit_if_not_logged(result: WriteReceipt[Any]) -> None:
    """A write whose log line could not be appended is applied but reported: exit 1 (REFUSED)."""
    if result.log is not None and not result.log.appended:
        raise typer.Exit(int(ExitStatus.REFUSED))


def confirm_command(*words: str) -> Escaped:
    return command_line(("vaultctl", *words))
