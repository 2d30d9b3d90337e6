"""The handler of vault.lint (lint.fix is an operation, answered by the handler the catalogue makes).

Lint runs in a worker thread with the index held still, on the snapshot the caller may see: a
note private to an agent's channel is neither linted, nor named in another note's finding. The
canvases and bases are read and parsed before, with the index not held and within a time bound,
so a hostile one never holds the vault's writes (:mod:`vaultd.lint.gather`).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter

import anyio

from protocol.methods import lint
from protocol.methods.lint import MAX_FINDING_CHARS, LintFinding, LintLevel, LintParams, LintResult
from vaultd.api.handlers import CallContext, handles
from vaultd.api.read_methods import live_view
from vaultd.api.vault_work import VAULT_WORK
from vaultd.errors import InvalidParams
from vaultd.lint.engine import run, verdict, with_fixes, with_hints
from vaultd.lint.gather import document_paths, gather, read_documents, text_reader
from vaultd.memory import collector_paused
from vaultd.vault.lookup import find_note


def _cut(text: str) -> str:
    return text if len(text) <= MAX_FINDING_CHARS else text[: MAX_FINDING_CHARS - 1] + "…"


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
async def lint_vault(ctx: CallContext, params: LintParams) -> LintResult:
    when = as_of_date(params.as_of)
    live, view = await live_view(ctx, params.vault, params.fresh)
    runtime = ctx.host.vault(params.vault)
    entry = runtime.entry

    def work() -> LintResult:
        with collector_paused():
            note = find_note(live.index, params.note, view.hidden) if params.note is not None else None
            inp = gather(live.index, entry, view, when, read)
            found = run(inp, params.code)
            if note is not None:
                found = [f for f in found if f.note == note]
            listed = with_fixes(with_hints(found[: params.limit], inp), text_reader(runtime.root, inp.snap))
        counts = Counter(str(f.code) for f in found)
        return LintResult(
            vault=entry.id,
            as_of=when.isoformat(),
            verdict=verdict(found),
            checked=1 if note is not None else len(inp.snap.notes),
            errors=sum(1 for f in found if f.level is LintLevel.ERROR),
            warnings=sum(1 for f in found if f.level is LintLevel.WARN),
            fixable=sum(1 for f in found if f.fixable),
            counts={code: counts[code] for code in sorted(counts)},
            findings=[
                LintFinding(
                    level=f.level, code=f.code, note=f.note, line=f.line, finding=_cut(f.message), fix=_cut(str(f.fix)) if f.fix else None
                )
                for f in listed
            ],
            truncated=len(found) > params.limit,
            unread_documents=inp.unread_documents,
        )

    async with VAULT_WORK.admitted(ctx, "vault.lint"), VAULT_WORK.turn():
        async with live.held_still():
            paths = await anyio.to_thread.run_sync(document_paths, live.index, entry, view)
        read = await anyio.to_thread.run_sync(read_documents, runtime.root, paths)
        async with live.held_still():
            return await anyio.to_thread.run_sync(work)
