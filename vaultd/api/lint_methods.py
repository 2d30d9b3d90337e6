"""The handler of vault.lint (lint.fix is an operation, answered by the handler the catalogue makes).

Lint works on the snapshot the caller may see: a note private to an agent's channel is neither
linted, nor named in another note's finding.

It never holds the index while it walks. The index is copied in one synchronous step on the
event loop (:meth:`~vaultd.vault.index.VaultIndex.copy`: the maps' entries, not the records,
which the index replaces and never changes), and everything after runs on that copy, off the
event loop: resolving every link, reading the canvases and bases, every rule. A vault of
:data:`~vaultd.lint.worker.WORKER_MIN_NOTES` notes or more is linted in a worker process
(:mod:`vaultd.lint.worker`), so its rules never hold the daemon's GIL; a smaller one in a daemon
thread (:func:`~vaultd.lint.report.report` either way, so the answer is the same). A write to the vault
being linted goes on meanwhile (it waits for nothing of lint's but the copy), and the findings
are of one state of the vault, the one copied, whatever is written during the walk.

Why a copy and not chunks of the walk under short holds, measured on a generated 20,000-note
vault (2 cores, load average 12): the copy takes 1 to 2 ms; the link snapshot it replaces took
2.3 s under the hold, and the rules 1.7 to 2.9 s more. Chunks would bound each hold but leave
the walk seeing several states, to be restarted (or its findings marked) at every write between
two chunks, so a vault written to steadily might never be linted whole; a copy sees one state
and costs less than one chunk would. The copy shares the lists of the index's resolver, which
the index replaces rather than changes for this reason (copying each list took 100 ms).

The walk is bounded in time: past :data:`~protocol.methods.lint.MAX_LINT_SECONDS` from the
copy, the rules stop and the call answers LIMIT (:class:`~vaultd.lint.model.Deadline`); a
worker still running a few seconds later is killed, with the same answer. A worker that dies
answers UNAVAILABLE (retry); the daemon goes on.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

import anyio
import msgspec

from protocol.methods import lint
from protocol.methods.writes import LogEvent, LogType
from vaultd.api.handlers import CallContext, handles
from vaultd.api.read_methods import live_view
from vaultd.api.report_methods import lint_report, write_report
from vaultd.errors import InvalidParams
from vaultd.lint.model import Deadline
from vaultd.lint.report import report
from vaultd.lint.worker import WORKER_MIN_NOTES, job_of, lint_elsewhere
from vaultd.vault.lookup import find_note
from vaultd.vault_work import VAULT_WORK

if TYPE_CHECKING:
    from vaultd.vault.index import IndexCopy


def as_of_date(text: str | None) -> dt.date:
    """The lint's date: the one declared, else today on the daemon's clock.

    Raises:
        InvalidParams: INVALID_PARAMS, ``as_of`` is not a YYYY-MM-DD calendar date.
    """
    if text is None:
        return dt.datetime.now().astimezone().date()
    try:
        return dt.date.fromisoformat(text)
    except ValueError as exc:
        raise InvalidParams(f"as_of {text!r} is not a calendar date (YYYY-MM-DD)") from exc


@handles(lint.LINT)
async def lint_vault(ctx: CallContext, params: lint.LintParams) -> lint.LintResult:
    when = as_of_date(params.as_of)
    live, view = await live_view(ctx, params.vault, params.fresh)
    entry = ctx.host.vault(params.vault).entry

    def here(copy: IndexCopy, note: str | None, deadline: Deadline) -> lint.LintResult:
        return report(copy, entry, view, when, code=params.code, note=note, limit=params.limit, deadline=deadline)

    def elsewhere(copy: IndexCopy, note: str | None, deadline: Deadline) -> lint.LintResult:
        job = job_of(copy, entry, view, when, code=params.code, note=note, limit=params.limit, until=deadline.when)
        return lint_elsewhere(job)

    async with VAULT_WORK.admitted(ctx, "vault.lint"), VAULT_WORK.turn():
        deadline = Deadline.for_lint()
        # One synchronous step on the event loop, where every change to the index is applied:
        # the note and the copy are of one state, and no hold is needed.
        note = find_note(live.index, params.note, view.hidden) if params.note is not None else None
        copy = live.index.copy()
        work = elsewhere if len(copy.notes) >= WORKER_MIN_NOTES else here
        result = await anyio.to_thread.run_sync(work, copy, note, deadline)
    if params.write:  # after the vault's turn: the report is one more write, queued as any other
        event = LogEvent(type=LogType.LINT, source="lint", note=f"{result.verdict}: {result.errors} error(s), {result.warnings} warning(s)")
        path, op = await write_report(ctx, params.vault, f"lint-{result.as_of}.md", lint_report(result), event)
        result = msgspec.structs.replace(result, report=path, report_op=op)
    return result
